package io.strata.server.api;

/**
 * A read-only view of a broker's incremental fetch session cache (KIP-227) for its metrics:
 * Kafka's {@code kafka.server:type=FetchSessionCache} NumIncrementalFetchSessions,
 * NumIncrementalFetchPartitionsCached and IncrementalFetchSessionEvictionsPerSec (as a count).
 *
 * <p>Thread-safe: each call takes the cache's monitor briefly; the three values are read one
 * after the other, so a scrape racing a request may see a session without its partitions.
 */
public interface FetchSessionStatistics {
    /** Sessions held now (at most {@code max.incremental.fetch.session.cache.slots}). */
    int sessionCount();

    /** Partitions cached over all sessions, as of each session's last use. */
    long cachedPartitions();

    /** Sessions evicted to make room for new ones since start. */
    long evictionCount();
}
