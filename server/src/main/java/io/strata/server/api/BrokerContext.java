package io.strata.server.api;

import io.strata.common.Time;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.MetadataLoader;
import io.strata.metadata.MetadataImage;
import io.strata.protocol.ApiVersionsTable;
import io.strata.server.config.ServerConfig;
import io.strata.server.replica.ReplicaManager;

/**
 * What API handlers share: configuration, the controller, this node's metadata (the current
 * image) and its replica of the metadata quorum, the replica manager, the advertised versions and the cluster identity
 * ({@code metadataDirectoryId} is the {@code directory.id} of the metadata log's directory: this
 * voter's id in DescribeQuorum). {@code forwarder} reaches the active controller over the network
 * (null on a single node, whose controller is always the local one). {@code authorization} is
 * the configured authorizer ({@link io.strata.server.security.Authorization#NONE} without one).
 */
public record BrokerContext(ServerConfig config, int nodeId, String clusterId, ControllerApi controller, ReplicaManager replicaManager,
                            ApiVersionsTable apiVersions, Features features, ProducerIdManager producerIds, Time time,
                            io.strata.coordinator.group.GroupCoordinator groupCoordinator, InternalTopic offsetsTopic,
                            io.strata.coordinator.transaction.TransactionCoordinator transactionCoordinator, InternalTopic transactionStateTopic,
                            java.util.UUID metadataDirectoryId, MetadataLoader metadata, io.strata.raft.RaftNode quorum,
                            io.strata.server.cluster.RemoteController forwarder, io.strata.server.security.Authorization authorization) {
    public MetadataImage image() {
        return metadata.image();
    }
}
