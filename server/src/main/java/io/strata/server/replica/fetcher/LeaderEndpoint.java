package io.strata.server.replica.fetcher;

import io.netty.channel.EventLoop;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The leader a {@link ReplicaFetcher} replicates from, shaped like Kafka's {@code LeaderEndPoint}:
 * the three requests a follower sends, as futures. {@link RemoteLeaderEndpoint} sends them over the
 * network; tests script the answers.
 *
 * <p>A future that completes exceptionally means the request did not get an answer (connection
 * lost, timeout, leader unknown): the fetcher backs off as a whole. Error codes inside an answer
 * are per-partition outcomes handled per partition.
 *
 * <p>Implementations are thread-safe; futures may complete on any thread, and the fetcher only
 * reads their results from its own thread.
 */
public interface LeaderEndpoint extends AutoCloseable {
    /** The broker id of the leader. */
    int leaderId();

    /**
     * Whether the leader detects divergence from a Fetch's {@code LastFetchedEpoch} and answers
     * {@code DivergingEpoch} (Fetch v12+, KIP-320). Without it the fetcher truncates through
     * OffsetForLeaderEpoch before every fetch after a leader change (KIP-101/KIP-279).
     */
    default boolean isTruncationOnFetchSupported() {
        return true;
    }

    /**
     * The event loop this endpoint's connection runs on, when it has one of its own: the fetcher is
     * then polled on that thread ({@link EventLoopFetcherRunner}), so requests are written and
     * answers handled without a thread hand-off. Empty (the default) runs the fetcher on a
     * {@link ReplicaFetcherThread}.
     */
    default Optional<EventLoop> eventLoop() {
        return Optional.empty();
    }

    CompletableFuture<FetchResponseData> fetch(FetchRequestData request);

    /** OffsetForLeaderEpoch (v4) on behalf of a replica. */
    CompletableFuture<OffsetForLeaderEpochResponseData> fetchEpochEndOffsets(OffsetForLeaderEpochRequestData request);

    /**
     * ListOffsets on behalf of a replica ({@code ReplicaId} set): timestamp -1 answers the leader's log
     * end offset, -2 its log start offset.
     */
    CompletableFuture<ListOffsetsResponseData> listOffsets(ListOffsetsRequestData request);

    /** Releases the connection; pending futures fail. */
    @Override
    void close();
}
