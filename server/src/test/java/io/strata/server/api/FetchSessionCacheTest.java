package io.strata.server.api;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Eviction of fetch sessions as Kafka's FetchSessionCache decides it (KIP-227): stale sessions go
 * first, followers' sessions are privileged, and a new session displaces an existing one only when
 * it is worth more and the existing one is old enough.
 */
class FetchSessionCacheTest {
    private static final long EVICTION_MS = 120_000;

    /** A session as a full fetch of {@code size} partitions creates it (null if the cache had no room). */
    private static FetchSessionCache.Session create(FetchSessionCache cache, boolean privileged, int size, long nowMs) {
        FetchSessionCache.Session session = cache.create(privileged, size, nowMs);
        if (session != null) {
            for (int p = 0; p < size; p++) {
                session.partitions.put(new FetchSessionCache.Key("t", null, p), new FetchSessionCache.CachedPartition(0, 1, -1));
            }
        }
        return session;
    }

    @Test
    void aFullCacheRefusesAConsumerWhileEverySessionIsYoungAndInUse() {
        FetchSessionCache cache = new FetchSessionCache(2, EVICTION_MS);
        FetchSessionCache.Session first = create(cache, false, 1, 0);
        FetchSessionCache.Session second = create(cache, false, 1, 0);

        assertThat(create(cache, false, 5, 1_000)).as("sessions younger than the eviction time cannot be displaced by a consumer").isNull();
        assertThat(cache.get(first.id)).isSameAs(first);
        assertThat(cache.get(second.id)).isSameAs(second);
        assertThat(cache.evictions()).isZero();
    }

    @Test
    void aFollowerDisplacesTheSmallestConsumerSessionAtOnce() {
        FetchSessionCache cache = new FetchSessionCache(2, EVICTION_MS);
        FetchSessionCache.Session big = create(cache, false, 10, 0);
        FetchSessionCache.Session small = create(cache, false, 2, 0);

        FetchSessionCache.Session follower = create(cache, true, 1, 1_000);

        assertThat(follower).isNotNull();
        assertThat(cache.get(small.id)).as("the least valuable consumer session goes").isNull();
        assertThat(cache.get(big.id)).isSameAs(big);
        assertThat(cache.evictions()).isOne();
    }

    @Test
    void aConsumerNeverDisplacesAFollowerSessionThatIsInUse() {
        FetchSessionCache cache = new FetchSessionCache(1, EVICTION_MS);
        FetchSessionCache.Session follower = create(cache, true, 1, 0);
        for (long now = 60_000; now <= 600_000; now += 60_000) {
            cache.touch(follower, now);
            assertThat(cache.create(false, 1_000, now)).as("a consumer at %d ms", now).isNull();
        }
        assertThat(cache.get(follower.id)).isSameAs(follower);
    }

    @Test
    void aStaleSessionIsEvictedByAnyoneEvenAFollowers() {
        FetchSessionCache cache = new FetchSessionCache(2, EVICTION_MS);
        FetchSessionCache.Session deadFollower = create(cache, true, 50, 0);
        FetchSessionCache.Session liveConsumer = create(cache, false, 1, 0);
        cache.touch(liveConsumer, 100_000);

        assertThat(create(cache, false, 1, EVICTION_MS)).as("not yet stale: unused exactly the eviction time").isNull();
        FetchSessionCache.Session consumer = create(cache, false, 1, EVICTION_MS + 1);

        assertThat(consumer).as("the follower's session, unused for longer than the eviction time, is freed").isNotNull();
        assertThat(cache.get(deadFollower.id)).isNull();
        assertThat(cache.get(liveConsumer.id)).isSameAs(liveConsumer);
    }

    @Test
    void anOldSessionInUseMakesRoomOnlyForOneWithMorePartitions() {
        FetchSessionCache cache = new FetchSessionCache(1, EVICTION_MS);
        FetchSessionCache.Session existing = create(cache, false, 3, 0);
        cache.touch(existing, 200_000);

        assertThat(create(cache, false, 3, 200_001)).as("as many partitions: not worth more").isNull();
        assertThat(create(cache, false, 4, 200_001)).as("more partitions, and the existing session is old").isNotNull();
        assertThat(cache.get(existing.id)).isNull();
    }

    @Test
    void aFollowerDisplacesAnotherFollowerOnlyWhenThatOneIsOldAndSmaller() {
        FetchSessionCache cache = new FetchSessionCache(1, EVICTION_MS);
        FetchSessionCache.Session first = create(cache, true, 5, 0);
        cache.touch(first, 60_000);

        assertThat(create(cache, true, 50, 60_001)).as("the other follower's session is young").isNull();
        cache.touch(first, 180_000);
        assertThat(create(cache, true, 5, 180_001)).as("old, but not smaller").isNull();
        assertThat(create(cache, true, 6, 180_001)).isNotNull();
        assertThat(cache.get(first.id)).isNull();
    }

    @Test
    void touchingASessionWeighsItsCurrentPartitions() {
        FetchSessionCache cache = new FetchSessionCache(1, EVICTION_MS);
        FetchSessionCache.Session existing = create(cache, false, 1, 0);
        for (int p = 0; p < 10; p++) {
            existing.partitions.put(new FetchSessionCache.Key("t", null, p), new FetchSessionCache.CachedPartition(0, 1, -1));
        }
        cache.touch(existing, 200_000);

        assertThat(cache.totalPartitions()).isEqualTo(10);
        assertThat(create(cache, false, 5, 200_001)).as("the existing session now holds 10 partitions").isNull();
    }

    @Test
    void noSlotsMeansNoSessions() {
        assertThat(new FetchSessionCache(0, EVICTION_MS).create(true, 1, 0)).isNull();
    }
}
