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
 * recently used is evicted when a new one needs room.
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
        long highWatermark = -1;
        long lastStableOffset = -1;
        long logStartOffset = -1;

        CachedPartition(long fetchOffset, int maxBytes, int currentLeaderEpoch) {
            this.fetchOffset = fetchOffset;
            this.maxBytes = maxBytes;
            this.currentLeaderEpoch = currentLeaderEpoch;
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
        int epoch;
        final LinkedHashMap<Key, CachedPartition> partitions = new LinkedHashMap<>();

        Session(int id) {
            this.id = id;
            this.epoch = 1;
        }
    }

    private final int maxSessions;
    private final Random random = new Random();
    private final LinkedHashMap<Integer, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);

    FetchSessionCache(int maxSessions) {
        this.maxSessions = maxSessions;
    }

    /** Creates a session, evicting the least recently used if full; null if sessions are disabled. */
    synchronized Session create() {
        if (maxSessions <= 0) {
            return null;
        }
        if (sessions.size() >= maxSessions) {
            Iterator<Map.Entry<Integer, Session>> eldest = sessions.entrySet().iterator();
            eldest.next();
            eldest.remove();
        }
        int id;
        do {
            id = random.nextInt(Integer.MAX_VALUE - 1) + 1;
        } while (sessions.containsKey(id));
        Session session = new Session(id);
        sessions.put(id, session);
        return session;
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
