package io.strata.server.api;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Eviction of fetch sessions: followers' sessions are privileged, as Kafka's cache keeps replication's sessions. */
class FetchSessionCacheTest {
    @Test
    void aConsumerSessionNeverEvictsAFollowerSession() {
        FetchSessionCache cache = new FetchSessionCache(2);
        FetchSessionCache.Session follower = cache.create(true);
        FetchSessionCache.Session consumer = cache.create(false);
        FetchSessionCache.Session newer = cache.create(false);
        assertThat(newer).as("the consumer's session took the other consumer's slot").isNotNull();
        assertThat(cache.get(consumer.id)).isNull();
        assertThat(cache.get(follower.id)).isSameAs(follower);

        FetchSessionCache.Session secondFollower = cache.create(true);
        assertThat(cache.get(newer.id)).as("a follower evicts a consumer first").isNull();
        assertThat(cache.get(follower.id)).isSameAs(follower);

        assertThat(cache.create(false)).as("only followers' sessions are left: a consumer goes without one").isNull();
        assertThat(cache.size()).isEqualTo(2);

        FetchSessionCache.Session thirdFollower = cache.create(true);
        assertThat(thirdFollower).isNotNull();
        // The first follower's session was used after the second's was created: the second is the least recently used.
        assertThat(cache.get(secondFollower.id)).as("among followers the least recently used goes").isNull();
        assertThat(cache.get(follower.id)).isSameAs(follower);
    }
}
