package io.strata.server.api;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Random;
import java.util.UUID;

/**
 * Incremental fetch sessions (KIP-227). A session remembers a client's partitions and what
 * it was last told about each (high watermark, last stable offset, log start offset), so that
 * later requests need only name changed partitions and responses carry only partitions with
 * news. At most {@code max.incremental.fetch.session.cache.slots} sessions are kept; which one a
 * new session may evict follows Kafka ({@link #create}).
 *
 * <p>Thread-safe: sessions are only touched under this cache's monitor (a session's partitions
 * are read and updated by the one request of that session in flight).
 */
final class FetchSessionCache implements FetchSessionStatistics {
    /** Session epoch of a request that opens a session (or asks for a full fetch). */
    static final int INITIAL_EPOCH = 0;
    /** Session epoch that closes a session (or asks for a sessionless full fetch). */
    static final int FINAL_EPOCH = -1;
    static final int INVALID_SESSION_ID = 0;

    /** A partition key: by topic id for v13+, by name before. */
    record Key(String topic, UUID topicId, int partition) {
    }

    /** What the session knows of one partition. */
    static final class CachedPartition {
        long fetchOffset;
        int maxBytes;
        int currentLeaderEpoch;
        /** Fetch v12+ LastFetchedEpoch (-1: none). */
        int lastFetchedEpoch = -1;
        /** A follower's log start offset as its request says (-1: none). */
        private long followerLogStartOffset = -1;
        long highWatermark = -1;
        long lastStableOffset = -1;
        long logStartOffset = -1;

        CachedPartition(long fetchOffset, int maxBytes, int currentLeaderEpoch) {
            this.fetchOffset = fetchOffset;
            this.maxBytes = maxBytes;
            this.currentLeaderEpoch = currentLeaderEpoch;
        }

        long followerLogStartOffset() {
            return followerLogStartOffset;
        }

        void followerLogStartOffset(long offset) {
            this.followerLogStartOffset = offset;
        }

        /** Records what the response says; returns true if the client must be told. */
        boolean update(long highWatermark, long lastStableOffset, long logStartOffset) {
            boolean changed = this.highWatermark != highWatermark || this.lastStableOffset != lastStableOffset
                || this.logStartOffset != logStartOffset;
            this.highWatermark = highWatermark;
            this.lastStableOffset = lastStableOffset;
            this.logStartOffset = logStartOffset;
            return changed;
        }
    }

    /** A client's session. */
    static final class Session {
        final int id;
        /** A follower's session: it may evict a consumer's at any time, and a consumer's new session may not evict it until it is old. */
        final boolean privileged;
        final long creationMs;
        int epoch;
        final LinkedHashMap<Key, CachedPartition> partitions = new LinkedHashMap<>();
        /** When a request last used this session; its partition count then (read by eviction under the cache's monitor). */
        private long lastUsedMs;
        private int cachedSize;

        Session(int id, boolean privileged, long creationMs) {
            this.id = id;
            this.privileged = privileged;
            this.creationMs = creationMs;
            this.lastUsedMs = creationMs;
            this.epoch = 1;
        }
    }

    /** Kafka's EvictableKey order: consumers' before followers', then fewer partitions, then lower id. */
    private static final Comparator<Session> LEAST_VALUABLE = Comparator.<Session>comparingInt(s -> s.privileged ? 1 : 0)
        .thenComparingInt(s -> s.cachedSize).thenComparingInt(s -> s.id);

    private final int maxSessions;
    private final long evictionMs;
    private final Random random = new Random();
    private final LinkedHashMap<Integer, Session> sessions = new LinkedHashMap<>();
    private long evictions;

    /**
     * @param maxSessions {@code max.incremental.fetch.session.cache.slots} (0 disables sessions)
     * @param evictionMs {@code min.incremental.fetch.session.eviction.ms}: how long a session must go unused to be evictable by
     *     anyone, and how old it must be before another session may displace it
     */
    FetchSessionCache(int maxSessions, long evictionMs) {
        this.maxSessions = maxSessions;
        this.evictionMs = evictionMs;
    }

