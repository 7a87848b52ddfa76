package io.strata.server.api;

import io.strata.common.Time;
import io.strata.metadata.Controller;
import io.strata.metadata.MetadataImage;
import io.strata.protocol.ApiVersionsTable;
import io.strata.server.config.ServerConfig;
import io.strata.server.replica.ReplicaManager;

/**
 * What API handlers share: configuration, the controller (and through it the current
 * metadata image), the replica manager, the advertised versions and the cluster identity
 * ({@code metadataDirectoryId} is the {@code directory.id} of the metadata log's directory: this
 * voter's id in DescribeQuorum).
 */
public record BrokerContext(ServerConfig config, int nodeId, String clusterId, Controller controller, ReplicaManager replicaManager,
                            ApiVersionsTable apiVersions, Features features, ProducerIdManager producerIds, Time time,
                            io.strata.coordinator.group.GroupCoordinator groupCoordinator, InternalTopic offsetsTopic,
                            io.strata.coordinator.transaction.TransactionCoordinator transactionCoordinator, InternalTopic transactionStateTopic,
                            java.util.UUID metadataDirectoryId) {
    public MetadataImage image() {
        return controller.image();
    }
}
