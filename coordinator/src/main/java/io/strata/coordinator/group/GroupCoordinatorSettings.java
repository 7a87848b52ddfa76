package io.strata.coordinator.group;

/**
 * Group coordinator settings, with Kafka's names: {@code offsets.topic.num.partitions},
 * {@code group.min.session.timeout.ms}, {@code group.max.session.timeout.ms},
 * {@code group.initial.rebalance.delay.ms}, {@code group.max.size}, {@code offset.metadata.max.bytes}.
 */
public record GroupCoordinatorSettings(int offsetsTopicPartitions, int minSessionTimeoutMs, int maxSessionTimeoutMs,
                                       int initialRebalanceDelayMs, int maxGroupSize, int offsetMetadataMaxBytes, int threads) {
}
