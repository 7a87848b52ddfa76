package io.strata.server.network;

import io.netty.buffer.ByteBuf;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.RequestHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * One request as it moves through the pipeline: read by a connection's event loop, queued in
 * the {@link RequestChannel}, handled by a handler thread (or later, from the purgatory), and
 * answered exactly once through {@link #respond}, {@link #respondWithoutResponse} or
 * {@link #closeConnection}.
 *
 * <p>Ownership: the request owns its frame buffer and the frame's reservation in the
 * {@link RequestMemoryPool} until it is answered; the body and any record sets parsed from it
 * are views of that buffer and must not be used after the answer. The network layer releases
 * both, once, on its event loop; handlers never touch reference counts.
 */
public final class Request {
    private final KafkaConnection connection;
    private final RequestHeader header;
    private final ByteBuf frame;
    /** Bytes of {@link #frame} reserved in the connection's memory pool. */
    private final int reservedBytes;
    private final ByteBuffer body;
    private final long receivedNanos;
    private volatile long dequeuedNanos;
    /** When the handler returned from dispatch; 0 until then. */
    private volatile long localCompleteNanos;
    /** When the request was answered (respond, no response, or close); 0 until then. */
    private volatile long responseNanos;
    private ApiMessage parsedBody;
    private boolean answered;
    /** Event loop only. */
    private boolean released;

    Request(KafkaConnection connection, RequestHeader header, ByteBuf frame, int reservedBytes, ByteBuffer body, long receivedNanos) {
        this.connection = connection;
        this.header = header;
        this.frame = frame;
        this.reservedBytes = reservedBytes;
        this.body = body;
        this.receivedNanos = receivedNanos;
    }

    public RequestHeader header() {
        return header;
    }

    public short apiVersion() {
        return header.apiVersion();
    }

    /** The request body bytes (after the header), a view of the frame. */
    public ByteBuffer bodyBuffer() {
        return body.duplicate();
    }

    /** The parsed body, once {@link #parseBody()} has run. */
    public ApiMessage body() {
        return parsedBody;
    }

    /**
     * Parses the body in the request's version (on the handler thread, off the event loop).
     *
     * @throws io.strata.protocol.ProtocolException if the bytes do not form a valid body
     */
    public ApiMessage parseBody() {
        if (parsedBody == null) {
            parsedBody = io.strata.protocol.Frames.parseRequestBody(header, body.duplicate());
        }
        return parsedBody;
    }

    @SuppressWarnings("unchecked")
    public <T extends ApiMessage> T body(Class<T> type) {
        return (T) parsedBody;
    }

    public InetSocketAddress clientAddress() {
        return connection.remoteAddress();
    }

    /**
     * Who sent this request, as Kafka names principals: {@code User:<subject DN>} (after
     * {@code ssl.principal.mapping.rules}) from a TLS client certificate, else {@code User:ANONYMOUS}.
     */
    public io.strata.metadata.authorizer.KafkaPrincipal principal() {
        return connection.principal();
    }

    /** The client's host as ACLs name it: its IP address in text form. */
    public String clientHost() {
        InetSocketAddress address = clientAddress();
        return address == null || address.getAddress() == null ? "" : address.getAddress().getHostAddress();
    }

    public String listenerName() {
        return connection.listenerName();
    }

    public String connectionId() {
        return connection.id();
    }

    /**
     * Runs {@code action} once the connection this request came on has closed, for whatever reason
     * (peer closed, reset, or closed by us); at once if it already has. The action runs on the
     * connection's event loop (or the calling thread when already closed), so it must be short and
     * must not block. Each call registers one more action for the connection's lifetime: callers
     * register once per connection, not per request.
     */
    public void whenConnectionClosed(Runnable action) {
        connection.whenClosed(action);
    }

    public long receivedNanos() {
        return receivedNanos;
    }

    public long dequeuedNanos() {
        return dequeuedNanos;
    }

    void markDequeued(long nanos) {
        this.dequeuedNanos = nanos;
    }

    /** When the handler thread returned from dispatching this request; 0 if it has not yet. */
    public long localCompleteNanos() {
        return localCompleteNanos;
    }

    void markLocalComplete(long nanos) {
        this.localCompleteNanos = nanos;
    }

    /** When the request was answered; 0 if it has not been. */
    public long responseNanos() {
        return responseNanos;
    }

    /** Sends {@code response} in the request's version. May be called from any thread, once. */
    public void respond(ApiMessage response) {
        respond(response, header.apiVersion());
    }

    /** Sends {@code response} in {@code version} (ApiVersions answers unknown versions in v0). */
    public void respond(ApiMessage response, short version) {
        markAnswered();
        connection.observer().responseCreated(this, response);
        connection.sendResponse(this, response, version);
    }

    /** Completes a request that gets no response (Produce with acks=0). */
    public void respondWithoutResponse() {
        markAnswered();
        connection.completeWithoutResponse(this);
    }

    /** Closes the connection instead of answering, as Kafka does for requests it cannot parse. */
    public void closeConnection(String reason) {
        markAnswered();
        connection.closeForRequest(this, reason);
    }

    private synchronized void markAnswered() {
        if (answered) {
            throw new IllegalStateException("request answered twice: " + header.api().apiName + " correlationId=" + header.correlationId()
                + " connection=" + connection.id());
        }
        answered = true;
        responseNanos = System.nanoTime();
    }

    /** Frees the frame and returns its reservation to the pool. Once, on the connection's event loop, after the answer. */
    void release() {
        if (released) {
            throw new IllegalStateException("request released twice: " + this);
        }
        released = true;
        frame.release();
        connection.memoryPool().release(reservedBytes);
    }

    @Override
    public String toString() {
        return header.api().apiName + " v" + header.apiVersion() + " correlationId=" + header.correlationId()
            + " clientId=" + header.clientId() + " from " + connection.id();
    }
}
