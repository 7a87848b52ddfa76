package io.strata.server.replica;

import io.strata.storage.TopicPartition;

import java.util.List;
import java.util.Optional;

/**
 * Kafka's {@code org.apache.kafka.common.replica.RackAwareReplicaSelector}: a client with a rack
 * ({@code client.rack}) is sent to a replica on that rack: the leader if it is there, otherwise
 * the most caught-up one there ({@link ReplicaSelector.ReplicaView#MOST_CAUGHT_UP_LAST}). With no
 * rack, or none of the candidates on it, the leader.
 *
 * <p>Stateless and thread-safe.
 */
public final class RackAwareReplicaSelector implements ReplicaSelector {
    @Override
    public Optional<ReplicaView> select(TopicPartition topicPartition, ClientMetadata client, PartitionView partition) {
        String rack = client.rackId();
        if (rack.isEmpty()) {
            return Optional.of(partition.leader());
        }
        if (rack.equals(partition.leader().rack())) {
            return Optional.of(partition.leader());
        }
        List<ReplicaView> sameRack = partition.replicas().stream().filter(replica -> rack.equals(replica.rack())).toList();
        if (sameRack.isEmpty()) {
            return Optional.of(partition.leader());
        }
        return sameRack.stream().max(ReplicaView.MOST_CAUGHT_UP_LAST);
    }
}
