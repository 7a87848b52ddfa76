package io.strata.server.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.Frames;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.RequestHeader;
import io.strata.protocol.message.ResponseHeaderData;
import io.strata.server.security.SslEngineFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLException;

/**
 * One client connection: splits the socket's bytes into length-prefixed frames and lets exactly
 * one request per connection be in the pipeline at a time, as Kafka does: clients rely on
 * responses coming back in request order, and an idempotent producer's pipelined batches must
 * be appended in the order sent.
 *
 * <p>Memory: a connection holds at most two requests: the one in the pipeline (request
 * channel, handler, purgatory, response write) and one frame beyond it, complete or still
 * arriving. Every frame's size is reserved in the broker's {@link RequestMemoryPool} when its
 * length prefix has been read, before any of its bytes are buffered; a prefix of a negative size
 * or above {@code socket.request.max.bytes} closes the connection instead. The reservation goes
 * with the frame into its {@link Request} and is returned exactly once: when the request is
 * answered (response written or failed to write, no response needed, or the connection closed
 * instead), or when the frame is dropped because the connection closed first.
 *
 * <p>Backpressure: the connection stops reading from its socket (auto-read off) while its frame
 * beyond the one in flight is complete, while that frame's reservation waits for the pool, and
 * while the request channel is full; it resumes when the reason goes away. Bytes read but not
 * yet framed (what one read returned after reading stopped) are not reserved; they are at most
 * {@link #UNFRAMED_BYTES_MAX} (one read loop of {@link SocketServer}'s receive buffers), and a
 * transport that delivers more while reading is off is a bug that closes the connection.
 *
 * <p>TLS: on an SSL listener an {@link SslHandler} sits below this handler, so every byte read
 * here was decrypted after a completed handshake and every response is encrypted (record sets are
 * then copied from their segment files into pooled direct buffers: sendfile cannot encrypt).
 * The handshake's outcome sets the connection's {@link #principal()} ({@code User:} + the client
 * certificate's mapped subject DN, or {@code User:ANONYMOUS}); a failed handshake is logged with
 * the peer, counted ({@link NetworkObserver#authenticationFailed}) and closes the connection.
 * A PLAINTEXT connection's principal is {@code User:ANONYMOUS} from the start.
 *
 * <p>Threading: all state is confined to the channel's event loop, except the response
 * methods and the memory grant, which other threads call and which hop onto the event loop.
 */
