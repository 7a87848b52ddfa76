package io.strata.it;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of one broker listener that loses chosen Produce responses the way a
 * network failure right after the broker's append would: the response is swallowed and both
 * sockets of that connection are closed. The client then retries the batches of every request
 * in flight on that connection, on a new connection, with the same producer id, epoch and
 * sequences; the broker has already appended at least the batch whose response was lost and
 * must answer the retry as a duplicate.
 *
 * <p>Everything else passes byte for byte. The broker must advertise the proxy's address
 * ({@link #port()} is bound in the constructor, before the broker starts) so clients that
 * bootstrap through the proxy keep using it after their first Metadata response.
 *
 * <h2>Frames</h2>
 * Both directions carry Kafka frames, big-endian:
 * <pre>
 *  request:  size i32 | api key i16 | api version i16 | correlation id i32 | rest of header and body
 *  response: size i32 | correlation id i32 | rest of header and body
 * </pre>
 * Responses are matched to requests by correlation id, per connection. A frame larger than
 * {@link #MAX_FRAME_BYTES} or smaller than its header is a protocol failure: the connection is
 * closed and the failure recorded in {@link #failures()}, which a test asserts is empty.
 *
 * <h2>Drop policy</h2>
 * Each Produce response is dropped with probability {@code 1 / dropOneIn} from a
 * {@link Random} seeded by the test, at most {@code maxDrops} times, and only while
 * {@link #stopDropping()} has not been called. Thread scheduling decides which response meets
 * which draw, so the seed fixes the rate, not the exact responses.
 *
 * <p>Threading: one accept thread, and two threads per connection, one per direction. The
 * client-to-broker thread records a request's api key before it forwards the request, so the
 * broker-to-client thread always finds it. Counters and the failure list are thread-safe.
 */
final class DroppingProxy implements AutoCloseable {
    /** Kafka clients' default {@code max.request.size} is 1 MiB and fetches here stay far below this. */
    static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;
    private static final short PRODUCE_API_KEY = 0;
    private static final int REQUEST_HEADER_PREFIX_BYTES = 2 + 2 + 4;
    private static final int RESPONSE_HEADER_PREFIX_BYTES = 4;
    private static final int CONNECT_TIMEOUT_MS = 10_000;

    private final ServerSocket listener;
    private final int dropOneIn;
    private final int maxDrops;
    /** Guarded by itself. */
    private final Random random;
    private final AtomicInteger produceResponsesForwarded = new AtomicInteger();
    private final AtomicInteger produceResponsesDropped = new AtomicInteger();
    private final AtomicInteger connectionsAccepted = new AtomicInteger();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final Set<Socket> openSockets = ConcurrentHashMap.newKeySet();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private volatile InetSocketAddress broker;
    private volatile boolean dropping = true;
    private volatile boolean closed;

    DroppingProxy(long seed, int dropOneIn, int maxDrops) throws IOException {
        if (dropOneIn < 1 || maxDrops < 0) {
            throw new IllegalArgumentException("need dropOneIn >= 1 and maxDrops >= 0: dropOneIn=" + dropOneIn + " maxDrops=" + maxDrops);
        }
        this.dropOneIn = dropOneIn;
        this.maxDrops = maxDrops;
        this.random = new Random(seed);
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Starts accepting; every accepted connection is forwarded to {@code brokerAddress}. */
    void start(InetSocketAddress brokerAddress) {
        this.broker = brokerAddress;
        startThread("proxy-accept", this::acceptLoop);
    }

    /** From now on every response is forwarded. */
    void stopDropping() {
        dropping = false;
    }

    int produceResponsesDropped() {
        return produceResponsesDropped.get();
    }

    int produceResponsesForwarded() {
        return produceResponsesForwarded.get();
    }

    int connectionsAccepted() {
        return connectionsAccepted.get();
    }

    /** Protocol failures seen (malformed frames, responses to no request); empty in a healthy run. */
    List<Throwable> failures() {
        return List.copyOf(failures);
    }

    private void startThread(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    failures.add(e);
                }
                return;
            }
            int id = connectionsAccepted.incrementAndGet();
            try {
                open(id, client);
            } catch (IOException e) {
                // The broker refused or the proxy is closing: the client sees a closed connection and retries.
                closeQuietly(client);
            }
        }
    }

    private void open(int id, Socket client) throws IOException {
        openSockets.add(client);
        Socket upstream = new Socket();
        openSockets.add(upstream);
        upstream.connect(broker, CONNECT_TIMEOUT_MS);
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        Connection connection = new Connection(client, upstream);
        startThread("proxy-requests-" + id, connection::pumpRequests);
        startThread("proxy-responses-" + id, connection::pumpResponses);
    }

    private boolean shouldDrop() {
        if (!dropping) {
            return false;
        }
        synchronized (random) {
            if (produceResponsesDropped.get() >= maxDrops) {
                return false;
            }
            if (random.nextInt(dropOneIn) != 0) {
                return false;
            }
            produceResponsesDropped.incrementAndGet();
            return true;
        }
    }

    private static byte[] readFrame(DataInputStream in, int headerPrefixBytes) throws IOException {
        int size = in.readInt();
        if (size < headerPrefixBytes || size > MAX_FRAME_BYTES) {
            throw new ProtocolFailure("frame size " + size + " outside [" + headerPrefixBytes + ", " + MAX_FRAME_BYTES + "]");
        }
        byte[] body = new byte[size];
        in.readFully(body);
        return body;
    }

    private static void writeFrame(DataOutputStream out, byte[] body) throws IOException {
        out.writeInt(body.length);
        out.write(body);
        out.flush();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket socket : openSockets) {
            closeQuietly(socket);
        }
        try {
            for (Thread thread : threads) {
                thread.join(CONNECT_TIMEOUT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A malformed frame: not an I/O failure of a closing connection, so it is recorded. */
    private static final class ProtocolFailure extends IOException {
        private static final long serialVersionUID = 1L;

        ProtocolFailure(String message) {
            super(message);
        }
    }

    /** One proxied connection: the client's socket, the broker's socket and the api key of each request awaiting its response. */
    private final class Connection {
        private final Socket client;
        private final Socket upstream;
        private final Map<Integer, Short> apiKeyByCorrelationId = new ConcurrentHashMap<>();

        Connection(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void pumpRequests() {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(client.getInputStream()));
                 DataOutputStream out = new DataOutputStream(new BufferedOutputStream(upstream.getOutputStream()))) {
                while (true) {
                    byte[] body = readFrame(in, REQUEST_HEADER_PREFIX_BYTES);
                    ByteBuffer header = ByteBuffer.wrap(body);
                    short apiKey = header.getShort(0);
                    int correlationId = header.getInt(4);
                    apiKeyByCorrelationId.put(correlationId, apiKey);
                    writeFrame(out, body);
                }
            } catch (IOException e) {
                recordUnlessClosing(e);
            } finally {
                closeBoth();
            }
        }

        void pumpResponses() {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(upstream.getInputStream()));
                 DataOutputStream out = new DataOutputStream(new BufferedOutputStream(client.getOutputStream()))) {
                while (true) {
                    byte[] body = readFrame(in, RESPONSE_HEADER_PREFIX_BYTES);
                    int correlationId = ByteBuffer.wrap(body).getInt(0);
                    Short apiKey = apiKeyByCorrelationId.remove(correlationId);
                    if (apiKey == null) {
                        throw new ProtocolFailure("response with correlation id " + correlationId + " answers no request in flight");
                    }
                    if (apiKey == PRODUCE_API_KEY) {
                        if (shouldDrop()) {
                            return; // swallowed; finally closes both sockets
                        }
                        produceResponsesForwarded.incrementAndGet();
                    }
                    writeFrame(out, body);
                }
            } catch (IOException e) {
                recordUnlessClosing(e);
            } finally {
                closeBoth();
            }
        }

        private void recordUnlessClosing(IOException e) {
            boolean connectionEnded = e instanceof EOFException || e instanceof SocketException;
            if (!connectionEnded) {
                failures.add(e);
            }
        }

        private void closeBoth() {
            closeQuietly(client);
            closeQuietly(upstream);
            openSockets.remove(client);
            openSockets.remove(upstream);
        }
    }
}
