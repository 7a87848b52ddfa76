package io.strata.server.api;

import io.strata.metadata.ConfigResource;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.QuorumController;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AllocateProducerIdsRequestData;
import io.strata.protocol.message.AllocateProducerIdsResponseData;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.BeginQuorumEpochRequestData;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import io.strata.protocol.message.EndQuorumEpochRequestData;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchSnapshotRequestData;
import io.strata.protocol.message.IncrementalAlterConfigsRequestData;
import io.strata.protocol.message.IncrementalAlterConfigsResponseData;
import io.strata.protocol.message.VoteRequestData;
import io.strata.raft.RaftNode;
import io.strata.server.network.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The APIs a node serves on its controller listeners ({@code controller.listener.names}), as a
 * Kafka controller does: the quorum's own RPCs (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch of
 * {@code __cluster_metadata}, FetchSnapshot) handed to this node's replica; DescribeQuorum; and
 * what brokers ask of the active controller (BrokerRegistration, BrokerHeartbeat, CreateTopics,
 * DeleteTopics, CreatePartitions, IncrementalAlterConfigs, AllocateProducerIds, UpdateFeatures,
 * UnregisterBroker, AlterPartition, ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments); and the voter changes of KIP-853 (AddRaftVoter, RemoveRaftVoter from
 * operators; UpdateRaftVoter from voters).
 * A controller that is not the active one answers NOT_CONTROLLER; the broker then asks the leader.
 */
public final class ControllerApis {
    private static final Logger LOG = LoggerFactory.getLogger(ControllerApis.class);

    private ControllerApis() {
    }

    /** The versions a controller listener advertises. */
    public static ApiVersionsTable apiVersions() {
        return ApiVersionsTable.builder()
            .add(ApiMessageType.API_VERSIONS, 0, 4)
            .add(ApiMessageType.VOTE, 0, 2)
            .add(ApiMessageType.BEGIN_QUORUM_EPOCH, 0, 1)
            .add(ApiMessageType.END_QUORUM_EPOCH, 0, 1)
            .add(ApiMessageType.FETCH, 13, 17)
            .add(ApiMessageType.FETCH_SNAPSHOT, 0, 1)
            .add(ApiMessageType.DESCRIBE_QUORUM, 0, 2)
            .add(ApiMessageType.ADD_RAFT_VOTER, 0, 1)
            .add(ApiMessageType.REMOVE_RAFT_VOTER, 0, 0)
            .add(ApiMessageType.UPDATE_RAFT_VOTER, 0, 0)
            .add(ApiMessageType.BROKER_REGISTRATION, 0, 4)
            .add(ApiMessageType.BROKER_HEARTBEAT, 0, 1)
            .add(ApiMessageType.ASSIGN_REPLICAS_TO_DIRS, 0, 0)
            .add(ApiMessageType.CREATE_TOPICS, 2, 7)
            .add(ApiMessageType.DELETE_TOPICS, 1, 6)
            .add(ApiMessageType.CREATE_PARTITIONS, 0, 3)
            .add(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, 0, 1)
            .add(ApiMessageType.ALLOCATE_PRODUCER_IDS, 0, 0)
            .add(ApiMessageType.UPDATE_FEATURES, 0, 2)
            .add(ApiMessageType.UNREGISTER_BROKER, 0, 0)
            .add(ApiMessageType.ALTER_PARTITION, 2, 3)
            .add(ApiMessageType.ELECT_LEADERS, 0, 2)
            .add(ApiMessageType.ALTER_PARTITION_REASSIGNMENTS, 0, 1)
            .add(ApiMessageType.LIST_PARTITION_REASSIGNMENTS, 0, 0)
            .add(ApiMessageType.DESCRIBE_CLUSTER, 0, 2)
            .add(ApiMessageType.CREATE_ACLS, 1, 3)
            .add(ApiMessageType.DELETE_ACLS, 1, 3)
            .build();
    }

