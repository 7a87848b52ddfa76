package io.strata.server.network.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.strata.common.Time;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.server.security.SslEngineFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one client a node uses for requests to other nodes (broker to controller, broker to
 * broker, quorum traffic): one connection per destination node, opened on first use, requests
 * pipelined on it and answered in order, as Kafka's NetworkClient does.
 *
 * <ul>
 *   <li>Timeouts: every request completes within {@link Settings#requestTimeoutMs()}, whether it
 *       waited for a connection or for its answer. An answer that does not come in time also
 *       closes the connection (the peer is slow or gone, and later answers on it would be
 *       stale), as Kafka's client disconnects on a request timeout.</li>
 *   <li>Reconnect back-off: after a failed connection attempt or a lost connection the next
 *       attempt waits {@code reconnect.backoff.ms}, doubling up to {@code reconnect.backoff.max.ms}
 *       with 20% jitter; a connection that answered a request resets it (one that is accepted and
 *       dropped at once does not, so a flapping peer is not hammered). Requests sent meanwhile wait for
 *       the next attempt (or their timeout).</li>
 *   <li>Bounds: at most {@link Settings#maxQueuedPerNode()} requests wait per destination (more
 *       fail at once); response frames above {@link Settings#maxResponseBytes()} close the
 *       connection before they are buffered.</li>
 * </ul>
 *
 * <p>TLS: with {@link #useTls} every connection starts with a client-side TLS handshake (the
 * destination listener's {@code ssl.*} settings: trust store, the broker's own key store for
 * mTLS, {@code ssl.endpoint.identification.algorithm}); requests written meanwhile wait in the
 * {@link SslHandler} until it completes, and a failed handshake fails them like a lost connection.
 *
 * <p>Threading: callers on any thread; each destination's state lives on one event loop, and
 * futures complete there (callers must not block in their continuations).
 */
public final class InterBrokerClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(InterBrokerClient.class);

    /** A node to talk to. */
    public record Endpoint(int nodeId, String host, int port) {
        @Override
        public String toString() {
            return "node " + nodeId + " (" + host + ":" + port + ")";
        }
    }

    /**
     * @param reconnectBackoffMs    Kafka's {@code reconnect.backoff.ms} (50)
     * @param reconnectBackoffMaxMs Kafka's {@code reconnect.backoff.max.ms} (1000)
     */
    public record Settings(String clientId, int connectTimeoutMs, int requestTimeoutMs, long reconnectBackoffMs, long reconnectBackoffMaxMs,
                           int maxResponseBytes, int maxQueuedPerNode) {
        public Settings {
            if (connectTimeoutMs <= 0 || requestTimeoutMs <= 0 || reconnectBackoffMs <= 0 || reconnectBackoffMaxMs < reconnectBackoffMs
                || maxResponseBytes <= 0 || maxQueuedPerNode <= 0) {
                throw new IllegalArgumentException("invalid inter-broker client settings: " + this);
            }
        }

        public static Settings defaults(String clientId) {
            return new Settings(clientId, 10_000, 30_000, 50, 1_000, 100 * 1024 * 1024, 1_024);
        }
    }

    /** The request failed: the destination is unreachable, the connection broke, or the answer could not be read. */
    public static final class RequestFailedException extends IOException {
        private static final long serialVersionUID = 1L;

        public RequestFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Settings settings;
    private final EventLoopGroup group;
    private final boolean ownsGroup;
    private final Time time;
    private final Random random;
    private final Map<Integer, NodeConnection> connections = new ConcurrentHashMap<>();
    private volatile boolean closed;
    /** The client side of TLS for every connection, or null for PLAINTEXT. */
    private volatile SslEngineFactory tls;
    /** Told of every established connection that was lost (not of one this client shut down); never null. */
    private volatile java.util.function.Consumer<Endpoint> connectionLostListener = endpoint -> { };

    /** @param threads how many event loops serve the connections (one is plenty for control traffic) */
    public InterBrokerClient(Settings settings, int threads, Time time, Random random) {
        this(settings, new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("strata-inter-broker", true), NioIoHandler.newFactory()),
            true, time, random);
    }

    /**
     * A client whose connections live on {@code sharedGroup}, which the caller owns: {@link #close()}
     * closes this client's connections but leaves the group running. Components that need a
     * connection of their own per destination (each replica fetcher holds one long-polling Fetch
     * connection, and a node answers one request per connection at a time) create one such client
     * each without adding threads.
     */
    public InterBrokerClient(Settings settings, EventLoopGroup sharedGroup, Time time, Random random) {
        this(settings, sharedGroup, false, time, random);
    }

    private InterBrokerClient(Settings settings, EventLoopGroup group, boolean ownsGroup, Time time, Random random) {
        this.settings = settings;
        this.group = group;
        this.ownsGroup = ownsGroup;
        this.time = time;
        this.random = random;
    }

    /** Speaks TLS on every connection opened from now on ({@code null}: PLAINTEXT); set before the first request. Returns this client. */
    public InterBrokerClient useTls(SslEngineFactory clientSide) {
        this.tls = clientSide;
        return this;
    }

    /**
     * Sets who is told, on the connection's event loop (so it must not block), that an
     * established connection to a destination was lost: closed by the peer, reset, or closed here
     * after a request timeout or a bad answer; not when this client shuts the connection down. The
     * requests in flight on it have failed by then.
     */
    public void setConnectionLostListener(java.util.function.Consumer<Endpoint> listener) {
        this.connectionLostListener = java.util.Objects.requireNonNull(listener, "listener");
    }

    /**
     * Sends {@code request} at {@code version} to {@code destination}; the future completes with
     * the response body, or exceptionally with a {@link TimeoutException} or a
     * {@link RequestFailedException}.
     */
    public CompletableFuture<ApiMessage> send(Endpoint destination, ApiMessageType api, short version, ApiMessage request) {
        CompletableFuture<ApiMessage> future = new CompletableFuture<>();
        if (closed) {
            future.completeExceptionally(new RequestFailedException("the inter-broker client is closed", null));
            return future;
        }
        NodeConnection connection = connections.compute(destination.nodeId(), (id, existing) ->
            existing != null && existing.endpoint.equals(destination) ? existing : replace(existing, destination));
        connection.eventLoop.execute(() -> connection.enqueue(new Outgoing(api, version, request, future)));
        return future;
    }

    private NodeConnection replace(NodeConnection existing, Endpoint destination) {
        if (existing != null) {
            existing.eventLoop.execute(() -> existing.shutdown("the address of node " + destination.nodeId() + " changed"));
        }
        return new NodeConnection(destination, group.next());
    }

    @Override
    public void close() {
        closed = true;
        for (NodeConnection connection : connections.values()) {
            connection.eventLoop.execute(() -> connection.shutdown("the inter-broker client is closing"));
        }
        connections.clear();
        if (ownsGroup) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private record Outgoing(ApiMessageType api, short version, ApiMessage request, CompletableFuture<ApiMessage> future) {
    }

    /** A request on the wire, waiting for its answer. */
    private record InFlight(int correlationId, Outgoing outgoing, ScheduledFuture<?> timeout) {
    }

    /** The connection to one node; confined to its event loop. */
    private final class NodeConnection {
        final Endpoint endpoint;
        final EventLoop eventLoop;
        final ArrayDeque<Outgoing> waiting = new ArrayDeque<>();
        final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
        final Map<Outgoing, ScheduledFuture<?>> waitingTimeouts = new java.util.IdentityHashMap<>();
        Channel channel;
        boolean connecting;
        boolean shutDown;
        long backoffMs;
        long nextAttemptMs;
        ScheduledFuture<?> reconnect;
        int nextCorrelationId;

        NodeConnection(Endpoint endpoint, EventLoop eventLoop) {
            this.endpoint = endpoint;
            this.eventLoop = eventLoop;
            this.backoffMs = settings.reconnectBackoffMs();
        }

        void enqueue(Outgoing outgoing) {
            if (shutDown) {
                outgoing.future().completeExceptionally(new RequestFailedException("the connection to " + endpoint + " is closed", null));
                return;
            }
            if (channel != null && channel.isActive()) {
                write(outgoing);
                return;
            }
            if (waiting.size() >= settings.maxQueuedPerNode()) {
                outgoing.future().completeExceptionally(new RequestFailedException(waiting.size() + " requests already wait for a connection to "
                    + endpoint, null));
                return;
            }
            waiting.add(outgoing);
            waitingTimeouts.put(outgoing, eventLoop.schedule(() -> expireWaiting(outgoing), settings.requestTimeoutMs(), TimeUnit.MILLISECONDS));
            maybeConnect();
        }

        private void expireWaiting(Outgoing outgoing) {
            if (waiting.remove(outgoing)) {
                waitingTimeouts.remove(outgoing);
                outgoing.future().completeExceptionally(new TimeoutException("no connection to " + endpoint + " within "
                    + settings.requestTimeoutMs() + " ms for " + outgoing.api().apiName));
            }
        }

        private void maybeConnect() {
            if (connecting || shutDown || (channel != null && channel.isActive()) || reconnect != null) {
                return;
            }
            long delayMs = nextAttemptMs - time.milliseconds();
            if (delayMs > 0) {
                reconnect = eventLoop.schedule(() -> {
                    reconnect = null;
                    maybeConnect();
                }, delayMs, TimeUnit.MILLISECONDS);
                return;
            }
            connecting = true;
            ChannelFuture connected = new Bootstrap()
                .group(eventLoop)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, settings.connectTimeoutMs())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel socket) {
                        SslEngineFactory clientSide = tls;
                        if (clientSide != null) {
                            socket.pipeline().addLast("tls", new SslHandler(clientSide.createClientEngine(endpoint.host(), endpoint.port())));
                        }
                        socket.pipeline().addLast(new LengthFieldBasedFrameDecoder(settings.maxResponseBytes(), 0, Frames.SIZE_PREFIX_BYTES,
                            0, Frames.SIZE_PREFIX_BYTES));
                        socket.pipeline().addLast(new ResponseHandler(NodeConnection.this));
                    }
                })
                .connect(endpoint.host(), endpoint.port());
            connected.addListener(result -> onConnectResult(connected));
        }

        private void onConnectResult(ChannelFuture connected) {
            connecting = false;
            if (shutDown) {
                connected.channel().close();
                return;
            }
            if (!connected.isSuccess()) {
                LOG.debug("Cannot connect to {}: {}", endpoint, connected.cause().toString());
                scheduleBackoff();
                // As Kafka's network client does: a failed connection fails what waited for it; callers retry on their own
                // terms (perhaps at another node: the quorum's new leader, a partition's new leader).
                failWaiting("cannot connect to " + endpoint + ": " + connected.cause());
                return;
            }
            channel = connected.channel();
            while (!waiting.isEmpty()) {
                Outgoing outgoing = waiting.poll();
                ScheduledFuture<?> timeout = waitingTimeouts.remove(outgoing);
                if (timeout != null) {
                    timeout.cancel(false);
                }
                write(outgoing);
            }
        }

        private void scheduleBackoff() {
            long jitter = (long) (backoffMs * 0.2 * (2 * random.nextDouble() - 1));
            nextAttemptMs = time.milliseconds() + Math.max(1, backoffMs + jitter);
            backoffMs = Math.min(settings.reconnectBackoffMaxMs(), backoffMs * 2);
        }

        private void write(Outgoing outgoing) {
            int correlationId = nextCorrelationId++ & Integer.MAX_VALUE;
            ByteBuffer frame;
            try {
                frame = Frames.encodeRequest(outgoing.api(), outgoing.version(), correlationId, settings.clientId(), outgoing.request());
            } catch (RuntimeException e) {
                outgoing.future().completeExceptionally(new RequestFailedException("cannot encode " + outgoing.api().apiName + " v"
                    + outgoing.version() + " for " + endpoint, e));
                return;
            }
            ScheduledFuture<?> timeout = eventLoop.schedule(() -> timeOut(correlationId), settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
            inFlight.add(new InFlight(correlationId, outgoing, timeout));
            channel.writeAndFlush(Unpooled.wrappedBuffer(frame));
        }

        private void timeOut(int correlationId) {
            for (InFlight request : inFlight) {
                if (request.correlationId() == correlationId) {
                    Outgoing outgoing = request.outgoing();
                    inFlight.remove(request);
                    outgoing.future().completeExceptionally(new TimeoutException(outgoing.api().apiName + " to " + endpoint
                        + " got no answer within " + settings.requestTimeoutMs() + " ms"));
                    disconnect("request timed out");
                    return;
                }
            }
        }

        void onFrame(ByteBuf frame) {
            InFlight request = inFlight.poll();
            if (request == null) {
                disconnect("an answer without a request");
                return;
            }
            request.timeout().cancel(false);
            ByteBuffer copy = ByteBuffer.allocate(frame.readableBytes());
            frame.readBytes(copy);
            copy.flip();
            try {
                ApiMessage response = Frames.parseResponse(request.outgoing().api(), request.outgoing().version(), copy, request.correlationId());
                backoffMs = settings.reconnectBackoffMs(); // the connection works: a later loss starts the back-off afresh
                request.outgoing().future().complete(response);
            } catch (RuntimeException e) { // ProtocolException, or a schema the bytes do not fit
                request.outgoing().future().completeExceptionally(new RequestFailedException("unreadable " + request.outgoing().api().apiName
                    + " answer from " + endpoint, e));
                disconnect("unreadable answer");
            }
        }

        void onInactive() {
            if (channel == null) {
                return;
            }
            channel = null;
            failInFlight("the connection to " + endpoint + " was lost");
            if (!shutDown) {
                scheduleBackoff();
                if (!waiting.isEmpty()) {
                    maybeConnect();
                }
                try {
                    connectionLostListener.accept(endpoint);
                } catch (RuntimeException e) {
                    LOG.error("The listener of lost connections failed for {}", endpoint, e);
                }
            }
        }

        private void disconnect(String why) {
            LOG.debug("Closing the connection to {}: {}", endpoint, why);
            Channel open = channel;
            if (open != null) {
                onInactive();
                open.close();
            }
        }

        private void failWaiting(String why) {
            Outgoing outgoing;
            while ((outgoing = waiting.poll()) != null) {
                ScheduledFuture<?> timeout = waitingTimeouts.remove(outgoing);
                if (timeout != null) {
                    timeout.cancel(false);
                }
                outgoing.future().completeExceptionally(new RequestFailedException(why, null));
            }
        }

        private void failInFlight(String why) {
            InFlight request;
            while ((request = inFlight.poll()) != null) {
                request.timeout().cancel(false);
                request.outgoing().future().completeExceptionally(new RequestFailedException(why, null));
            }
        }

        void shutdown(String why) {
            shutDown = true;
            if (reconnect != null) {
                reconnect.cancel(false);
            }
            failWaiting(why);
            failInFlight(why);
            if (channel != null) {
                channel.close();
                channel = null;
            }
        }
    }

    /** Hands complete frames of one connection to its {@link NodeConnection}. */
    private static final class ResponseHandler extends ChannelInboundHandlerAdapter {
        private final NodeConnection connection;

        ResponseHandler(NodeConnection connection) {
            this.connection = connection;
        }

        @Override
        public void channelRead(ChannelHandlerContext context, Object message) {
            ByteBuf frame = (ByteBuf) message;
            try {
                if (context.channel() == connection.channel) {
                    connection.onFrame(frame);
                }
            } finally {
                frame.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext context) {
            if (context.channel() == connection.channel) {
                connection.onInactive();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
            LOG.debug("Connection to {} failed: {}", connection.endpoint, cause.toString());
            context.close();
        }
    }
}
