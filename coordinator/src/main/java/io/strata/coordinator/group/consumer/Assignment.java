package io.strata.coordinator.group.consumer;

import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.BiPredicate;

/**
 * A set of topic partitions, by topic id: a member's assigned partitions, the partitions it
 * must revoke, or its target assignment. Immutable; topics without partitions are not kept,
 * so two assignments with the same partitions are equal.
 */
public final class Assignment {
    public static final Assignment EMPTY = new Assignment(new TreeMap<>());

    private final SortedMap<UUID, SortedSet<Integer>> partitions;

    private Assignment(SortedMap<UUID, SortedSet<Integer>> partitions) {
        this.partitions = partitions;
    }

    /** An assignment of the given partitions (copied). */
    public static Assignment of(Map<UUID, ? extends Collection<Integer>> partitions) {
        SortedMap<UUID, SortedSet<Integer>> copy = new TreeMap<>();
        for (Map.Entry<UUID, ? extends Collection<Integer>> topic : partitions.entrySet()) {
            if (!topic.getValue().isEmpty()) {
                copy.put(topic.getKey(), Collections.unmodifiableSortedSet(new TreeSet<>(topic.getValue())));
            }
        }
        return copy.isEmpty() ? EMPTY : new Assignment(Collections.unmodifiableSortedMap(copy));
    }

    /** Partitions by topic id; unmodifiable. */
    public SortedMap<UUID, SortedSet<Integer>> partitions() {
        return partitions;
    }

    public SortedSet<Integer> partitions(UUID topicId) {
        SortedSet<Integer> topic = partitions.get(topicId);
        return topic == null ? Collections.emptySortedSet() : topic;
    }

    public boolean isEmpty() {
        return partitions.isEmpty();
    }

    public boolean contains(UUID topicId, int partition) {
        SortedSet<Integer> topic = partitions.get(topicId);
        return topic != null && topic.contains(partition);
    }

    /** The number of partitions. */
    public int size() {
        int size = 0;
        for (SortedSet<Integer> topic : partitions.values()) {
            size += topic.size();
        }
        return size;
    }

    /** Whether any partition of this assignment is also in {@code other}. */
    public boolean intersects(Assignment other) {
        for (Map.Entry<UUID, SortedSet<Integer>> topic : partitions.entrySet()) {
            for (int partition : topic.getValue()) {
                if (other.contains(topic.getKey(), partition)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether every partition of this assignment is in {@code other}. */
    public boolean isSubsetOf(Assignment other) {
        for (Map.Entry<UUID, SortedSet<Integer>> topic : partitions.entrySet()) {
            if (!other.partitions(topic.getKey()).containsAll(topic.getValue())) {
                return false;
            }
        }
        return true;
    }

    /** The partitions for which {@code keep(topic, partition)} holds. */
    public Assignment filter(BiPredicate<UUID, Integer> keep) {
        Map<UUID, SortedSet<Integer>> kept = new TreeMap<>();
        for (Map.Entry<UUID, SortedSet<Integer>> topic : partitions.entrySet()) {
            for (int partition : topic.getValue()) {
                if (keep.test(topic.getKey(), partition)) {
                    kept.computeIfAbsent(topic.getKey(), t -> new TreeSet<>()).add(partition);
                }
            }
        }
        return of(kept);
    }

    public Assignment minus(Assignment other) {
        return filter((topic, partition) -> !other.contains(topic, partition));
    }

    public Assignment intersect(Assignment other) {
        return filter(other::contains);
    }

    public Assignment union(Assignment other) {
        Map<UUID, SortedSet<Integer>> union = new TreeMap<>();
        for (Assignment each : new Assignment[] {this, other}) {
            for (Map.Entry<UUID, SortedSet<Integer>> topic : each.partitions.entrySet()) {
                union.computeIfAbsent(topic.getKey(), t -> new TreeSet<>()).addAll(topic.getValue());
            }
        }
        return of(union);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Assignment that && partitions.equals(that.partitions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(partitions);
    }

    @Override
    public String toString() {
        return partitions.toString();
    }
}
