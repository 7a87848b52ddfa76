package io.strata.coordinator.transaction;

/**
 * Transaction coordinator settings with Kafka's names: {@code transaction.state.log.num.partitions},
 * {@code transaction.max.timeout.ms}, {@code transactional.id.expiration.ms},
 * {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}.
 */
public record TransactionCoordinatorSettings(int stateLogPartitions, int maxTimeoutMs, long transactionalIdExpirationMs,
                                             long abortTimedOutCheckIntervalMs) {
}