    /**
     * @param context a context whose controller is the local {@link QuorumController} and whose quorum is this node's replica
     */
    public static Map<ApiMessageType, ApiHandler> create(BrokerContext context, QuorumController controller, RaftNode quorum,
                                                         java.util.function.Supplier<List<io.strata.server.network.client.InterBrokerClient.Endpoint>> voters) {
        Map<ApiMessageType, ApiHandler> handlers = new EnumMap<>(ApiMessageType.class);
        handlers.put(ApiMessageType.DESCRIBE_CLUSTER, request -> request.respond(describeCluster(request, context, quorum, voters.get())));
        handlers.put(ApiMessageType.API_VERSIONS, new ApiVersionsHandler(context));
        handlers.put(ApiMessageType.VOTE, quorumRpc(quorum, body -> ((VoteRequestData) body).topics().isEmpty() || ((VoteRequestData) body).topics()
            .get(0).partitions().isEmpty() ? -1 : ((VoteRequestData) body).topics().get(0).partitions().get(0).replicaId()));
        handlers.put(ApiMessageType.BEGIN_QUORUM_EPOCH, quorumRpc(quorum, body -> firstLeaderId((BeginQuorumEpochRequestData) body)));
        handlers.put(ApiMessageType.END_QUORUM_EPOCH, quorumRpc(quorum, body -> endLeaderId((EndQuorumEpochRequestData) body)));
        handlers.put(ApiMessageType.FETCH, quorumRpc(quorum, body -> ((FetchRequestData) body).replicaState().replicaId()));
        handlers.put(ApiMessageType.FETCH_SNAPSHOT, quorumRpc(quorum, body -> ((FetchSnapshotRequestData) body).replicaId()));
        handlers.put(ApiMessageType.DESCRIBE_QUORUM, new DescribeQuorumHandler(context));
        handlers.put(ApiMessageType.ADD_RAFT_VOTER, RaftVoterHandlers.addVoter(context, quorum));
        handlers.put(ApiMessageType.REMOVE_RAFT_VOTER, RaftVoterHandlers.removeVoter(context, quorum));
        handlers.put(ApiMessageType.UPDATE_RAFT_VOTER, quorumRpc(quorum, body -> ((io.strata.protocol.message.UpdateRaftVoterRequestData) body).voterId()));
        handlers.put(ApiMessageType.BROKER_REGISTRATION, request -> controller.registerBroker(request.body(BrokerRegistrationRequestData.class))
            .whenComplete((response, failure) -> request.respond(failure == null ? response
                : new BrokerRegistrationResponseData().setErrorCode(ControllerErrors.of(failure).code()).setBrokerEpoch(-1))));
        // The connection of each heartbeat is named, and its close reported after it: a killed broker's closed connection
        // fences it after strata.broker.disconnect.fence.ms instead of broker.session.timeout.ms (a Strata addition).
        HeartbeatConnectionWatcher heartbeatConnections = new HeartbeatConnectionWatcher(controller::connectionClosed);
        handlers.put(ApiMessageType.BROKER_HEARTBEAT, request -> {
            controller.brokerHeartbeat(request.body(BrokerHeartbeatRequestData.class), request.connectionId())
                .whenComplete((response, failure) -> request.respond(failure == null ? response
                    : new BrokerHeartbeatResponseData().setErrorCode(ControllerErrors.of(failure).code()).setIsFenced(true)));
            heartbeatConnections.watch(request);
        });
        handlers.put(ApiMessageType.ASSIGN_REPLICAS_TO_DIRS, request -> controller.assignReplicasToDirs(
                request.body(io.strata.protocol.message.AssignReplicasToDirsRequestData.class))
            .whenComplete((response, failure) -> request.respond(failure == null ? response
                : new io.strata.protocol.message.AssignReplicasToDirsResponseData().setErrorCode(ControllerErrors.of(failure).code()))));
        handlers.put(ApiMessageType.ALLOCATE_PRODUCER_IDS, request -> {
            AllocateProducerIdsRequestData body = request.body(AllocateProducerIdsRequestData.class);
            controller.allocateProducerIds(body.brokerId(), body.brokerEpoch()).whenComplete((first, failure) -> request.respond(failure == null
                ? new AllocateProducerIdsResponseData().setProducerIdStart(first).setProducerIdLen(ControllerApi.PRODUCER_ID_BLOCK_SIZE)
                : new AllocateProducerIdsResponseData().setErrorCode(ControllerErrors.of(failure).code()).setProducerIdStart(-1)));
        });
        handlers.put(ApiMessageType.CREATE_TOPICS, new CreateTopicsHandler(context));
        handlers.put(ApiMessageType.DELETE_TOPICS, new DeleteTopicsHandler(context));
        handlers.put(ApiMessageType.CREATE_PARTITIONS, new CreatePartitionsHandler(context));
        handlers.put(ApiMessageType.UPDATE_FEATURES, new UpdateFeaturesHandler(context));
        handlers.put(ApiMessageType.UNREGISTER_BROKER, new UnregisterBrokerHandler(context));
        handlers.put(ApiMessageType.ELECT_LEADERS, new ElectLeadersHandler(context));
        handlers.put(ApiMessageType.ALTER_PARTITION_REASSIGNMENTS, PartitionReassignmentsHandler.alter(context));
        handlers.put(ApiMessageType.LIST_PARTITION_REASSIGNMENTS, PartitionReassignmentsHandler.list(context));
        handlers.put(ApiMessageType.ALTER_PARTITION, new AlterPartitionHandler(controller));
        handlers.put(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, request -> alterConfigs(controller, request));
        // Forwarded ACL changes: the broker authorized them; the controller validates and writes them.
        handlers.put(ApiMessageType.CREATE_ACLS, request -> controller.createAcls(request.body(io.strata.protocol.message.CreateAclsRequestData.class))
            .whenComplete((response, failure) -> request.respond(failure == null ? response : aclFailure(failure, request))));
        handlers.put(ApiMessageType.DELETE_ACLS, request -> controller.deleteAcls(request.body(io.strata.protocol.message.DeleteAclsRequestData.class))
            .whenComplete((response, failure) -> request.respond(failure == null ? response : aclFailure(failure, request))));
        return handlers;
    }

