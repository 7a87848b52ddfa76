package io.strata.server.replica;

import io.strata.storage.ThrottledReplicaListValidator;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Parses a {@code leader.replication.throttled.replicas} / {@code follower.replication.throttled.replicas}
 * value (already validated by {@link ThrottledReplicaListValidator}) into the partitions one broker
 * throttles, as Kafka's {@code TopicConfigHandler.parseThrottledPartitions}: {@code *} → {@link #ALL};
 * otherwise the partition ids of the {@code partition:broker} entries naming that broker.
 *
 * <p>Stateless; safe from any thread.
 */
public final class ThrottledReplicas {
    /** The marker set meaning every partition of the topic (compared by identity). */
    public static final Set<Integer> ALL = Set.of(-1);

    private ThrottledReplicas() {
    }

    /** The partitions {@code brokerId} throttles, {@link #ALL}, or an empty set. */
    public static Set<Integer> partitionsOf(List<String> throttledReplicas, int brokerId) {
        if (throttledReplicas.size() == 1 && throttledReplicas.get(0).trim().equals(ThrottledReplicaListValidator.ALL_REPLICAS)) {
            return ALL;
        }
        Set<Integer> partitions = new LinkedHashSet<>();
        for (String entry : throttledReplicas) {
            String trimmed = entry.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            int colon = trimmed.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("not a partition:broker entry (validation should have refused it): " + trimmed);
            }
            if (Integer.parseInt(trimmed.substring(colon + 1)) == brokerId) {
                partitions.add(Integer.parseInt(trimmed.substring(0, colon)));
            }
        }
        return partitions;
    }
}
