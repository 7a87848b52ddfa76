package io.strata.server.api;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * Incremental fetch sessions (KIP-227). A session remembers a client's partitions and what
 * it was last told about each (high watermark, last stable offset, log start offset), so that
 * later requests need only name changed partitions and responses carry only partitions with
 * news. At most {@code max.incremental.fetch.session.cache.slots} sessions are kept; the least
 * recently used is evicted when a new one needs room, but a consumer's never evicts a follower's.
 *
 * <p>Thread-safe: sessions are only touched under this cache's monitor (a session's partitions
 * are read and updated by the one request of that session in flight).
 */
final class FetchSessionCache {
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
        /** A follower's session: only another follower's may evict it. */
        final boolean privileged;
        int epoch;
        final LinkedHashMap<Key, CachedPartition> partitions = new LinkedHashMap<>();

        Session(int id, boolean privileged) {
            this.id = id;
            this.privileged = privileged;
            this.epoch = 1;
        }
    }

    private final int maxSessions;
    private final Random random = new Random();
    private final LinkedHashMap<Integer, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);

    FetchSessionCache(int maxSessions) {
        this.maxSessions = maxSessions;
    }

    /** A consumer's session: {@link #create(boolean)} with {@code privileged} false. */
    synchronized Session create() {
        return create(false);
    }

    /**
     * Creates a session, evicting the least recently used one when full: a consumer's session
     * (unprivileged) may only evict another consumer's, a follower's (privileged) evicts the least
     * recently used consumer session, or the least recently used follower session when all are
     * followers' (Kafka privileges replication's sessions). Null if sessions are disabled or a
     * consumer finds only followers' sessions.
     */
    synchronized Session create(boolean privileged) {
        if (maxSessions <= 0) {
            return null;
        }
        if (sessions.size() >= maxSessions && !evictOne(privileged)) {
            return null;
        }
        int id;
        do {
            id = random.nextInt(Integer.MAX_VALUE - 1) + 1;
        } while (sessions.containsKey(id));
        Session session = new Session(id, privileged);
        sessions.put(id, session);
        return session;
    }

    /** Evicts the least recently used session the new one may evict; @return whether one was. */
    private boolean evictOne(boolean privileged) {
        Iterator<Map.Entry<Integer, Session>> candidates = sessions.entrySet().iterator();
        while (candidates.hasNext()) {
            if (!candidates.next().getValue().privileged) {
                candidates.remove();
                return true;
            }
        }
        if (!privileged) {
            return false;
        }
        Iterator<Map.Entry<Integer, Session>> eldest = sessions.entrySet().iterator();
        eldest.next();
        eldest.remove();
        return true;
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
}
