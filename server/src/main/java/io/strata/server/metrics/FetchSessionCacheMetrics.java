package io.strata.server.metrics;

import io.strata.server.api.FetchSessionStatistics;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The incremental fetch session cache (KIP-227) of one broker, read at scrape time, in the
 * Prometheus form of Kafka's {@code kafka.server:type=FetchSessionCache} names:
 *
 * <pre>
 *   kafka_server_fetchsessioncache_numincrementalfetchsessions           NumIncrementalFetchSessions
 *   kafka_server_fetchsessioncache_numincrementalfetchpartitionscached   NumIncrementalFetchPartitionsCached
 *   kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total  IncrementalFetchSessionEvictionsPerSec
 * </pre>
 *
 * Consumers' and followers' sessions count alike, as in Kafka. A cache that keeps evicting
 * ({@code rate(..._evictions_total)} above 0) is too small for its clients: raise
 * {@code max.incremental.fetch.session.cache.slots}.
 *
 * <p>Cost: a pass over the sessions per scrape, under the cache's monitor. Thread-safe.
 */
public final class FetchSessionCacheMetrics implements MetricsCollector {
    private final Supplier<FetchSessionStatistics> sessions;

    /** @param sessions the cache, or a supplier answering null before start-up creates it (the families are then left out) */
    public FetchSessionCacheMetrics(Supplier<FetchSessionStatistics> sessions) {
        this.sessions = Objects.requireNonNull(sessions, "sessions");
    }

    @Override
    public void collect(List<MetricFamily> out) {
        FetchSessionStatistics current = sessions.get();
        if (current == null) {
            return;
        }
        out.add(MetricFamily.gauge("kafka_server_fetchsessioncache_numincrementalfetchsessions",
            "Incremental fetch sessions held (consumers' and followers').").add(current.sessionCount()));
        out.add(MetricFamily.gauge("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached",
            "Partitions cached over all incremental fetch sessions.").add(current.cachedPartitions()));
        out.add(MetricFamily.counter("kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total",
            "Incremental fetch sessions evicted to make room for new ones.").add(current.evictionCount()));
    }
}
