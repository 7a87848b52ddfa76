package io.strata.coordinator.group;

/**
 * Group coordinator settings, with Kafka's names: {@code offsets.topic.num.partitions},
 * {@code group.min.session.timeout.ms}, {@code group.max.session.timeout.ms},
 * {@code group.initial.rebalance.delay.ms}, {@code group.max.size}, {@code offset.metadata.max.bytes},
 * {@code offsets.retention.minutes} (as milliseconds) and {@code offsets.retention.check.interval.ms}.
 */
public record GroupCoordinatorSettings(int offsetsTopicPartitions, int minSessionTimeoutMs, int maxSessionTimeoutMs,
                                       int initialRebalanceDelayMs, int maxGroupSize, int offsetMetadataMaxBytes, int threads,
                                       long offsetsRetentionMs, long offsetsRetentionCheckIntervalMs) {
    /** Kafka's defaults: offsets.retention.minutes=10080 (7 days), offsets.retention.check.interval.ms=600000. */
    public static final long DEFAULT_OFFSETS_RETENTION_MS = 10_080L * 60 * 1000;
    public static final long DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS = 600_000L;

    public GroupCoordinatorSettings {
        if (offsetsRetentionMs < 1 || offsetsRetentionCheckIntervalMs < 1) {
            throw new IllegalArgumentException("offsets retention and its check interval must be positive: retentionMs=" + offsetsRetentionMs
                + ", checkIntervalMs=" + offsetsRetentionCheckIntervalMs);
        }
    }

    /** The settings with Kafka's default offset retention. */
    public GroupCoordinatorSettings(int offsetsTopicPartitions, int minSessionTimeoutMs, int maxSessionTimeoutMs,
                                    int initialRebalanceDelayMs, int maxGroupSize, int offsetMetadataMaxBytes, int threads) {
        this(offsetsTopicPartitions, minSessionTimeoutMs, maxSessionTimeoutMs, initialRebalanceDelayMs, maxGroupSize, offsetMetadataMaxBytes,
            threads, DEFAULT_OFFSETS_RETENTION_MS, DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS);
    }
}