    /**
     * Creates a session for a full fetch of {@code size} partitions, evicting one when the cache is
     * full as Kafka's FetchSessionCache does (KIP-227): first the session unused the longest if it
     * has been unused more than {@code evictionMs}; otherwise the least valuable session the new one
     * may displace (a follower's new session: any consumer's session, or a follower's created more
     * than {@code evictionMs} ago; a consumer's: any session created more than {@code evictionMs}
     * ago), only when the new one is worth at least as much (a follower's over a consumer's, or more
     * partitions). A replica fetcher's session thus never loses its slot to consumers while it is
     * in use, and a dead follower's session is freed once it goes stale.
     *
     * @return the session (expecting epoch 1 next), or null if sessions are disabled or no slot could be had
     */
    synchronized Session create(boolean privileged, int size, long nowMs) {
        if (maxSessions <= 0) {
            return null;
        }
        if (sessions.size() >= maxSessions && !tryEvict(privileged, size, nowMs)) {
            return null;
        }
        int id;
        do {
            id = random.nextInt(Integer.MAX_VALUE - 1) + 1;
        } while (sessions.containsKey(id));
        Session session = new Session(id, privileged, nowMs);
        session.cachedSize = size;
        sessions.put(id, session);
        return session;
    }

    private boolean tryEvict(boolean privileged, int size, long nowMs) {
        Session leastRecentlyUsed = null;
        Session leastValuable = null;
        for (Session session : sessions.values()) {
            if (leastRecentlyUsed == null || session.lastUsedMs < leastRecentlyUsed.lastUsedMs) {
                leastRecentlyUsed = session;
            }
            boolean old = nowMs - session.creationMs > evictionMs;
            boolean evictable = privileged ? (!session.privileged || old) : old;
            if (evictable && (leastValuable == null || LEAST_VALUABLE.compare(session, leastValuable) < 0)) {
                leastValuable = session;
            }
        }
        if (leastRecentlyUsed == null) {
            return false;
        }
        if (nowMs - leastRecentlyUsed.lastUsedMs > evictionMs) {
            evict(leastRecentlyUsed);
            return true;
        }
        if (leastValuable == null) {
            return false;
        }
        // The new session's key has id 0: with the same privilege and size it orders first and evicts nothing.
        int byPrivilege = Boolean.compare(privileged, leastValuable.privileged);
        boolean worthMore = byPrivilege > 0 || (byPrivilege == 0 && size > leastValuable.cachedSize);
        if (!worthMore) {
            return false;
        }
        evict(leastValuable);
        return true;
    }

    private void evict(Session session) {
        sessions.remove(session.id);
        evictions++;
    }

    /** Marks a session used by a request at {@code nowMs} (its partitions may have changed: eviction weighs them). */
    synchronized void touch(Session session, long nowMs) {
        session.lastUsedMs = nowMs;
        synchronized (session) {
            session.cachedSize = session.partitions.size();
        }
    }

    /** Sessions evicted so far (Kafka's IncrementalFetchSessionEvictionsPerSec). */
    synchronized long evictions() {
        return evictions;
    }

    /** Partitions cached over all sessions, as of each session's last use (Kafka's NumIncrementalFetchPartitionsCached). */
    synchronized long totalPartitions() {
        long total = 0;
        for (Session session : sessions.values()) {
            total += session.cachedSize;
        }
        return total;
    }

    synchronized Session get(int id) {
        return sessions.get(id);
    }

    synchronized void remove(int id) {
        sessions.remove(id);
    }

    synchronized int size() {
        return sessions.size();
    }

    @Override
    public int sessionCount() {
        return size();
    }

    @Override
    public long cachedPartitions() {
        return totalPartitions();
    }

    @Override
    public long evictionCount() {
        return evictions();
    }
}
