package io.strata.server.replica.fetcher;

import io.strata.storage.TopicPartition;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Partitions whose fetching stopped and will not resume by itself (Kafka's
 * {@code FailedPartitions}): a local storage failure or an unexpected exception while appending or
 * truncating, or a leader that fenced the epoch this replica still follows. Adding the partition
 * again (a new leader or epoch from the metadata image) clears it. Its size is Kafka's
 * {@code ReplicaFetcherManager FailedPartitionsCount}.
 *
 * <p>Thread-safe.
 */
public final class FailedPartitions {
    private final Set<TopicPartition> partitions = ConcurrentHashMap.newKeySet();

    void add(TopicPartition topicPartition) {
        partitions.add(topicPartition);
    }

    void remove(TopicPartition topicPartition) {
        partitions.remove(topicPartition);
    }

    public boolean contains(TopicPartition topicPartition) {
        return partitions.contains(topicPartition);
    }

    public int size() {
        return partitions.size();
    }

    /** A snapshot. */
    public Set<TopicPartition> partitions() {
        return Set.copyOf(partitions);
    }
}
