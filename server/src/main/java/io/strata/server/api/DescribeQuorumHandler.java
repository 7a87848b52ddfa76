package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataRecords;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DescribeQuorumRequestData;
import io.strata.protocol.message.DescribeQuorumResponseData;
import io.strata.server.network.Request;

/**
 * DescribeQuorum (KIP-595, v1 timestamps, v2 directory ids and nodes of KIP-853): the metadata
 * quorum as this node's replica sees it ({@link io.strata.raft.RaftNode#describeQuorum()}): the
 * leader reports every voter's and observer's progress. v2's nodes list the voters' listeners as
 * their broker registrations give them. A request for anything but {@code __cluster_metadata-0} gets
 * UNKNOWN_TOPIC_OR_PARTITION on each partition asked for, with Kafka's message.
 */
final class DescribeQuorumHandler implements ApiHandler {
    private final BrokerContext context;

    DescribeQuorumHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        DescribeQuorumRequestData body = request.body(DescribeQuorumRequestData.class);
        boolean metadataPartitionOnly = body.topics().size() == 1 && body.topics().get(0).topicName().equals(MetadataRecords.TOPIC)
            && body.topics().get(0).partitions().size() == 1 && body.topics().get(0).partitions().get(0).partitionIndex() == 0;
        if (!metadataPartitionOnly) {
            request.respond(unknownPartitions(body));
            return;
        }
        if (context.forwarder() != null && !context.quorum().isLeader()) {
            // Only the leader knows every replica's progress: the request goes to it.
            context.forwarder().<DescribeQuorumResponseData>call(ApiMessageType.DESCRIBE_QUORUM, request.apiVersion(), body,
                answer -> answer.errorCode() == ErrorCode.NOT_CONTROLLER.code() || answer.topics().stream().flatMap(topic -> topic.partitions().stream())
                    .anyMatch(partition -> partition.errorCode() == ErrorCode.NOT_LEADER_OR_FOLLOWER.code()),
                context.forwarder().requestTimeoutMs()).whenComplete((response, failure) -> request.respond(
                failure == null ? response : new DescribeQuorumResponseData().setErrorCode(ControllerErrors.of(failure).code())
                    .setErrorMessage(failure.getMessage())));
            return;
        }
        context.quorum().describeQuorum().whenComplete((partition, failure) -> {
            DescribeQuorumResponseData response = new DescribeQuorumResponseData().setErrorMessage("");
            if (failure != null) {
                request.respond(response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()).setErrorMessage(failure.getMessage()));
                return;
            }
            // Directory ids and nodes are v2+ fields that cannot be dropped silently: older versions must leave them unset.
            boolean v2 = request.apiVersion() >= 2;
            // A dynamic quorum's replicas carry their directory ids (the voter set's, the observers' Fetch); a static one's only this node's.
            for (DescribeQuorumResponseData.ReplicaState replica : partition.currentVoters()) {
                boolean unknown = replica.replicaDirectoryId() == null || replica.replicaDirectoryId().equals(Uuids.ZERO);
                replica.setReplicaDirectoryId(!v2 ? Uuids.ZERO : unknown && replica.replicaId() == context.nodeId() ? context.metadataDirectoryId()
                    : unknown ? Uuids.ZERO : replica.replicaDirectoryId());
            }
            for (DescribeQuorumResponseData.ReplicaState replica : partition.observers()) {
                if (!v2 || replica.replicaDirectoryId() == null) {
                    replica.setReplicaDirectoryId(Uuids.ZERO);
                }
            }
            response.topics().add(new DescribeQuorumResponseData.TopicData().setTopicName(MetadataRecords.TOPIC).setPartitions(
                new java.util.ArrayList<>(java.util.List.of(partition))));
            if (!v2) {
                request.respond(response);
                return;
            }
            java.util.Set<Integer> described = new java.util.HashSet<>();
            for (DescribeQuorumResponseData.ReplicaState voter : partition.currentVoters()) {
                if (!described.add(voter.replicaId())) {
                    continue;
                }
                DescribeQuorumResponseData.Node node = new DescribeQuorumResponseData.Node().setNodeId(voter.replicaId());
                BrokerRegistration registration = context.image().brokers().get(voter.replicaId());
                java.util.Optional<io.strata.raft.VoterSet.Voter> dynamicVoter = context.quorum().publishedVoterSet().voter(voter.replicaId());
                if (dynamicVoter.isPresent() && !dynamicVoter.get().endpoints().isEmpty()) {
                    // KIP-853: the voter's own endpoints from the voter set in the log
                    for (io.strata.raft.VoterSet.Endpoint endpoint : dynamicVoter.get().endpoints()) {
                        node.listeners().add(new DescribeQuorumResponseData.Listener().setName(endpoint.listener()).setHost(endpoint.host())
                            .setPort(endpoint.port()));
                    }
                } else if (registration != null) {
                    for (BrokerRegistration.Endpoint endpoint : registration.endpoints()) {
                        node.listeners().add(new DescribeQuorumResponseData.Listener().setName(endpoint.listenerName()).setHost(endpoint.host())
                            .setPort(endpoint.port()));
                    }
                }
                response.nodes().add(node);
            }
            request.respond(response);
        });
    }

    private static DescribeQuorumResponseData unknownPartitions(DescribeQuorumRequestData body) {
        DescribeQuorumResponseData response = new DescribeQuorumResponseData().setErrorMessage("");
        for (DescribeQuorumRequestData.TopicData topic : body.topics()) {
            DescribeQuorumResponseData.TopicData topicData = new DescribeQuorumResponseData.TopicData().setTopicName(topic.topicName());
            for (DescribeQuorumRequestData.PartitionData partition : topic.partitions()) {
                topicData.partitions().add(new DescribeQuorumResponseData.PartitionData().setPartitionIndex(partition.partitionIndex())
                    .setErrorCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code()).setErrorMessage("This server does not host this topic-partition.")
                    .setLeaderId(0).setLeaderEpoch(0).setHighWatermark(0));
            }
            response.topics().add(topicData);
        }
        return response;
    }
}
