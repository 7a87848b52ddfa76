package io.strata.server.network;

import io.strata.protocol.ApiMessage;

/**
 * What the network layer reports as requests and connections come and go, for metrics. Every
 * method runs on a request path (an event loop, a handler thread or a purgatory thread), so an
 * implementation must not block, lock or allocate per call.
 *
 * <p>The timestamps of a request's stages ({@link Request#receivedNanos()},
 * {@link Request#dequeuedNanos()}, {@link Request#localCompleteNanos()},
 * {@link Request#responseNanos()}) are all set by the time {@link #requestCompleted} runs.
 */
public interface NetworkObserver {
    /** Observes nothing. */
    NetworkObserver NONE = new NetworkObserver() {
    };

    /** A connection on {@code listenerName} was accepted (and admitted by the connection quotas). Event loop. */
    default void connectionOpened(String listenerName) {
    }

    /** An admitted connection on {@code listenerName} closed. Event loop. */
    default void connectionClosed(String listenerName) {
    }

    /** A TLS handshake (or, later, a SASL exchange) on {@code listenerName} succeeded. Event loop. */
    default void authenticationSucceeded(String listenerName) {
    }

    /** A TLS handshake on {@code listenerName} failed (untrusted or missing certificate, no common protocol or cipher). Event loop. */
    default void authenticationFailed(String listenerName) {
    }

    /** A handler answered {@code request} with {@code response}, on the answering thread, before it is encoded. */
    default void responseCreated(Request request, ApiMessage response) {
    }

    /**
     * The request left the pipeline: its response was written (or failed to be), it needed none,
     * or its connection was closed instead. Event loop, before the request's buffer is released.
     */
    default void requestCompleted(Request request, long completedNanos) {
    }
}
