package io.strata.server.replica;

import io.strata.storage.FetchIsolation;

/**
 * The request-level parameters of a fetch.
 *
 * @param maxWaitMs   how long to wait for {@code minBytes} ({@code replica.fetch.wait.max.ms} for a follower: its request's MaxWaitMs)
 * @param minBytes    bytes to accumulate before answering
 * @param maxBytes    total response budget (already capped by {@code fetch.max.bytes})
 * @param isolation   HIGH_WATERMARK (read_uncommitted) or TXN_COMMITTED (read_committed) for consumers, LOG_END for followers
 * @param replicaId   the fetching replica's broker id (ReplicaState.ReplicaId from v15, ReplicaId before), or -1 for a consumer
 * @param brokerEpoch the fetching replica's broker epoch (ReplicaState.ReplicaEpoch, KIP-903), or -1
 */
public record FetchParams(long maxWaitMs, int minBytes, int maxBytes, FetchIsolation isolation, int replicaId, long brokerEpoch) {
    /** The replica id of a consumer's fetch. */
    public static final int CONSUMER_REPLICA_ID = -1;

    /** A consumer's fetch. */
    public FetchParams(long maxWaitMs, int minBytes, int maxBytes, FetchIsolation isolation) {
        this(maxWaitMs, minBytes, maxBytes, isolation, CONSUMER_REPLICA_ID, -1L);
    }

    /** A follower's fetch: it reads to the log end and its offsets are recorded by the leader. */
    public static FetchParams follower(long maxWaitMs, int minBytes, int maxBytes, int replicaId, long brokerEpoch) {
        if (replicaId < 0) {
            throw new IllegalArgumentException("a follower fetch needs a replica id >= 0: replicaId=" + replicaId);
        }
        return new FetchParams(maxWaitMs, minBytes, maxBytes, FetchIsolation.LOG_END, replicaId, brokerEpoch);
    }

    public boolean isFromFollower() {
        return replicaId >= 0;
    }
}
