package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;

import java.util.ArrayList;
import java.util.List;

/**
 * What Metadata and DescribeTopicPartitions report of a partition's leader and offline replicas:
 * one rule for both, Kafka's KRaft metadata cache's.
 *
 * <ul>
 *   <li>The leader is reported when it is a registered broker with an endpoint on the request's
 *       listener, fenced or not: Kafka looks only at the registration and its listeners there. (A
 *       fenced leader is rare: the controller moves leadership off a broker in the batch that
 *       fences it.) Otherwise the leader is -1, and the reason is {@link Leader#NOT_AVAILABLE}
 *       (no leader, or one that is not registered) or {@link Leader#NO_LISTENER} (registered
 *       without that listener).</li>
 *   <li>Metadata's partition error: NONE, LEADER_NOT_AVAILABLE, or for a missing listener
 *       LISTENER_NOT_FOUND from v6 on (LEADER_NOT_AVAILABLE before). DescribeTopicPartitions
 *       carries no partition error: Kafka leaves it NONE even without a leader.</li>
 *   <li>Offline replicas: replicas whose broker is not registered, is fenced or has no endpoint on
 *       the listener (Kafka's {@code isReplicaOffline}; Strata has one log directory per broker
 *       in the image, so no replica is in an offline directory).</li>
 * </ul>
 * Stateless; reads the image it is given.
 */
final class PartitionLeaders {
    /** Whether a partition's leader can be reported on a listener. */
    enum Leader {
        AVAILABLE, NOT_AVAILABLE, NO_LISTENER
    }

    /** Metadata v6 is the first to tell a missing listener apart (KIP-291's LISTENER_NOT_FOUND). */
    static final short FIRST_METADATA_VERSION_WITH_LISTENER_NOT_FOUND = 6;

    private PartitionLeaders() {
    }

    static Leader leader(MetadataImage image, PartitionRegistration partition, String listenerName) {
        BrokerRegistration leader = partition.hasLeader() ? image.brokers().get(partition.leader()) : null;
        if (leader == null) {
            return Leader.NOT_AVAILABLE;
        }
        return leader.endpoint(listenerName) == null ? Leader.NO_LISTENER : Leader.AVAILABLE;
    }

    /** The leader id to report: the partition's leader if {@link Leader#AVAILABLE}, else -1. */
    static int reportedLeaderId(MetadataImage image, PartitionRegistration partition, String listenerName) {
        return leader(image, partition, listenerName) == Leader.AVAILABLE ? partition.leader() : PartitionRegistration.NO_LEADER;
    }

    /** Metadata's partition error at {@code version}. */
    static ErrorCode metadataError(Leader leader, short version) {
        return switch (leader) {
            case AVAILABLE -> ErrorCode.NONE;
            case NOT_AVAILABLE -> ErrorCode.LEADER_NOT_AVAILABLE;
            case NO_LISTENER -> version >= FIRST_METADATA_VERSION_WITH_LISTENER_NOT_FOUND ? ErrorCode.LISTENER_NOT_FOUND
                : ErrorCode.LEADER_NOT_AVAILABLE;
        };
    }

    static List<Integer> offlineReplicas(MetadataImage image, PartitionRegistration partition, String listenerName) {
        List<Integer> offline = new ArrayList<>(0);
        for (int replica : partition.replicas()) {
            BrokerRegistration broker = image.brokers().get(replica);
            if (broker == null || broker.fenced() || broker.endpoint(listenerName) == null) {
                offline.add(replica);
            }
        }
        return offline;
    }
}
