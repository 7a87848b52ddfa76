package io.strata.server.network;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.strata.server.config.ListenerSecurity;
import io.strata.server.config.ServerConfig;
import io.strata.server.config.ServerConfig.Endpoint;
import io.strata.server.security.SslEngineFactory;
import io.strata.server.security.SslSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The network layer: one acceptor thread and {@code num.network.threads} event loops that
 * read length-prefixed frames into {@link KafkaConnection}s (refusing any whose prefix exceeds
 * {@code socket.request.max.bytes} before buffering it, and buffering none whose size the
 * {@link RequestMemoryPool} of {@code queued.max.request.bytes} has not granted) and write
 * responses. Uses epoll where available. An SSL listener ({@code listener.security.protocol.map})
 * puts Netty's {@link SslHandler} (JDK engine from its {@link SslEngineFactory}, built when this
 * server is constructed so that a bad key store stops the start) first in each connection's pipeline.
 *
 * <p>Memory held for requests, all connections together: at most the pool's capacity in
 * frames, plus per connection at most {@link KafkaConnection#UNFRAMED_BYTES_MAX} bytes read but
 * not yet framed (in practice one receive buffer of up to {@link #RECEIVE_BUFFER_MAX_BYTES}).
 */
public final class SocketServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SocketServer.class);
    /** Largest buffer one socket read fills (Netty's adaptive default, stated here because unframed bytes are bounded by it). */
    static final int RECEIVE_BUFFER_MAX_BYTES = 64 * 1024;
    private static final int RECEIVE_BUFFER_MIN_BYTES = 64;
    private static final int RECEIVE_BUFFER_INITIAL_BYTES = 2048;
    /** Reads one event-loop pass makes on a connection before serving others (Netty's default for stream channels). */
    static final int READS_PER_LOOP_MAX = 16;

    private final ServerConfig config;
    private final RequestChannel requestChannel;
    private final ConnectionQuotas quotas;
    private final RequestMemoryPool memoryPool;
    /** Shared by the listeners: Kafka's max.connection.creation.rate is broker-wide. */
    private final ConnectionRateThrottle creationRate;
    private final EventLoopGroup acceptor;
    private final EventLoopGroup eventLoops;
    private final Class<? extends ServerChannel> channelType;
    private final Map<String, Channel> listeners = new LinkedHashMap<>();
    /** The TLS side of each SSL listener, by listener name as configured. */
    private final Map<String, SslEngineFactory> tlsListeners = new LinkedHashMap<>();
    private final NetworkObserver observer;
    private final NamedThreadFactory networkThreads = new NamedThreadFactory("strata-network");

    public SocketServer(ServerConfig config, RequestChannel requestChannel) {
        this(config, requestChannel, NetworkObserver.NONE);
    }

    public SocketServer(ServerConfig config, RequestChannel requestChannel, NetworkObserver observer) {
        this.config = config;
        this.requestChannel = requestChannel;
        this.observer = observer;
        int maxRequestBytes = config.getInt(ServerConfig.SOCKET_REQUEST_MAX_BYTES);
        long queuedMaxRequestBytes = config.queuedMaxRequestBytes();
        this.memoryPool = queuedMaxRequestBytes > 0 ? RequestMemoryPool.bounded(queuedMaxRequestBytes, maxRequestBytes)
            : RequestMemoryPool.unbounded(maxRequestBytes);
        LOG.info("Request memory pool: {}", memoryPool.isBounded() ? memoryPool.capacityBytes() + " bytes" : "unbounded");
        this.quotas = new ConnectionQuotas(connectionLimits(config.getInt(ServerConfig.MAX_CONNECTIONS),
            config.getInt(ServerConfig.MAX_CONNECTIONS_PER_IP), config.maxConnectionsPerIpOverrides(),
            config.getInt(ServerConfig.MAX_CONNECTION_CREATION_RATE)));
        this.creationRate = new ConnectionRateThrottle(() -> quotas.limits().maxConnectionCreationRate(), System::nanoTime);
        for (Endpoint endpoint : config.listenerEndpoints()) {
            if (ListenerSecurity.SSL.equals(config.securityProtocol(endpoint.listenerName()))) {
                SslEngineFactory tls = SslEngineFactory.create(SslSettings.forListener(config.originals(), endpoint.listenerName()), true);
                tlsListeners.put(endpoint.listenerName(), tls);
                LOG.info("Listener {} uses TLS: {}", endpoint.listenerName(), tls);
            }
        }
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.channelType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        this.acceptor = new MultiThreadIoEventLoopGroup(1, new NamedThreadFactory("strata-acceptor"), factory);
        this.eventLoops = new MultiThreadIoEventLoopGroup(config.getInt(ServerConfig.NUM_NETWORK_THREADS), networkThreads, factory);
    }

    /** Binds every listener; port 0 picks a free port (see {@link #boundPort}). */
    public void start() throws InterruptedException {
        start(name -> true);
    }

    /**
     * Binds the listeners whose names {@code which} accepts and that are not bound yet (a node
     * binds its controller listeners first, so the quorum can form, and its broker listeners once
     * the broker is ready).
     */
    public synchronized void start(java.util.function.Predicate<String> which) throws InterruptedException {
        for (String listener : config.listeners()) {
            Endpoint endpoint = Endpoint.parse(listener);
            if (!which.test(endpoint.listenerName()) || listeners.containsKey(endpoint.listenerName())) {
                continue;
            }
            Channel channel = bootstrap(endpoint.listenerName()).bind(bindAddress(endpoint)).sync().channel();
            listeners.put(endpoint.listenerName(), channel);
            LOG.info("Listening for {} on {}", endpoint.listenerName(), channel.localAddress());
        }
    }

    private static InetSocketAddress bindAddress(Endpoint endpoint) {
        return endpoint.host().isEmpty() ? new InetSocketAddress(endpoint.port()) : new InetSocketAddress(endpoint.host(), endpoint.port());
    }

    private ServerBootstrap bootstrap(String listenerName) {
        int maxRequestBytes = config.getInt(ServerConfig.SOCKET_REQUEST_MAX_BYTES);
        long idleMs = config.getLong(ServerConfig.CONNECTIONS_MAX_IDLE_MS);
        SslEngineFactory tls = tlsListeners.get(listenerName);
        ServerBootstrap bootstrap = new ServerBootstrap()
            .group(acceptor, eventLoops)
            .channel(channelType)
            .handler(creationRate.new AcceptHandler())
            .option(ChannelOption.SO_BACKLOG, config.getInt(ServerConfig.SOCKET_LISTEN_BACKLOG_SIZE))
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
            .childOption(ChannelOption.RECVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(RECEIVE_BUFFER_MIN_BYTES, RECEIVE_BUFFER_INITIAL_BYTES,
                RECEIVE_BUFFER_MAX_BYTES).maxMessagesPerRead(READS_PER_LOOP_MAX))
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel channel) {
                    if (tls != null) {
                        channel.pipeline().addLast("tls", new SslHandler(tls.createServerEngine()));
                    }
                    channel.pipeline()
                        .addLast("idle", new IdleStateHandler(0, 0, idleMs, TimeUnit.MILLISECONDS))
                        .addLast("connection", new KafkaConnection(listenerName, requestChannel, quotas, memoryPool, maxRequestBytes, observer, tls));
                }
            });
        int sendBuffer = config.getInt(ServerConfig.SOCKET_SEND_BUFFER_BYTES);
        int receiveBuffer = config.getInt(ServerConfig.SOCKET_RECEIVE_BUFFER_BYTES);
        if (sendBuffer > 0) {
            bootstrap.childOption(ChannelOption.SO_SNDBUF, sendBuffer);
        }
        if (receiveBuffer > 0) {
            bootstrap.childOption(ChannelOption.SO_RCVBUF, receiveBuffer);
        }
        return bootstrap;
    }

    public int boundPort(String listenerName) {
        Channel channel = listeners.get(listenerName);
        if (channel == null) {
            throw new IllegalArgumentException("no listener named " + listenerName + "; have " + listeners.keySet());
        }
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    /** The first listener's name. */
    public String firstListenerName() {
        return listeners.keySet().iterator().next();
    }

    /** The budget of buffered request bytes ({@code queued.max.request.bytes}). */
    public RequestMemoryPool memoryPool() {
        return memoryPool;
    }

    /**
     * Applies new {@code max.connections}, {@code max.connections.per.ip},
     * {@code max.connections.per.ip.overrides} and {@code max.connection.creation.rate} values to
     * connections accepted from now on; open
     * connections stay, as in Kafka. Resolves the override host names here, so a name that does
     * not resolve leaves the previous limits in force.
     *
     * @throws IllegalArgumentException if an override host does not resolve
     */
    public void reconfigureConnectionQuotas(int maxConnections, int maxConnectionsPerIp, Map<String, Integer> perIpOverrides,
                                            int maxConnectionCreationRate) {
        quotas.reconfigure(connectionLimits(maxConnections, maxConnectionsPerIp, perIpOverrides, maxConnectionCreationRate));
    }

    private static ConnectionQuotas.Limits connectionLimits(int maxConnections, int maxConnectionsPerIp, Map<String, Integer> perIpOverrides,
                                                            int maxConnectionCreationRate) {
        Map<java.net.InetAddress, Integer> resolved = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> entry : perIpOverrides.entrySet()) {
            try {
                resolved.put(java.net.InetAddress.getByName(entry.getKey()), entry.getValue());
            } catch (java.net.UnknownHostException e) {
                throw new IllegalArgumentException(ServerConfig.MAX_CONNECTIONS_PER_IP_OVERRIDES + ": cannot resolve host " + entry.getKey(), e);
            }
        }
        return new ConnectionQuotas.Limits(maxConnections, maxConnectionsPerIp, resolved, maxConnectionCreationRate);
    }

    public int connectionCount() {
        return quotas.total();
    }

    /** The listener names, in configuration order (empty before {@link #start()}). */
    public java.util.Set<String> listenerNames() {
        return java.util.Collections.unmodifiableSet(listeners.keySet());
    }

    /** The network (event loop) threads started so far, for idle-ratio metrics. */
    public java.util.List<Thread> networkThreads() {
        return networkThreads.threads();
    }

    /** Stops accepting new connections; open ones continue. */
    public void stopAccepting() {
        for (Channel channel : listeners.values()) {
            channel.close().syncUninterruptibly();
        }
    }

    @Override
    public void close() {
        stopAccepting();
        acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        eventLoops.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static final class NamedThreadFactory implements java.util.concurrent.ThreadFactory {
        private final String prefix;
        private final java.util.concurrent.atomic.AtomicInteger count = new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.List<Thread> created = new java.util.concurrent.CopyOnWriteArrayList<>();

        NamedThreadFactory(String prefix) {
            this.prefix = prefix;
        }

        @Override
        public Thread newThread(Runnable task) {
            Thread thread = new io.netty.util.concurrent.FastThreadLocalThread(task, prefix + "-" + count.getAndIncrement());
            thread.setDaemon(false);
            created.add(thread);
            return thread;
        }

        java.util.List<Thread> threads() {
            return java.util.List.copyOf(created);
        }
    }
}
