package io.strata.chaos.history;

import java.util.List;
import java.util.Objects;

/**
 * The value of an {@code assign}: the partitions a consumer (the process) owns in one generation of its
 * group. For the classic protocol the generation is the group's generation id; for the consumer protocol
 * (KIP-848) workloads record the group epoch of the assignment.
 *
 * @param group the group id
 * @param generation the generation
 * @param partitions the partitions assigned, as {@code topic-index}
 */
public record AssignValue(String group, int generation, List<String> partitions) implements OpValue {
    public AssignValue {
        Objects.requireNonNull(group, "group");
        partitions = List.copyOf(partitions);
    }
}
