package io.strata.server.replica;

import io.strata.storage.TopicPartition;

/**
 * A replication byte-rate quota as the fetch paths see it (Kafka's {@code ReplicaQuota}): which
 * partitions it throttles, whether the rate is over the bound, and the bytes to count.
 *
 * <p>Implementations are safe from any thread.
 */
public interface ReplicaQuota {
    /** A quota that throttles nothing and is never exceeded. */
    ReplicaQuota UNBOUNDED = new ReplicaQuota() {
        @Override
        public boolean isThrottled(TopicPartition topicPartition) {
            return false;
        }

        @Override
        public boolean isQuotaExceeded() {
            return false;
        }

        @Override
        public void record(long bytes) {
        }
    };

    /** True if this broker's replica of the partition is named by the topic's throttled-replicas config. */
    boolean isThrottled(TopicPartition topicPartition);

    /** True if the measured byte rate is above the configured rate now. */
    boolean isQuotaExceeded();

    /** Counts bytes replicated for throttled partitions. */
    void record(long bytes);
}
