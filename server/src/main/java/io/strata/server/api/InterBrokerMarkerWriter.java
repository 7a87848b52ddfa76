package io.strata.server.api;

import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.WriteTxnMarkersRequestData;
import io.strata.protocol.message.WriteTxnMarkersResponseData;
import io.strata.server.network.client.InterBrokerClient;

import java.util.concurrent.CompletableFuture;

/**
 * {@link RemoteMarkerWriter} over the node's {@link InterBrokerClient}: one connection per
 * leader, the client's request timeout and reconnect back-off. Thread-safe.
 */
public final class InterBrokerMarkerWriter implements RemoteMarkerWriter {
    private final InterBrokerClient client;

    public InterBrokerMarkerWriter(InterBrokerClient client) {
        this.client = client;
    }

    @Override
    public CompletableFuture<WriteTxnMarkersResponseData> send(int brokerId, String host, int port, WriteTxnMarkersRequestData request) {
        return client.send(new InterBrokerClient.Endpoint(brokerId, host, port), ApiMessageType.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION,
            request).thenApply(response -> (WriteTxnMarkersResponseData) response);
    }
}
