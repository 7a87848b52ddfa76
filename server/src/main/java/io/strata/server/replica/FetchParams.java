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
 * @param clientMetadata a consumer's rack, client id and listener (Fetch v11+, KIP-392), or null (a follower, or an older consumer):
 *                       with it a follower may serve the fetch and the leader may name a preferred read replica
 */
public record FetchParams(long maxWaitMs, int minBytes, int maxBytes, FetchIsolation isolation, int replicaId, long brokerEpoch,
                          ClientMetadata clientMetadata) {
    /** The replica id of a consumer's fetch. */
    public static final int CONSUMER_REPLICA_ID = -1;

    public FetchParams {
        if (clientMetadata != null && replicaId >= 0) {
            throw new IllegalArgumentException("client metadata is for consumer fetches only: replicaId=" + replicaId);
        }
    }

    /** A fetch without client metadata (a follower's, or a consumer's before Fetch v11): only the leader serves it. */
    public FetchParams(long maxWaitMs, int minBytes, int maxBytes, FetchIsolation isolation, int replicaId, long brokerEpoch) {
        this(maxWaitMs, minBytes, maxBytes, isolation, replicaId, brokerEpoch, null);
    }

    /** A consumer's fetch without client metadata (before Fetch v11). */
    public FetchParams(long maxWaitMs, int minBytes, int maxBytes, FetchIsolation isolation) {
        this(maxWaitMs, minBytes, maxBytes, isolation, CONSUMER_REPLICA_ID, -1L, null);
    }

    /** A consumer's fetch, v11+: a follower may serve it (KIP-392). */
    public static FetchParams consumer(long maxWaitMs, int minBytes, int maxBytes, FetchIsolation isolation, ClientMetadata clientMetadata) {
        return new FetchParams(maxWaitMs, minBytes, maxBytes, isolation, CONSUMER_REPLICA_ID, -1L, java.util.Objects.requireNonNull(clientMetadata));
    }

    /** Kafka's {@code fetchOnlyLeader}: a follower's fetch, or a consumer's without client metadata. */
    public boolean fetchOnlyLeader() {
        return isFromFollower() || clientMetadata == null;
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
