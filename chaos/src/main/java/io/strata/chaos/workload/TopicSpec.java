package io.strata.chaos.workload;

import java.util.Map;
import java.util.Objects;

/**
 * A topic a workload needs.
 *
 * @param name the topic name
 * @param partitions the partition count
 * @param replicationFactor the replication factor
 * @param configs topic configs (e.g. {@code min.insync.replicas=2})
 */
public record TopicSpec(String name, int partitions, short replicationFactor, Map<String, String> configs) {
    public TopicSpec {
        Objects.requireNonNull(name, "name");
        configs = Map.copyOf(configs);
        if (partitions < 1 || replicationFactor < 1) {
            throw new IllegalArgumentException("partitions and replicationFactor must be >= 1: " + partitions + ", " + replicationFactor);
        }
    }
}
