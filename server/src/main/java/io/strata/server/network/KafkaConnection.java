package io.strata.server.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.Frames;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.RequestHeader;
import io.strata.protocol.message.ResponseHeaderData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client connection. Frames arrive already split by the length-prefix decoder; this
 * handler keeps them in arrival order and lets exactly one request per connection be in the
 * pipeline at a time, as Kafka does: clients rely on responses coming back in request order,
 * and an idempotent producer's pipelined batches must be appended in the order sent.
 *
 * <p>Backpressure: when {@link #MAX_PENDING_FRAMES} frames wait, or the request channel is
 * full, the connection stops reading from its socket until it catches up.
 *
 * <p>Threading: all state is confined to the channel's event loop, except the response
 * methods, which handler threads call and which hop onto the event loop.
 */
final class KafkaConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaConnection.class);
    /** Frames read ahead of the one being processed before reading stops. */
    static final int MAX_PENDING_FRAMES = 16;
    private static final AtomicLong IDS = new AtomicLong();

    private final String listenerName;
    private final RequestChannel requestChannel;
    private final ConnectionQuotas quotas;
    private final NetworkObserver observer;
    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>();
    private final String id;
    private Channel channel;
    private InetSocketAddress remoteAddress;
    private boolean counted;
    private boolean inFlight;
    private boolean parked;
    private boolean closed;

    KafkaConnection(String listenerName, RequestChannel requestChannel, ConnectionQuotas quotas) {
        this(listenerName, requestChannel, quotas, NetworkObserver.NONE);
    }

    KafkaConnection(String listenerName, RequestChannel requestChannel, ConnectionQuotas quotas, NetworkObserver observer) {
        this.listenerName = listenerName;
        this.requestChannel = requestChannel;
        this.quotas = quotas;
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

    NetworkObserver observer() {
        return observer;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        remoteAddress = (InetSocketAddress) channel.remoteAddress();
        if (!quotas.tryAcquire(remoteAddress.getAddress())) {
            LOG.info("Refusing connection from {}: connection limit reached", remoteAddress);
            channel.close();
            return;
        }
        counted = true;
        observer.connectionOpened(listenerName);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        ByteBuf frame = (ByteBuf) message;
        if (closed) {
            frame.release();
            return;
        }
        pending.add(frame);
        updateAutoRead();
        maybeDispatch();
    }

    private void updateAutoRead() {
        if (!channel.isActive()) {
            return;
        }
        boolean shouldRead = !closed && !parked && pending.size() < MAX_PENDING_FRAMES;
        if (channel.config().isAutoRead() != shouldRead) {
            channel.config().setAutoRead(shouldRead);
        }
    }

    /** Sends the oldest waiting frame into the pipeline if nothing of this connection is there. */
    private void maybeDispatch() {
        if (inFlight || parked || closed || pending.isEmpty()) {
            return;
        }
        ByteBuf frame = pending.peek();
        ByteBuffer buffer = frame.nioBuffer();
        RequestHeader header;
        try {
            header = Frames.parseRequestHeader(buffer);
        } catch (ProtocolException e) {
            LOG.info("Closing connection {}: malformed request header ({})", id(), e.getMessage());
            close();
            return;
        }
        Request request = new Request(this, header, frame, buffer.slice(), System.nanoTime());
        if (!requestChannel.offer(request)) {
            parked = true;
            updateAutoRead();
            requestChannel.park(this);
            return;
        }
        pending.poll();
        inFlight = true;
        updateAutoRead();
    }

    /** Called by the request channel when it has room again; any thread. */
    void retryDispatch() {
        channel.eventLoop().execute(() -> {
            parked = false;
            maybeDispatch();
            updateAutoRead();
        });
    }

    /**
     * Encodes on the calling thread (spreading work off the event loop) and writes in order.
     * Record sets read from segment files go out as file regions (sendfile), not copies.
     */
    void sendResponse(Request request, ApiMessage body, short version) {
        RequestHeader header = request.header();
        short headerVersion = header.responseHeaderVersion();
        ResponseHeaderData responseHeader = new ResponseHeaderData().setCorrelationId(header.correlationId());
        int headerSize = responseHeader.size(headerVersion);
        int bodySize = body.size(version);
        ResponseWriter writer = new ResponseWriter(channel.alloc(), Math.min(Frames.SIZE_PREFIX_BYTES + headerSize + bodySize, 64 * 1024), true);
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
        channel.eventLoop().execute(() -> onAnswered(request));
    }

    void closeForRequest(Request request, String reason) {
        channel.eventLoop().execute(() -> {
            LOG.info("Closing connection {} after {}: {}", id(), request, reason);
            onAnswered(request);
            close();
        });
    }

    private void onAnswered(Request request) {
        observer.requestCompleted(request, System.nanoTime());
        request.release();
        inFlight = false;
        maybeDispatch();
        updateAutoRead();
    }

    private void close() {
        if (!closed) {
            closed = true;
            releasePending();
            channel.close();
        }
    }

    private void releasePending() {
        ByteBuf frame;
        while ((frame = pending.poll()) != null) {
            frame.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // Requests the peer sent before closing are still processed (an acks=0 producer closes
        // right after its last write); their responses, if any, go nowhere.
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
        } else {
            ctx.fireUserEventTriggered(event);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof TooLongFrameException || cause instanceof CorruptedFrameException) {
            LOG.info("Closing connection {}: {}", id(), cause.getMessage());
        } else if (cause instanceof IOException) {
            LOG.debug("Connection {} failed: {}", id(), cause.toString());
        } else {
            LOG.warn("Unexpected error on connection {}", id(), cause);
        }
        close();
    }
}
