package io.strata.server.network;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code num.io.threads} threads that take requests from the {@link RequestChannel} and hand
 * them to the dispatcher. Nothing on these threads waits for disk sync, replication or a
 * timer: requests that must wait go to the purgatory and are answered from there.
 *
 * <p>{@link #resize} changes the number of threads while requests flow, as Kafka's
 * {@code KafkaRequestHandlerPool.resizeThreadPool} does for a dynamic {@code num.io.threads}:
 * new threads start at once; a surplus thread stops after the request it is handling (at most
 * one poll timeout later when idle), so no request is dropped. Threads are numbered from 0 up
 * and the highest-numbered ones stop first.
 *
 * <p>Thread contract: {@link #start}, {@link #resize} and {@link #shutdown} are serialised on
 * the pool; {@link #idleNanos} and {@link #threadCount} may be called from any thread.
 */
public final class RequestHandlerPool implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RequestHandlerPool.class);
    private static final long POLL_TIMEOUT_MS = 300;

    private final RequestChannel channel;
    private final RequestDispatcher dispatcher;
    /** The threads that run now, in thread-number order; guarded by {@code this} for writes. */
    private final List<Handler> handlers = new CopyOnWriteArrayList<>();
    /** Every thread ever started, stopped ones included, so that shutdown can wait for all of them. */
    private final List<Thread> started = new CopyOnWriteArrayList<>();
    /** Time the handler threads spent waiting for a request, for the idle-ratio metric. */
    private final LongAdder idleNanos = new LongAdder();
    private volatile boolean running = true;
    private boolean startCalled;

    /** One handler thread; {@code stopRequested} ends its loop after the current request. */
    private final class Handler implements Runnable {
        final Thread thread;
        volatile boolean stopRequested;
        /** When its current wait began, 0 while it works; so a scrape also counts waits still running. */
        volatile long idleSince;

        Handler(int number) {
            this.thread = new Thread(this, "strata-request-handler-" + number);
            this.thread.setDaemon(true);
        }

        @Override
        public void run() {
            while (!stopRequested && (running || channel.size() > 0)) {
                Request request;
                long idleStart = System.nanoTime();
                long dequeued;
                idleSince = idleStart;
                try {
                    request = channel.poll(POLL_TIMEOUT_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } finally {
                    dequeued = System.nanoTime();
                    idleSince = 0;
                    idleNanos.add(dequeued - idleStart);
                }
                if (request != null) {
                    handle(request, dequeued);
                }
            }
        }
    }

    public RequestHandlerPool(int threadCount, RequestChannel channel, RequestDispatcher dispatcher) {
        if (threadCount < 1) {
            throw new IllegalArgumentException("a request handler pool needs at least one thread: threadCount=" + threadCount);
        }
        this.channel = channel;
        this.dispatcher = dispatcher;
        for (int i = 0; i < threadCount; i++) {
            handlers.add(new Handler(i));
        }
    }

    public synchronized void start() {
        startCalled = true;
        for (Handler handler : handlers) {
            started.add(handler.thread);
            handler.thread.start();
        }
    }

    private void handle(Request request, long dequeuedNanos) {
        request.markDequeued(dequeuedNanos);
        try {
            dispatcher.dispatch(request);
            request.markLocalComplete(System.nanoTime());
        } catch (Throwable e) {
            // A bug, not bad input: bad input is answered by the handlers. Closing is what
            // Kafka does when it cannot build an error response.
            LOG.error("Unexpected failure handling {}", request, e);
            try {
                request.closeConnection("internal error: " + e);
            } catch (IllegalStateException alreadyAnswered) {
                LOG.debug("request was already answered", alreadyAnswered);
            }
        }
    }

    /**
     * Sets the number of handler threads. Growing starts the new threads (if the pool is
     * started); shrinking asks the highest-numbered ones to stop after their current request.
     *
     * @throws IllegalArgumentException if {@code threadCount < 1}
     */
    public synchronized void resize(int threadCount) {
        if (threadCount < 1) {
            throw new IllegalArgumentException("a request handler pool needs at least one thread: threadCount=" + threadCount);
        }
        if (!running) {
            return;
        }
        int before = handlers.size();
        while (handlers.size() < threadCount) {
            // As in Kafka, a new thread takes the next number after the running ones (a stopping one may still finish under it).
            Handler handler = new Handler(handlers.size());
            handlers.add(handler);
            if (startCalled) {
                started.add(handler.thread);
                handler.thread.start();
            }
        }
        while (handlers.size() > threadCount) {
            Handler surplus = handlers.remove(handlers.size() - 1);
            surplus.stopRequested = true;
        }
        if (before != threadCount) {
            LOG.info("Resized the request handler pool from {} to {} threads", before, threadCount);
        }
    }

    /** Nanoseconds the handler threads have spent waiting for requests, summed over threads. */
    public long idleNanos() {
        long now = System.nanoTime();
        long total = idleNanos.sum();
        for (Handler handler : handlers) {
            long since = handler.idleSince;
            if (since != 0) {
                total += Math.max(0, now - since);
            }
        }
        return total;
    }

    /** The number of threads the pool runs now (stopping surplus threads not counted). */
    public int threadCount() {
        return handlers.size();
    }

    /** Stops after the queued requests are handled, waiting up to {@code timeoutMs}. */
    public void shutdown(long timeoutMs) throws InterruptedException {
        List<Thread> threads;
        synchronized (this) {
            running = false;
            threads = new ArrayList<>(started);
        }
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        for (Thread thread : threads) {
            long remainingMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
            thread.join(remainingMs);
        }
    }

    @Override
    public void close() throws InterruptedException {
        shutdown(5_000);
    }
}