final class KafkaConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaConnection.class);
    /** Bytes of the length prefix of a frame. */
    private static final int SIZE_PREFIX_BYTES = Frames.SIZE_PREFIX_BYTES;
    /**
     * Unframed bytes a connection may hold: everything one read loop can deliver (messages per
     * read times the largest receive buffer), the most that arrives after auto-read goes off.
     */
    static final int UNFRAMED_BYTES_MAX = SocketServer.READS_PER_LOOP_MAX * SocketServer.RECEIVE_BUFFER_MAX_BYTES;
    private static final AtomicLong IDS = new AtomicLong();

    private final String listenerName;
    private final RequestChannel requestChannel;
    private final ConnectionQuotas quotas;
    private final NetworkObserver observer;
    private final RequestMemoryPool memoryPool;
    private final int maxRequestBytes;
    private final MemoryWaiter memoryWaiter = new MemoryWaiter();
    private final String id;
    /** The listener's TLS side; null on a PLAINTEXT listener. */
    private final SslEngineFactory tls;
    /** Who the peer proved to be; null on a TLS connection until its handshake completes. Read by handler threads. */
    private volatile io.strata.metadata.authorizer.KafkaPrincipal principal;
    private Channel channel;
    private InetSocketAddress remoteAddress;
    private boolean counted;

    /** Socket bytes not framed yet; null when there are none. */
    private ByteBuf unframed;
    /** The length prefix being read: its value so far and how many of its bytes were read. */
    private int sizePrefix;
    private int sizePrefixBytesRead;
    /** The size of the frame after the one in flight once its prefix is read; -1 while reading a prefix. */
    private int nextFrameSize = -1;
    /** The next frame's reservation waits in the pool. */
    private boolean awaitingMemory;
    /** The next frame's bytes (its reservation granted), while they arrive. */
    private ByteBuf nextFrame;
    /** The next frame once complete, waiting for the one in flight; its {@code nextFrameSize} bytes are reserved. */
    private ByteBuf completeFrame;
    private int completeFrameReservedBytes;
    /** A request of this connection is in the pipeline. */
    private boolean inFlight;
    /** {@link #completeFrame} waits for room in the request channel. */
    private boolean parked;
    /** The peer closed; what it sent before is still processed. */
    private boolean inputClosed;
    /** We closed; nothing more is processed. */
    private boolean closed;

    KafkaConnection(String listenerName, RequestChannel requestChannel, ConnectionQuotas quotas, RequestMemoryPool memoryPool,
                    int maxRequestBytes, NetworkObserver observer) {
        this(listenerName, requestChannel, quotas, memoryPool, maxRequestBytes, observer, null);
    }

    /** @param tls the listener's TLS side (an {@link SslHandler} precedes this handler), or null for PLAINTEXT */
    KafkaConnection(String listenerName, RequestChannel requestChannel, ConnectionQuotas quotas, RequestMemoryPool memoryPool,
                    int maxRequestBytes, NetworkObserver observer, SslEngineFactory tls) {
        this.tls = tls;
        this.principal = tls == null ? io.strata.metadata.authorizer.KafkaPrincipal.ANONYMOUS : null;
        this.listenerName = listenerName;
        this.requestChannel = requestChannel;
        this.quotas = quotas;
        this.memoryPool = memoryPool;
        this.maxRequestBytes = maxRequestBytes;
        this.observer = observer;
        this.id = listenerName + "-" + IDS.incrementAndGet();
    }

    String id() {
        return id + (remoteAddress == null ? "" : "@" + remoteAddress);
    }

    String listenerName() {
        return listenerName;
    }

    InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    /** The authenticated principal ({@code User:...}); null only on a TLS connection before its handshake completed. */
    io.strata.metadata.authorizer.KafkaPrincipal principal() {
        return principal;
    }

    /** See {@link Request#whenConnectionClosed}; only once the channel is active (a request exists). */
    void whenClosed(Runnable action) {
        channel.closeFuture().addListener(future -> action.run());
    }

    NetworkObserver observer() {
        return observer;
    }

    RequestMemoryPool memoryPool() {
        return memoryPool;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        remoteAddress = (InetSocketAddress) channel.remoteAddress();
        if (!quotas.tryAcquire(remoteAddress.getAddress())) {
            LOG.info("Refusing connection from {}: connection limit reached", remoteAddress);
            closed = true;
            channel.close();
            return;
        }
        counted = true;
        observer.connectionOpened(listenerName);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        ByteBuf bytes = (ByteBuf) message;
        if (closed) {
            bytes.release();
            return;
        }
        if (principal == null) {
            // SslHandler passes on application data only after the handshake, whose event comes first.
            bytes.release();
            throw new IllegalStateException("data before the TLS handshake completed on " + id());
        }
        appendUnframed(bytes);
        if (unframed.readableBytes() > UNFRAMED_BYTES_MAX) {
            LOG.warn("Closing connection {}: {} unframed bytes arrived while reading was off (at most {} expected)", id(),
                unframed.readableBytes(), UNFRAMED_BYTES_MAX);
            close();
            return;
        }
        advance();
    }

    private void appendUnframed(ByteBuf bytes) {
        if (unframed == null) {
            unframed = bytes;
            return;
        }
        // Only while reading is off do bytes stay unframed, so this copy is rare and small.
        ByteBuf merged = channel.alloc().buffer(unframed.readableBytes() + bytes.readableBytes());
        merged.writeBytes(unframed).writeBytes(bytes);
        unframed.release();
        bytes.release();
        unframed = merged;
    }

    /**
     * Moves everything as far as the limits allow: the complete frame into the pipeline, then
     * unframed bytes into the next frame, then sets whether the socket is read.
     */
    private void advance() {
        maybeDispatch();
        while (!closed && completeFrame == null && !awaitingMemory && unframed != null) {
            if (nextFrame == null) {
                readSizePrefix();
            } else {
                fillNextFrame();
            }
            if (unframed != null && !unframed.isReadable()) {
                releaseUnframed();
            }
        }
        if (inputClosed && !closed) {
            discardWhatCannotComplete();
        }
        updateAutoRead();
    }

    private void readSizePrefix() {
        while (sizePrefixBytesRead < SIZE_PREFIX_BYTES && unframed.isReadable()) {
            sizePrefix = (sizePrefix << 8) | unframed.readUnsignedByte();
            sizePrefixBytesRead++;
        }
        if (sizePrefixBytesRead < SIZE_PREFIX_BYTES) {
            return;
        }
        int size = sizePrefix;
        sizePrefix = 0;
        sizePrefixBytesRead = 0;
        if (size < 0 || size > maxRequestBytes) {
            // Kafka's InvalidReceiveException: refused before a byte of the frame is buffered.
            LOG.info("Closing connection {}: request size {} is outside 0..{} (socket.request.max.bytes)", id(), size, maxRequestBytes);
            close();
            return;
        }
        nextFrameSize = size;
        if (memoryPool.tryReserve(size, memoryWaiter)) {
            startNextFrame();
        } else {
            awaitingMemory = true;
        }
    }

    /** Allocates the next frame's buffer; its bytes are reserved. */
    private void startNextFrame() {
        if (unframed != null && unframed.readableBytes() == nextFrameSize) {
            // The read holds exactly this frame, as when a client sends a request and waits for
            // its answer: the read buffer becomes the frame, without a copy.
            ByteBuf frame = unframed;
            unframed = null; // owned by the frame from here: closing must not release it twice
            completeFrame(frame);
            return;
        }
        try {
            nextFrame = channel.alloc().buffer(nextFrameSize, nextFrameSize);
        } catch (OutOfMemoryError e) {
            // Direct memory is exhausted by something the pool does not count; this connection goes, the broker stays.
            LOG.warn("Closing connection {}: no memory for a request of {} bytes ({})", id(), nextFrameSize, e.toString());
            memoryPool.release(nextFrameSize);
            nextFrameSize = -1;
            close();
            return;
        }
        fillNextFrame();
    }

    private void fillNextFrame() {
        if (unframed != null) {
            nextFrame.writeBytes(unframed, Math.min(nextFrame.writableBytes(), unframed.readableBytes()));
        }
        if (nextFrame.writerIndex() == nextFrameSize) {
            ByteBuf frame = nextFrame;
            nextFrame = null;
            completeFrame(frame);
        }
    }

    /** {@code frame}'s readable bytes are the next frame, whole; its {@code nextFrameSize} bytes are reserved. */
    private void completeFrame(ByteBuf frame) {
        completeFrame = frame;
        completeFrameReservedBytes = nextFrameSize;
        nextFrameSize = -1;
        maybeDispatch();
    }

    /** The pool granted the next frame's reservation. Event loop. */
    private void onMemoryGranted(int bytes) {
        if (!awaitingMemory || bytes != nextFrameSize) {
            throw new IllegalStateException("unexpected memory grant on " + id() + ": bytes=" + bytes + " nextFrameSize=" + nextFrameSize
                + " awaitingMemory=" + awaitingMemory);
        }
        awaitingMemory = false;
        if (closed || (inputClosed && unframedBytes() < bytes)) {
            // Granted after the connection closed (the cancel came too late), or for a frame that can no longer arrive.
            memoryPool.release(bytes);
            nextFrameSize = -1;
            releaseUnframed();
            advance();
            return;
        }
        startNextFrame();
        advance();
    }

    private void updateAutoRead() {
        if (!channel.isActive()) {
            return;
        }
        boolean shouldRead = !closed && completeFrame == null && !awaitingMemory;
        if (channel.config().isAutoRead() != shouldRead) {
            channel.config().setAutoRead(shouldRead);
        }
    }

    /** Sends the complete frame into the pipeline if nothing of this connection is there. */
    private void maybeDispatch() {
        if (inFlight || parked || closed || completeFrame == null) {
            return;
        }
        ByteBuffer buffer = completeFrame.nioBuffer();
        RequestHeader header;
        try {
            header = Frames.parseRequestHeader(buffer);
        } catch (ProtocolException e) {
            LOG.info("Closing connection {}: malformed request header ({})", id(), e.getMessage());
            close();
            return;
        }
        Request request = new Request(this, header, completeFrame, completeFrameReservedBytes, buffer.slice(), System.nanoTime());
        if (!requestChannel.offer(request)) {
            parked = true;
            requestChannel.park(this);
            return;
        }
        completeFrame = null;
        completeFrameReservedBytes = 0;
        inFlight = true;
    }

    /** Called by the request channel when it has room again; any thread. */
    void retryDispatch() {
        execute(() -> {
            parked = false;
            if (closed) {
                // This wake-up was meant for a connection that can use it.
                requestChannel.wakeParked();
                return;
            }
            advance();
        });
    }

    /**
     * Encodes on the calling thread (spreading work off the event loop) and writes in order.
     * Record sets read from segment files go out as file regions (sendfile), not copies, except
     * over TLS, where they are copied into direct buffers for the SslHandler to encrypt.
     */
    void sendResponse(Request request, ApiMessage body, short version) {
        RequestHeader header = request.header();
        short headerVersion = header.responseHeaderVersion();
        ResponseHeaderData responseHeader = new ResponseHeaderData().setCorrelationId(header.correlationId());
        int headerSize = responseHeader.size(headerVersion);
        int bodySize = body.size(version);
        ResponseWriter writer = new ResponseWriter(channel.alloc(), Math.min(Frames.SIZE_PREFIX_BYTES + headerSize + bodySize, 64 * 1024), tls == null);
        List<Object> parts;
        try {
            writer.writeInt(headerSize + bodySize);
            responseHeader.write(writer, headerVersion);
            body.write(writer, version);
            parts = writer.finish();
        } catch (RuntimeException e) {
            writer.discard();
            LOG.error("Failed to encode the response to {}; closing the connection", request, e);
            closeForRequest(request, "response encoding failed");
            return;
        }
        for (int i = 0; i < parts.size() - 1; i++) {
            channel.write(parts.get(i), channel.voidPromise());
        }
        channel.writeAndFlush(parts.get(parts.size() - 1)).addListener(future -> onAnswered(request));
    }

    void completeWithoutResponse(Request request) {
        execute(() -> onAnswered(request));
    }

    void closeForRequest(Request request, String reason) {
        execute(() -> {
            LOG.info("Closing connection {} after {}: {}", id(), request, reason);
            // Closed first, so that answering does not send the frame behind it into the pipeline.
            close();
            onAnswered(request);
        });
    }

    private void execute(Runnable task) {
        try {
            channel.eventLoop().execute(task);
        } catch (RejectedExecutionException e) {
            // Only while the broker shuts its event loops down; the process is going away.
            LOG.debug("Event loop of connection {} is shut down; dropping a task", id());
        }
    }

    private void onAnswered(Request request) {
        observer.requestCompleted(request, System.nanoTime());
        request.release();
        inFlight = false;
        advance();
    }

    private void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (completeFrame != null) {
            completeFrame.release();
            memoryPool.release(completeFrameReservedBytes);
            completeFrame = null;
        }
        releaseNextFrame();
        cancelMemoryWait();
        releaseUnframed();
        sizePrefix = 0;
        sizePrefixBytesRead = 0;
        channel.close();
    }

    /**
     * After the peer closed: drops the frame that cannot fully arrive any more, with its
     * reservation, and the bytes of it that did. Complete frames stay and are processed.
     */
    private void discardWhatCannotComplete() {
        if (completeFrame != null) {
            return;
        }
        if (awaitingMemory) {
            if (unframedBytes() < nextFrameSize) {
                cancelMemoryWait();
                releaseUnframed();
            }
            return;
        }
        // Nothing is left unframed here (the loop in advance() framed it all): what started is incomplete.
        releaseNextFrame();
        sizePrefix = 0;
        sizePrefixBytesRead = 0;
    }

    private void releaseNextFrame() {
        if (nextFrame != null) {
            nextFrame.release();
            nextFrame = null;
            memoryPool.release(nextFrameSize);
            nextFrameSize = -1;
        }
    }

    /** Withdraws a waiting reservation; if the pool granted it already, {@link #onMemoryGranted} returns the bytes. */
    private void cancelMemoryWait() {
        if (awaitingMemory && memoryPool.cancel(memoryWaiter)) {
            awaitingMemory = false;
            nextFrameSize = -1;
        }
    }

    private int unframedBytes() {
        return unframed == null ? 0 : unframed.readableBytes();
    }

    private void releaseUnframed() {
        if (unframed != null) {
            unframed.release();
            unframed = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // Requests the peer sent before closing are still processed (an acks=0 producer closes
        // right after its last write); their responses, if any, go nowhere.
        inputClosed = true;
        if (!closed) {
            advance();
        }
        if (counted) {
            counted = false;
            quotas.release(remoteAddress.getAddress());
            observer.connectionClosed(listenerName);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof IdleStateEvent) {
            LOG.debug("Closing idle connection {}", id());
            close();
        } else if (event instanceof SslHandshakeCompletionEvent handshake && tls != null) {
            onHandshakeComplete(ctx, handshake);
        } else {
            ctx.fireUserEventTriggered(event);
        }
    }

    private void onHandshakeComplete(ChannelHandlerContext ctx, SslHandshakeCompletionEvent handshake) {
        if (!handshake.isSuccess()) {
            Throwable cause = handshake.cause();
            if (counted && tlsFailure(cause)) {
                // A peer that does not trust us, sends no certificate where one is required, or speaks no common protocol.
                observer.authenticationFailed(listenerName);
                LOG.info("TLS handshake with {} on listener {} failed: {}", remoteAddress, listenerName, cause.getMessage());
                LOG.debug("TLS handshake failure of connection {}", id(), cause);
            } else {
                LOG.debug("Connection {} closed during the TLS handshake: {}", id(), String.valueOf(cause));
            }
            close();
            return;
        }
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        Optional<String> mapped = tls.principal(ssl.engine().getSession());
        if (mapped.isEmpty()) {
            observer.authenticationFailed(listenerName);
            LOG.info("Refusing TLS connection from {} on listener {}: no ssl.principal.mapping.rules rule matches its certificate's subject",
                remoteAddress, listenerName);
            close();
            return;
        }
        // Parsed once here, not per request: the authorizer asks for it on every check.
        principal = io.strata.metadata.authorizer.KafkaPrincipal.parse(mapped.get());
        observer.authenticationSucceeded(listenerName);
        LOG.debug("TLS connection {} authenticated as {} ({})", id(), principal, ssl.engine().getSession().getProtocol());
    }

    private static boolean tlsFailure(Throwable cause) {
        return cause instanceof SSLException || cause instanceof DecoderException && cause.getCause() instanceof SSLException;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (tls != null && tlsFailure(cause)) {
            // Reported with the peer by onHandshakeComplete (handshake) or a TLS alert / bad record later: the connection goes.
            LOG.debug("TLS error on connection {}: {}", id(), cause.toString());
        } else if (cause instanceof IOException) {
            LOG.debug("Connection {} failed: {}", id(), cause.toString());
        } else {
            LOG.warn("Unexpected error on connection {}", id(), cause);
        }
        close();
    }

    /** State for tests: whether the connection reads its socket. */
    boolean isReading() {
        return channel.config().isAutoRead();
    }

    /** The pool's callback, on the releasing thread: hop onto this connection's event loop. */
    private final class MemoryWaiter implements RequestMemoryPool.Waiter {
        @Override
        public void onGranted(int bytes) {
            try {
                channel.eventLoop().execute(() -> onMemoryGranted(bytes));
            } catch (RejectedExecutionException e) {
                // The broker is shutting its event loops down: no connection reads any more, and
                // the pool goes with them. (Releasing here would grant the next waiter, whose
                // hop fails the same way, recursing once per waiting connection.)
                LOG.debug("Event loop of connection {} is shut down; {} granted request bytes stay reserved", id(), bytes);
            }
        }

        @Override
        public String toString() {
            return "connection " + id();
        }
    }
}
