package io.strata.server.replica.fetcher;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * A replica fetcher's half of an incremental fetch session with its leader (KIP-227), as Kafka's
 * {@code FetchSessionHandler}: the first Fetch lists every partition with SessionEpoch 0 and the
 * leader answers with a session id; each later Fetch names the session and the next epoch, and
 * carries only the partitions whose request data changed (fetch offset, leader epoch, last
 * fetched epoch, log start offset, high watermark, max bytes) plus the ones no longer fetched as
 * forgotten topics. The leader then answers only partitions with news, so a follower of many
 * idle partitions sends and receives a few bytes per round instead of every partition.
 *
 * <p>Recovery: a session the leader no longer knows (FETCH_SESSION_ID_NOT_FOUND: evicted, leader
 * restarted) starts a new one; a wrong epoch (INVALID_FETCH_SESSION_EPOCH) or a request that got no
 * answer closes the current session and opens a new one in the next full Fetch (SessionId kept,
 * SessionEpoch 0, which the leader reads as close-and-recreate). A leader without room answers
 * session id 0: the fetcher stays sessionless and asks again with its next full Fetch.
 *
 * <p>Usage: {@link #build} a request from the partitions to fetch now, send it, then exactly one
 * of {@link #onResponse} or {@link #onRequestFailed} for it. Not thread-safe: the owning
 * {@link ReplicaFetcher} calls it under its monitor, one request at a time.
 */
final class FollowerFetchSession {
    static final int INVALID_SESSION_ID = 0;
    static final int INITIAL_EPOCH = 0;

    /** A partition of the session, by topic id (the fetcher sends Fetch v13+). */
    record Key(UUID topicId, int partition) {
    }

    /** What a request asks of one partition, as the leader's session caches it; an unchanged one is left out of an incremental request. */
    record PartitionRequest(String topic, long fetchOffset, int currentLeaderEpoch, int lastFetchedEpoch, long logStartOffset,
                            int maxBytes, long highWatermark) {
        FetchRequestData.FetchPartition toFetchPartition(int partition) {
            return new FetchRequestData.FetchPartition()
                .setPartition(partition)
                .setCurrentLeaderEpoch(currentLeaderEpoch)
                .setFetchOffset(fetchOffset)
                .setLastFetchedEpoch(lastFetchedEpoch)
                .setLogStartOffset(logStartOffset)
                .setPartitionMaxBytes(maxBytes)
                .setHighWatermark(highWatermark);
        }
    }

    /** A request built by {@link #build}: what to send, and whether it is a full one. */
    record Built(int sessionId, int sessionEpoch, boolean full, List<FetchRequestData.FetchTopic> topics,
                 List<FetchRequestData.ForgottenTopic> forgotten) {
    }

    private final String logPrefix;
    private int sessionId = INVALID_SESSION_ID;
    private int nextEpoch = INITIAL_EPOCH;
    /** What the leader's session holds, as of the last answered request. */
    private LinkedHashMap<Key, PartitionRequest> sessionPartitions = new LinkedHashMap<>();
    /** What the leader's session will hold once the request in flight is answered. */
    private LinkedHashMap<Key, PartitionRequest> pending;
    private boolean pendingFull;
    private long fullRequests;
    private long incrementalRequests;

    FollowerFetchSession(String logPrefix) {
        this.logPrefix = Objects.requireNonNull(logPrefix, "logPrefix");
    }

    /**
     * Builds the next request for exactly {@code next} (in order): a full one if no session is open,
     * else an incremental one with the changed partitions and the forgotten ones. The session keeps
     * {@code next} as what the leader will hold: the caller must not change it afterwards.
     *
     * @throws IllegalStateException if a request built earlier was not settled
     */
    Built build(LinkedHashMap<Key, PartitionRequest> next) {
        if (pending != null) {
            throw new IllegalStateException(logPrefix + "a fetch request of session " + sessionId + " is still unsettled");
        }
        pending = next; // the caller builds a new map for every request and keeps no reference to it
        pendingFull = nextEpoch == INITIAL_EPOCH;
        Map<UUID, FetchRequestData.FetchTopic> topics = new LinkedHashMap<>();
        List<FetchRequestData.ForgottenTopic> forgotten = new ArrayList<>();
        next.forEach((key, request) -> {
            if (pendingFull || !request.equals(sessionPartitions.get(key))) {
                topics.computeIfAbsent(key.topicId(), id -> new FetchRequestData.FetchTopic().setTopic(request.topic()).setTopicId(id))
                    .partitions().add(request.toFetchPartition(key.partition()));
            }
        });
        if (!pendingFull) {
            Map<UUID, FetchRequestData.ForgottenTopic> byTopic = new LinkedHashMap<>();
            sessionPartitions.forEach((key, request) -> {
                if (!next.containsKey(key)) {
                    byTopic.computeIfAbsent(key.topicId(), id -> new FetchRequestData.ForgottenTopic().setTopic(request.topic()).setTopicId(id))
                        .partitions().add(key.partition());
                }
            });
            forgotten.addAll(byTopic.values());
            incrementalRequests++;
        } else {
            fullRequests++;
        }
        return new Built(sessionId, nextEpoch, pendingFull, new ArrayList<>(topics.values()), forgotten);
    }

    /**
     * Settles the request in flight with its answer.
     *
     * @return true if the answer's partitions are to be used; false after a top-level error (the
     *     session is reset and the next request is a full one)
     */
    boolean onResponse(FetchResponseData response) {
        LinkedHashMap<Key, PartitionRequest> requested = takePending();
        ErrorCode error = ErrorCode.forCode(response.errorCode());
        if (error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND) {
            sessionId = INVALID_SESSION_ID;
            reset();
            return false;
        }
        if (error != ErrorCode.NONE) {
            reset(); // keep the id: the next full request closes it on the leader and opens a new one
            return false;
        }
        if (response.sessionId() == INVALID_SESSION_ID) {
            // No session: a sessionless full answer, or the leader closed the session. Ask again with the next full request.
            sessionId = INVALID_SESSION_ID;
            reset();
            return true;
        }
        if (pendingFull || response.sessionId() == sessionId) {
            sessionId = response.sessionId();
            nextEpoch = nextEpoch(nextEpoch);
            sessionPartitions = requested;
            return true;
        }
        // An incremental request answered for another session: start over.
        sessionId = INVALID_SESSION_ID;
        reset();
        return false;
    }

    /** Settles the request in flight that got no answer: the next request closes the session and opens a new one. */
    void onRequestFailed() {
        takePending();
        reset();
    }

    private LinkedHashMap<Key, PartitionRequest> takePending() {
        if (pending == null) {
            throw new IllegalStateException(logPrefix + "no fetch request of session " + sessionId + " is in flight");
        }
        LinkedHashMap<Key, PartitionRequest> requested = pending;
        pending = null;
        return requested;
    }

    private void reset() {
        nextEpoch = INITIAL_EPOCH;
        sessionPartitions = new LinkedHashMap<>();
    }

    /** Kafka's FetchMetadata.nextEpoch: 0 → 1, then by one, wrapping to 1 after Integer.MAX_VALUE. */
    static int nextEpoch(int epoch) {
        return epoch == Integer.MAX_VALUE ? 1 : epoch + 1;
    }

    int sessionId() {
        return sessionId;
    }

    int nextEpoch() {
        return nextEpoch;
    }

    /** Whether a request built now would be incremental. */
    boolean isOpen() {
        return nextEpoch != INITIAL_EPOCH;
    }

    long fullRequests() {
        return fullRequests;
    }

    long incrementalRequests() {
        return incrementalRequests;
    }
}
