package io.strata.server.network;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * The bounded queue between the network event loops and the request handler threads
 * ({@code queued.max.requests}). Event loops never block on it: when it is full, the
 * connection stops reading and parks itself here; each time a handler takes a request it
 * wakes one parked connection, which retries. So a full channel is backpressure on the
 * sockets, never a dropped request and never unbounded growth.
 *
 * <p>Thread-safe.
 */
public final class RequestChannel {
    private final BlockingQueue<Request> queue;
    private final ConcurrentLinkedQueue<KafkaConnection> parked = new ConcurrentLinkedQueue<>();

    public RequestChannel(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("request channel capacity must be positive: capacity=" + capacity);
        }
        this.queue = new ArrayBlockingQueue<>(capacity);
    }

    /** Offers from an event loop; false means full and the caller must park. */
    boolean offer(Request request) {
        return queue.offer(request);
    }

    void park(KafkaConnection connection) {
        parked.add(connection);
        // The queue may have drained between the failed offer and parking: wake now if so.
        if (queue.remainingCapacity() > 0) {
            wakeOne();
        }
    }

    /** Takes the next request, waiting up to {@code timeoutMs}; null on timeout. */
    public Request poll(long timeoutMs) throws InterruptedException {
        Request request = queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
        if (request != null) {
            wakeOne();
        }
        return request;
    }

    /** Passes a wake-up on to another parked connection (the woken one had closed). */
    void wakeParked() {
        if (queue.remainingCapacity() > 0) {
            wakeOne();
        }
    }

    private void wakeOne() {
        KafkaConnection connection = parked.poll();
        if (connection != null) {
            connection.retryDispatch();
        }
    }

    public int size() {
        return queue.size();
    }
}
