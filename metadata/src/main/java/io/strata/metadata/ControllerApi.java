package io.strata.metadata;

import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.message.AssignReplicasToDirsRequestData;
import io.strata.protocol.message.AssignReplicasToDirsResponseData;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.BrokerRegistrationResponseData;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreatePartitionsResponseData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.protocol.message.UnregisterBrokerResponseData;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * What the rest of a node asks of the controller. Every method returns at once; the future
 * completes once the change is committed to the metadata quorum (and, where the controller runs
 * in this process, applied to this node's image), or fails with {@link NotControllerException}
 * when no active controller took it. Implementations: {@link QuorumController} in-process, and
 * the server's RPC client to the active controller elsewhere.
 */
public interface ControllerApi {
    /** Producer ids are handed out in blocks, as Kafka's controller does. */
    int PRODUCER_ID_BLOCK_SIZE = 1000;

    /** Creates topics (or only validates them); one result per requested topic, in order. */
    CompletableFuture<List<CreateTopicsResponseData.CreatableTopicResult>> createTopics(List<CreateTopicsRequestData.CreatableTopic> topics,
                                                                                      boolean validateOnly);

    /** The outcome of deleting one topic. */
    record DeleteResult(String name, UUID topicId, io.strata.protocol.ErrorCode error, String message) {
    }

    /** Deletes topics named by name or by id (a null name means by id); lists of the same length. */
    CompletableFuture<List<DeleteResult>> deleteTopics(List<String> names, List<UUID> ids);

    /** Adds partitions to topics. */
    CompletableFuture<List<CreatePartitionsResponseData.CreatePartitionsTopicResult>> createPartitions(
        List<CreatePartitionsRequestData.CreatePartitionsTopic> topics, boolean validateOnly);

    /** One change to a dynamic configuration: a value to set, or null to remove the key. */
    record ConfigChange(ConfigResource resource, String name, String value) {
    }

    /** Validated config changes, applied together. Validation is the caller's (it knows the resource types). */
    CompletableFuture<Void> alterConfigs(List<ConfigChange> changes);

    /** A block of {@link #PRODUCER_ID_BLOCK_SIZE} producer ids never handed out before, for this broker; returns its first id. */
    CompletableFuture<Long> allocateProducerIds(int brokerId, long brokerEpoch);

    /** BrokerRegistration: a broker's start; answers its new epoch (registered fenced). */
    CompletableFuture<BrokerRegistrationResponseData> registerBroker(BrokerRegistrationRequestData request);

    /** BrokerHeartbeat: keeps the session, unfences a caught-up broker, runs a controlled shutdown. */
    CompletableFuture<BrokerHeartbeatResponseData> brokerHeartbeat(BrokerHeartbeatRequestData request);

    /**
     * AssignReplicasToDirs (key 73, v0; KIP-858) from a broker. Strata's controller does not keep
     * replica directories yet ({@code PartitionRecord.Directories} is unused): it acts only on
     * assignments to a directory the broker reported offline in its heartbeats, taking those
     * replicas offline as Kafka's controller does (the broker leaves their ISRs, the partitions it
     * led get another leader); assignments to other directories are answered NONE and not recorded.
     */
    default CompletableFuture<AssignReplicasToDirsResponseData> assignReplicasToDirs(AssignReplicasToDirsRequestData request) {
        // A default so test doubles keep compiling; both real implementations override it.
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName() + " does not serve AssignReplicasToDirs"));
    }

    /**
     * UnregisterBroker: removes a broker's registration (it leaves the ISRs and leaderships it
     * held, as when fenced); BROKER_ID_NOT_REGISTERED if no broker of that id is registered.
     */
    CompletableFuture<UnregisterBrokerResponseData> unregisterBroker(int brokerId);

    /**
     * AlterPartition (key 56, v2-3) from a partition leader: ISR changes and leader recovery
     * state, validated and answered as Kafka's controller does (see
     * {@link ReplicationControl#alterPartition}). A top-level STALE_BROKER_EPOCH or NOT_CONTROLLER
     * answers nothing per partition; {@code version} selects the version-dependent error codes.
     */
    default CompletableFuture<AlterPartitionResponseData> alterPartition(AlterPartitionRequestData request, short version) {
        // A default so test doubles written before AlterPartition keep compiling; both real implementations override it.
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName() + " does not serve AlterPartition"));
    }

    /**
     * ElectLeaders (key 43, v0-2): preferred or unclean elections, answered per partition as
     * Kafka's controller does (see {@link LeaderElections}); completes once the elections are
     * committed. A null topic list means every partition. An unknown election type fails the
     * future with {@link IllegalArgumentException} (the handler answers INVALID_REQUEST).
     */
    default CompletableFuture<io.strata.protocol.message.ElectLeadersResponseData> electLeaders(io.strata.protocol.message.ElectLeadersRequestData request) {
        // A default so test doubles written before ElectLeaders keep compiling; both real implementations override it.
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName() + " does not serve ElectLeaders"));
    }

    /**
     * AlterPartitionReassignments (key 45, v0-1): starts, changes or (null replicas) cancels
     * reassignments, answered per partition as Kafka's controller does (see
     * {@link PartitionReassignments}); completes once the changes are committed.
     */
    default CompletableFuture<io.strata.protocol.message.AlterPartitionReassignmentsResponseData> alterPartitionReassignments(
        io.strata.protocol.message.AlterPartitionReassignmentsRequestData request) {
        // A default so test doubles keep compiling; both real implementations override it.
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName() + " does not serve AlterPartitionReassignments"));
    }

    /** ListPartitionReassignments (key 46): the running reassignments (see {@link PartitionReassignments#list}). */
    default CompletableFuture<io.strata.protocol.message.ListPartitionReassignmentsResponseData> listPartitionReassignments(
        io.strata.protocol.message.ListPartitionReassignmentsRequestData request) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName() + " does not serve ListPartitionReassignments"));
    }

    /**
     * CreateAcls (key 30): validated and written by the active controller, answered per creation
     * ({@link io.strata.metadata.authorizer.AclControl#createAcls}); completes once committed.
     */
    default CompletableFuture<io.strata.protocol.message.CreateAclsResponseData> createAcls(io.strata.protocol.message.CreateAclsRequestData request) {
        // A default so test doubles keep compiling; both real implementations override it.
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName() + " does not serve CreateAcls"));
    }

    /** DeleteAcls (key 31): every ACL each filter matches is removed ({@link io.strata.metadata.authorizer.AclControl#deleteAcls}). */
    default CompletableFuture<io.strata.protocol.message.DeleteAclsResponseData> deleteAcls(io.strata.protocol.message.DeleteAclsRequestData request) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName() + " does not serve DeleteAcls"));
    }

    /** UpdateFeatures; see {@link FeatureUpdates}. */
    CompletableFuture<FeatureUpdates.Result> updateFeatures(Map<String, FeatureUpdates.Update> updates, Map<String, short[]> supported,
                                                            boolean validateOnly);
}