    /**
     * DescribeCluster on a controller listener (KIP-919, what Admin's {@code bootstrap.controllers}
     * asks first): endpoint type 2 lists the controllers (the voters' controller endpoints) and
     * the active one; brokers (type 1) are described by brokers, so a controller answers that with
     * MISMATCHED_ENDPOINT_TYPE, as Kafka's does.
     */
    private static io.strata.protocol.message.DescribeClusterResponseData describeCluster(Request request, BrokerContext context, RaftNode quorum,
                                                                                         List<io.strata.server.network.client.InterBrokerClient.Endpoint> voters) {
        var body = request.body(io.strata.protocol.message.DescribeClusterRequestData.class);
        var response = new io.strata.protocol.message.DescribeClusterResponseData().setClusterId(context.clusterId())
            .setControllerId(quorum.leaderId()).setEndpointType((byte) 2).setClusterAuthorizedOperations(Integer.MIN_VALUE);
        if (request.apiVersion() >= 1 && body.endpointType() != 2) {
            return response.setErrorCode(ErrorCode.MISMATCHED_ENDPOINT_TYPE.code()).setEndpointType(body.endpointType())
                .setErrorMessage("The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER");
        }
        if (request.apiVersion() < 1) {
            return response.setErrorCode(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE.code()).setErrorMessage("Controllers are described from version 1 on");
        }
        for (io.strata.server.network.client.InterBrokerClient.Endpoint voter : voters) {
            response.brokers().add(new io.strata.protocol.message.DescribeClusterResponseData.DescribeClusterBroker().setBrokerId(voter.nodeId())
                .setHost(voter.host()).setPort(voter.port()).setRack(null));
        }
        return response;
    }

