package io.strata.server.api;

import io.strata.server.metrics.ExpositionFormat;
import io.strata.server.metrics.FetchSessionCacheMetrics;
import io.strata.server.metrics.MetricsRegistry;
import io.strata.server.metrics.PrometheusText;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's FetchSessionCache metrics over a real cache: the session and partition gauges follow
 * sessions created, touched and closed, and the eviction counter moves when a new session takes a
 * stale one's slot.
 */
class FetchSessionCacheMetricsTest {
    private static final long EVICTION_MS = 1_000;
    private static final String SESSIONS = "kafka_server_fetchsessioncache_numincrementalfetchsessions";
    private static final String PARTITIONS = "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached";
    private static final String EVICTIONS = "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total";

    private static double value(FetchSessionStatistics sessions, String name) {
        MetricsRegistry registry = new MetricsRegistry();
        registry.register(new FetchSessionCacheMetrics(() -> sessions));
        PrometheusText scrape = PrometheusText.parse(registry.scrape(ExpositionFormat.PROMETHEUS_TEXT));
        assertThat(scrape.samples(name)).as(name).hasSize(1);
        return scrape.samples(name).get(0).value();
    }

    private static FetchSessionCache.Session create(FetchSessionCache cache, int size, long nowMs) {
        FetchSessionCache.Session session = cache.create(false, size, nowMs);
        assertThat(session).as("a slot for a session of %d partitions at %d ms", size, nowMs).isNotNull();
        for (int p = 0; p < size; p++) {
            session.partitions.put(new FetchSessionCache.Key("t", null, p), new FetchSessionCache.CachedPartition(0, 1, -1));
        }
        return session;
    }

    @Test
    void gaugesFollowTheSessionsAndTheCounterTheEvictions() {
        FetchSessionCache cache = new FetchSessionCache(2, EVICTION_MS);
        assertThat(value(cache, SESSIONS)).isZero();
        assertThat(value(cache, EVICTIONS)).isZero();

        FetchSessionCache.Session stale = create(cache, 3, 0);
        FetchSessionCache.Session used = create(cache, 5, 0);
        assertThat(value(cache, SESSIONS)).isEqualTo(2);
        assertThat(value(cache, PARTITIONS)).isEqualTo(8);

        // A request grows one session; the cache weighs it by its size at that use.
        used.partitions.put(new FetchSessionCache.Key("t", null, 99), new FetchSessionCache.CachedPartition(0, 1, -1));
        cache.touch(used, EVICTION_MS);
        assertThat(value(cache, PARTITIONS)).isEqualTo(9);

        // The cache is full; the session unused for longer than the eviction time gives up its slot.
        create(cache, 2, 2 * EVICTION_MS + 1);
        assertThat(cache.get(stale.id)).isNull();
        assertThat(value(cache, SESSIONS)).isEqualTo(2);
        assertThat(value(cache, PARTITIONS)).as("the grown session and the new one").isEqualTo(6 + 2);
        assertThat(value(cache, EVICTIONS)).isEqualTo(1);

        // A client closing its session is not an eviction.
        cache.remove(used.id);
        assertThat(value(cache, SESSIONS)).isEqualTo(1);
        assertThat(value(cache, PARTITIONS)).isEqualTo(2);
        assertThat(value(cache, EVICTIONS)).isEqualTo(1);
    }

    @Test
    void theFamiliesAreLeftOutBeforeTheCacheExists() {
        MetricsRegistry registry = new MetricsRegistry();
        registry.register(new FetchSessionCacheMetrics(() -> null));
        assertThat(PrometheusText.parse(registry.scrape(ExpositionFormat.PROMETHEUS_TEXT)).samples(SESSIONS)).isEmpty();
    }
}
