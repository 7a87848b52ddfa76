package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.storage.TopicPartition;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One side's replication throttle on this broker (Kafka's {@code ReplicationQuotaManager}): a byte
 * rate bound ({@code leader.replication.throttled.rate} or {@code follower.replication.throttled.rate},
 * bytes/s, {@link Long#MAX_VALUE} = none) measured over {@code replication.quota.window.num} windows
 * of {@code replication.quota.window.size.seconds} ({@link SampledRate}), and the partitions it
 * applies to, from the topic configs {@code leader.replication.throttled.replicas} /
 * {@code follower.replication.throttled.replicas} (see {@link ThrottledReplicas}).
 *
 * <p>How the fetch paths use it (Kafka's rules): only replicas outside the ISR are held back.
 * The leader leaves a follower's throttled partition out of its answer (empty records) when the
 * follower is not in the ISR and {@link #isQuotaExceeded()}; it {@link #record}s the bytes of every
 * throttled partition it answers. The follower leaves a throttled partition out of its request when
 * that partition is not caught up and the quota is exceeded; it records the bytes it appends for
 * throttled partitions. The bound is therefore approximate: a request may overshoot by up to one
 * fetch response before the next one is held back.
 *
 * <p>Thread-safety: safe from any thread. The rate is guarded by this object's monitor; the
 * throttled partitions sit in a concurrent map written by the metadata thread.
 */
public final class ReplicationQuotaManager implements ReplicaQuota {
    /** Kafka's {@code QuotaType}s of replication, which name the metrics group. */
    public enum Side {
        LEADER("LeaderReplication"),
        FOLLOWER("FollowerReplication"),
        /** Copies into future logs ({@code replica.alter.log.dirs.io.max.bytes.per.second}); every moving partition counts. */
        ALTER_LOG_DIRS("AlterLogDirsReplication");

        private final String metricGroup;

        Side(String metricGroup) {
            this.metricGroup = metricGroup;
        }

        /** The JMX type of the side's byte-rate metric: {@code kafka.server:type=<metricGroup>}. */
        public String metricGroup() {
            return metricGroup;
        }
    }

    /** Kafka's defaults: {@code replication.quota.window.num} and {@code replication.quota.window.size.seconds}. */
    public static final int DEFAULT_NUM_QUOTA_SAMPLES = 11;
    public static final int DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1;
    /** Kafka's {@code ReplicationQuotaManagerConfig.QuotaBytesPerSecondDefault}: no throttle. */
    public static final long UNLIMITED = Long.MAX_VALUE;

    private final Side side;
    private final Time time;
    private final SampledRate rate;
    /** Topic → throttled partition ids, or {@link ThrottledReplicas#ALL} for every partition. */
    private final Map<String, Set<Integer>> throttledPartitions = new ConcurrentHashMap<>();
    private long boundBytesPerSecond = UNLIMITED;

    public ReplicationQuotaManager(Side side, int numQuotaSamples, int quotaWindowSizeSeconds, Time time) {
        if (quotaWindowSizeSeconds < 1) {
            throw new IllegalArgumentException("replication.quota.window.size.seconds must be at least 1: quotaWindowSizeSeconds="
                + quotaWindowSizeSeconds);
        }
        this.side = side;
        this.time = time;
        this.rate = new SampledRate(numQuotaSamples, quotaWindowSizeSeconds * 1000L, time.milliseconds());
    }

    public Side side() {
        return side;
    }

    /** Sets the bound in bytes per second ({@link #UNLIMITED} lifts it). Measured bytes are kept. */
    public synchronized void updateQuota(long bytesPerSecond) {
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException(side + " replication throttled rate must not be negative: bytesPerSecond=" + bytesPerSecond);
        }
        boundBytesPerSecond = bytesPerSecond;
    }

    /** The bound in bytes per second (Kafka's {@code upperBound}). */
    public synchronized long upperBound() {
        return boundBytesPerSecond;
    }

    @Override
    public synchronized boolean isQuotaExceeded() {
        return boundBytesPerSecond != UNLIMITED && rate.ratePerSecond(time.milliseconds()) > boundBytesPerSecond;
    }

    @Override
    public synchronized void record(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must not be negative: bytes=" + bytes);
        }
        rate.record(bytes, time.milliseconds());
    }

    /** The measured rate in bytes per second (Kafka's {@code byte-rate} metric of this side). */
    public synchronized double byteRate() {
        return rate.ratePerSecond(time.milliseconds());
    }

    @Override
    public boolean isThrottled(TopicPartition topicPartition) {
        Set<Integer> partitions = throttledPartitions.get(topicPartition.topic());
        return partitions != null && (partitions == ThrottledReplicas.ALL || partitions.contains(topicPartition.partition()));
    }

    /** Throttles the given partitions of the topic on this broker, replacing the previous set. */
    public void markThrottled(String topic, Collection<Integer> partitions) {
        throttledPartitions.put(topic, Set.copyOf(partitions));
    }

    /** Throttles every partition of the topic on this broker. */
    public void markThrottled(String topic) {
        throttledPartitions.put(topic, ThrottledReplicas.ALL);
    }

    /** Throttles none of the topic's partitions. */
    public void removeThrottle(String topic) {
        throttledPartitions.remove(topic);
    }

    /**
     * Applies a topic's throttled-replicas config as Kafka's {@code TopicConfigHandler} does:
     * {@code *} throttles every partition, otherwise the partitions whose entry names {@code brokerId};
     * none left → the throttle is removed.
     */
    public void applyTopicConfig(String topic, java.util.List<String> throttledReplicas, int brokerId) {
        Set<Integer> partitions = ThrottledReplicas.partitionsOf(throttledReplicas, brokerId);
        if (partitions == ThrottledReplicas.ALL) {
            markThrottled(topic);
        } else if (partitions.isEmpty()) {
            removeThrottle(topic);
        } else {
            markThrottled(topic, partitions);
        }
    }

    /** The topics with a throttle, a snapshot (for tests and DescribeConfigs diagnostics). */
    public Set<String> throttledTopics() {
        return Set.copyOf(throttledPartitions.keySet());
    }
}
