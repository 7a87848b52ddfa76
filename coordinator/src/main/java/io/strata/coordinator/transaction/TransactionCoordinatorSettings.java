package io.strata.coordinator.transaction;

/**
 * Transaction coordinator settings with Kafka's names: {@code transaction.state.log.num.partitions},
 * {@code transaction.max.timeout.ms}, {@code transactional.id.expiration.ms},
 * {@code transaction.abort.timed.out.transaction.cleanup.interval.ms} and
 * {@code transaction.remove.expired.transaction.cleanup.interval.ms}.
 */
public record TransactionCoordinatorSettings(int stateLogPartitions, int maxTimeoutMs, long transactionalIdExpirationMs,
                                             long abortTimedOutCheckIntervalMs, long removeExpiredCheckIntervalMs) {
    /** Kafka's default {@code transaction.remove.expired.transaction.cleanup.interval.ms}: one hour. */
    public static final long DEFAULT_REMOVE_EXPIRED_CHECK_INTERVAL_MS = 3_600_000L;

    public TransactionCoordinatorSettings {
        if (stateLogPartitions < 1 || maxTimeoutMs < 1 || transactionalIdExpirationMs < 1 || abortTimedOutCheckIntervalMs < 1
            || removeExpiredCheckIntervalMs < 1) {
            throw new IllegalArgumentException("transaction coordinator settings must be positive: stateLogPartitions=" + stateLogPartitions
                + " maxTimeoutMs=" + maxTimeoutMs + " transactionalIdExpirationMs=" + transactionalIdExpirationMs
                + " abortTimedOutCheckIntervalMs=" + abortTimedOutCheckIntervalMs + " removeExpiredCheckIntervalMs=" + removeExpiredCheckIntervalMs);
        }
    }

    public TransactionCoordinatorSettings(int stateLogPartitions, int maxTimeoutMs, long transactionalIdExpirationMs, long abortTimedOutCheckIntervalMs) {
        this(stateLogPartitions, maxTimeoutMs, transactionalIdExpirationMs, abortTimedOutCheckIntervalMs, DEFAULT_REMOVE_EXPIRED_CHECK_INTERVAL_MS);
    }
}
