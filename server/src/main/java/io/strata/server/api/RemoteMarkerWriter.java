package io.strata.server.api;

import io.strata.protocol.message.WriteTxnMarkersRequestData;
import io.strata.protocol.message.WriteTxnMarkersResponseData;

import java.util.concurrent.CompletableFuture;

/**
 * Sends a WriteTxnMarkers request to the broker that leads the partitions it names (the
 * transaction coordinator's path to partitions led elsewhere). The future completes with the
 * broker's answer, or exceptionally when it could not be reached or did not answer in time;
 * {@link TransactionMarkers} turns both into per-partition errors that the coordinator retries.
 *
 * <p>Implementations are thread-safe; futures may complete on any thread.
 */
public interface RemoteMarkerWriter {
    /** The WriteTxnMarkers version sent: v1 (flexible), as Kafka's marker channel sends to brokers that do not need v2's TransactionVersion. */
    short WRITE_TXN_MARKERS_VERSION = 1;

    CompletableFuture<WriteTxnMarkersResponseData> send(int brokerId, String host, int port, WriteTxnMarkersRequestData request);

    /** No path to other brokers (a node built without an inter-broker client): every remote write fails, and is retried. */
    RemoteMarkerWriter NONE = (brokerId, host, port, request) -> CompletableFuture.failedFuture(
        new UnsupportedOperationException("no inter-broker client to write markers to broker " + brokerId));
}
