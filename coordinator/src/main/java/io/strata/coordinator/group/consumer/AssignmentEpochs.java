package io.strata.coordinator.group.consumer;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The member epoch at which each of a member's partitions was assigned to it (KIP-1251). An
 * offset commit carrying an older member epoch than the member's current one is still valid
 * for a partition assigned at or before that epoch: the member's epoch moved on while the
 * commit was in flight, but the partition did not change hands. Immutable.
 */
public final class AssignmentEpochs {
    public static final AssignmentEpochs EMPTY = new AssignmentEpochs(new TreeMap<>());

    private final SortedMap<UUID, SortedMap<Integer, Integer>> epochs;

    private AssignmentEpochs(SortedMap<UUID, SortedMap<Integer, Integer>> epochs) {
        this.epochs = epochs;
    }

    public static AssignmentEpochs of(Map<UUID, ? extends Map<Integer, Integer>> epochs) {
        SortedMap<UUID, SortedMap<Integer, Integer>> copy = new TreeMap<>();
        for (Map.Entry<UUID, ? extends Map<Integer, Integer>> topic : epochs.entrySet()) {
            if (!topic.getValue().isEmpty()) {
                copy.put(topic.getKey(), Collections.unmodifiableSortedMap(new TreeMap<>(topic.getValue())));
            }
        }
        return copy.isEmpty() ? EMPTY : new AssignmentEpochs(Collections.unmodifiableSortedMap(copy));
    }

    /** Every partition of {@code partitions} at {@code epoch}. */
    public static AssignmentEpochs uniform(Assignment partitions, int epoch) {
        return EMPTY.extendTo(partitions, epoch);
    }

    /** The epoch {@code topicId}-{@code partition} was assigned at, or null if it is not the member's. */
    public Integer epoch(UUID topicId, int partition) {
        SortedMap<Integer, Integer> topic = epochs.get(topicId);
        return topic == null ? null : topic.get(partition);
    }

    /** Epochs of exactly {@code partitions}: known ones kept, the others at {@code epoch}. */
    public AssignmentEpochs extendTo(Assignment partitions, int epoch) {
        Map<UUID, Map<Integer, Integer>> result = new TreeMap<>();
        for (Map.Entry<UUID, SortedSet<Integer>> topic : partitions.partitions().entrySet()) {
            Map<Integer, Integer> topicEpochs = result.computeIfAbsent(topic.getKey(), t -> new TreeMap<>());
            for (int partition : topic.getValue()) {
                Integer known = epoch(topic.getKey(), partition);
                topicEpochs.put(partition, known != null ? known : epoch);
            }
        }
        return of(result);
    }

    public SortedMap<UUID, SortedMap<Integer, Integer>> epochs() {
        return epochs;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof AssignmentEpochs that && epochs.equals(that.epochs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(epochs);
    }

    @Override
    public String toString() {
        return epochs.toString();
    }
}