    /** A failed CreateAcls / DeleteAcls (NOT_CONTROLLER mostly): the error on every creation or filter. */
    private static ApiMessage aclFailure(Throwable failure, Request request) {
        ErrorCode error = ControllerErrors.of(failure);
        if (request.body() instanceof io.strata.protocol.message.CreateAclsRequestData create) {
            var response = new io.strata.protocol.message.CreateAclsResponseData();
            create.creations().forEach(c -> response.results().add(new io.strata.protocol.message.CreateAclsResponseData.AclCreationResult()
                .setErrorCode(error.code()).setErrorMessage(ControllerErrors.message(failure))));
            return response;
        }
        var delete = (io.strata.protocol.message.DeleteAclsRequestData) request.body();
        var response = new io.strata.protocol.message.DeleteAclsResponseData();
        delete.filters().forEach(f -> response.filterResults().add(new io.strata.protocol.message.DeleteAclsResponseData.DeleteAclsFilterResult()
            .setErrorCode(error.code()).setErrorMessage(ControllerErrors.message(failure))));
        return response;
    }

    private static int firstLeaderId(BeginQuorumEpochRequestData body) {
        return body.topics().isEmpty() || body.topics().get(0).partitions().isEmpty() ? -1 : body.topics().get(0).partitions().get(0).leaderId();
    }

    private static int endLeaderId(EndQuorumEpochRequestData body) {
        return body.topics().isEmpty() || body.topics().get(0).partitions().isEmpty() ? -1 : body.topics().get(0).partitions().get(0).leaderId();
    }

    /** A quorum RPC: the body goes to this node's replica; its answer (computed on the quorum's thread) goes back. */
    private static ApiHandler quorumRpc(RaftNode quorum, java.util.function.ToIntFunction<ApiMessage> source) {
        return request -> {
            ApiMessage body = request.body();
            quorum.handleRequest(source.applyAsInt(body), body).whenComplete((response, failure) -> {
                if (failure != null) {
                    // The replica is busy or stopping: the peer times the request out and sends it again, as after a lost message.
                    request.closeConnection("the metadata quorum could not take " + request.header().api().apiName + ": " + failure.getMessage());
                } else {
                    request.respond(response);
                }
            });
        };
    }

    /**
     * IncrementalAlterConfigs as brokers send it to the controller: SET and DELETE operations a
     * broker has already validated against the configuration tables, applied as one batch.
     */
    private static void alterConfigs(QuorumController controller, Request request) {
        IncrementalAlterConfigsRequestData body = request.body(IncrementalAlterConfigsRequestData.class);
        List<ControllerApi.ConfigChange> changes = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource resource : body.resources()) {
            ConfigResource target = new ConfigResource(resource.resourceType(), resource.resourceName());
            for (IncrementalAlterConfigsRequestData.AlterableConfig config : resource.configs()) {
                changes.add(new ControllerApi.ConfigChange(target, config.name(), config.configOperation() == 1 ? null : config.value()));
            }
        }
        controller.alterConfigs(changes).whenComplete((ignored, failure) -> {
            IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
            ErrorCode error = failure == null ? ErrorCode.NONE : ControllerErrors.of(failure);
            if (failure != null && error == ErrorCode.UNKNOWN_SERVER_ERROR) {
                LOG.warn("Config change from a broker failed", failure);
            }
            for (IncrementalAlterConfigsRequestData.AlterConfigsResource resource : body.resources()) {
                response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse().setResourceType(resource.resourceType())
                    .setResourceName(resource.resourceName()).setErrorCode(error.code()).setErrorMessage(failure == null ? null : ControllerErrors.message(failure)));
            }
            request.respond(response);
        });
    }
}
