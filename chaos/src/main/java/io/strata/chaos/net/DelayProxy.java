package io.strata.chaos.net;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Arrays;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * A TCP proxy that adds latency and jitter per direction, standing in for {@code tc netem}
 * (absent from the target kernel). It listens on one address and forwards every accepted
 * connection to one target; point a node's peer address (or a client's bootstrap) at
 * {@link #address()} to slow that path.
 *
 * <p>Per connection and direction, a reader thread reads chunks of at most
 * {@link #CHUNK_BYTES_MAX} bytes and stamps each with a release time
 * {@code max(previous release, read time + latency.nextNanos())}, so bytes keep their order and
 * jitter never reorders them; a writer thread writes each chunk once its release time has come.
 * Between them sits a queue of at most {@link #QUEUE_CHUNKS_MAX} chunks: when it is full the
 * reader stops reading and TCP flow control pushes back on the sender, so memory per direction
 * is bounded by {@code CHUNK_BYTES_MAX * QUEUE_CHUNKS_MAX} (1 MiB). At most
 * {@link #CONNECTIONS_MAX} connections are proxied at once; more are closed on accept.
 *
 * <p>End of stream is forwarded as a half-close ({@code shutdownOutput}) after the data before
 * it; an I/O error on either side closes both sockets of that connection, as a reset would.
 * The jitter of connection {@code n}'s direction {@code d} comes from
 * {@code new Random(seed * 31 + 2n + d)}: the same seed gives the same delays per chunk.
 *
 * <p>Thread-safe: {@link #setLatency} may be called at any time and applies to chunks read
 * afterwards; {@link #close} stops the accept thread and closes every connection. The errors
 * of connections (other than resets, which are ordinary here) are logged and counted
 * ({@link #connectionErrors()}).
 */
public final class DelayProxy implements AutoCloseable {
    /** The largest chunk read at once, and the granularity of the delay. */
    public static final int CHUNK_BYTES_MAX = 16 * 1024;
    /** Chunks queued per direction: with {@link #CHUNK_BYTES_MAX}, 1 MiB per direction at most. */
    public static final int QUEUE_CHUNKS_MAX = 64;
    /** Connections proxied at once; four threads each. */
    public static final int CONNECTIONS_MAX = 128;
    /** How long connecting to the target may take before the client's connection is closed. */
    public static final int CONNECT_TIMEOUT_MS = 10_000;

    private static final Logger LOG = LoggerFactory.getLogger(DelayProxy.class);
    /** The end-of-stream marker in a direction's queue. */
    private static final Chunk END = new Chunk(new byte[0], 0);

    private final InetSocketAddress target;
    private final long seed;
    private final LongSupplier nanoClock;
    private final ServerSocket server;
    private final Thread acceptThread;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicLong connectionCount = new AtomicLong();
    private final AtomicLong connectionErrors = new AtomicLong();
    private volatile Latency upstream;
    private volatile Latency downstream;
    private volatile boolean closed;

    /**
     * Binds {@code listen} (port 0 picks a free one) and starts accepting. {@code upstream} delays
     * bytes from the client to the target, {@code downstream} those back; {@code nanoClock} is a
     * monotonic clock in nanoseconds ({@code System::nanoTime} outside tests).
     */
    public DelayProxy(InetSocketAddress listen, InetSocketAddress target, Latency upstream, Latency downstream,
                      long seed, LongSupplier nanoClock) throws IOException {
        this.target = target;
        this.seed = seed;
        this.nanoClock = nanoClock;
        this.upstream = upstream;
        this.downstream = downstream;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(listen);
        this.acceptThread = new Thread(this::acceptLoop, "delay-proxy-accept-" + server.getLocalPort());
        acceptThread.setDaemon(true);
        acceptThread.start();
    }

    /** The address clients connect to. */
    public InetSocketAddress address() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    /** Changes both directions' latency for chunks read from now on. */
    public void setLatency(Latency upstream, Latency downstream) {
        this.upstream = upstream;
        this.downstream = downstream;
    }

    /** Connections accepted so far. */
    public long connectionCount() {
        return connectionCount.get();
    }

    /** Connections that ended with an unexpected error (logged), not counting resets and closes. */
    public long connectionErrors() {
        return connectionErrors.get();
    }

    /** Stops accepting and closes every proxied connection. Idempotent. */
    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        try {
            acceptThread.join(CONNECT_TIMEOUT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.error("Delay proxy {} stopped accepting", address(), e);
                    connectionErrors.incrementAndGet();
                }
                return;
            }
            if (sockets.size() >= 2 * CONNECTIONS_MAX) {
                LOG.warn("Delay proxy {} refuses a connection: {} connections open (max {})", address(), sockets.size() / 2, CONNECTIONS_MAX);
                closeQuietly(client);
                continue;
            }
            sockets.add(client);
            long index = connectionCount.getAndIncrement();
            Thread connector = new Thread(() -> connect(client, index), "delay-proxy-connect-" + index);
            connector.setDaemon(true);
            connector.start();
        }
    }

    private void connect(Socket client, long index) {
        Socket upstreamSocket = new Socket();
        sockets.add(upstreamSocket);
        try {
            client.setTcpNoDelay(true);
            upstreamSocket.setTcpNoDelay(true);
            upstreamSocket.connect(target, CONNECT_TIMEOUT_MS);
        } catch (IOException e) {
            LOG.info("Delay proxy {} cannot reach {}: {}", address(), target, e.toString());
            closeBoth(client, upstreamSocket);
            return;
        }
        startDirection(client, upstreamSocket, true, new Random(seed * 31 + 2 * index), index);
        startDirection(upstreamSocket, client, false, new Random(seed * 31 + 2 * index + 1), index);
    }

    private void startDirection(Socket from, Socket to, boolean isUpstream, Random random, long index) {
        BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUE_CHUNKS_MAX);
        String name = "delay-proxy-" + index + (isUpstream ? "-up" : "-down");
        Thread reader = new Thread(() -> readLoop(from, to, isUpstream, random, queue), name + "-read");
        Thread writer = new Thread(() -> writeLoop(from, to, queue), name + "-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private void readLoop(Socket from, Socket to, boolean isUpstream, Random random, BlockingQueue<Chunk> queue) {
        long previousReleaseNanos = Long.MIN_VALUE;
        try {
            InputStream in = from.getInputStream();
            byte[] buffer = new byte[CHUNK_BYTES_MAX];
            while (true) {
                int read = in.read(buffer);
                if (read < 0) {
                    queue.put(END);
                    return;
                }
                Latency latency = isUpstream ? upstream : downstream;
                long releaseNanos = nanoClock.getAsLong() + latency.nextNanos(random);
                // Jitter must never reorder bytes: a chunk leaves no earlier than the one before it.
                if (previousReleaseNanos != Long.MIN_VALUE && releaseNanos - previousReleaseNanos < 0) {
                    releaseNanos = previousReleaseNanos;
                }
                previousReleaseNanos = releaseNanos;
                queue.put(new Chunk(Arrays.copyOf(buffer, read), releaseNanos));
            }
        } catch (IOException e) {
            onError(from, to, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeBoth(from, to);
        }
    }

    private void writeLoop(Socket from, Socket to, BlockingQueue<Chunk> queue) {
        try {
            OutputStream out = to.getOutputStream();
            while (true) {
                Chunk chunk = queue.take();
                if (chunk == END) {
                    to.shutdownOutput();
                    closeIfBothShut(from, to);
                    return;
                }
                waitUntil(chunk.releaseNanos());
                out.write(chunk.bytes());
                out.flush();
            }
        } catch (IOException e) {
            onError(from, to, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeBoth(from, to);
        }
    }

    /** Parks until the monotonic clock reaches {@code deadlineNanos}: the delay itself, not a test wait. */
    private void waitUntil(long deadlineNanos) throws InterruptedException {
        long remaining;
        while ((remaining = deadlineNanos - nanoClock.getAsLong()) > 0) {
            LockSupport.parkNanos(remaining);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    private void onError(Socket from, Socket to, IOException e) {
        boolean ordinary = closed || from.isClosed() || to.isClosed() || e instanceof SocketException;
        if (!ordinary) {
            connectionErrors.incrementAndGet();
            LOG.warn("Delay proxy {} connection failed", address(), e);
        }
        closeBoth(from, to);
    }

    private void closeIfBothShut(Socket a, Socket b) {
        if (a.isOutputShutdown() && b.isOutputShutdown()) {
            closeBoth(a, b);
        }
    }

    private void closeBoth(Socket a, Socket b) {
        closeQuietly(a);
        closeQuietly(b);
    }

    private void closeQuietly(Socket socket) {
        sockets.remove(socket);
        try {
            socket.close();
        } catch (IOException e) {
            // Closing a socket that failed; the connection is over either way.
        }
    }

    /** Bytes read at one time, and when they may be written on. */
    private record Chunk(byte[] bytes, long releaseNanos) {
    }
}
