package io.strata.server.network;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code num.io.threads} threads that take requests from the {@link RequestChannel} and hand
 * them to the dispatcher. Nothing on these threads waits for disk sync, replication or a
 * timer: requests that must wait go to the purgatory and are answered from there.
 */
public final class RequestHandlerPool implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RequestHandlerPool.class);
    private static final long POLL_TIMEOUT_MS = 300;

    private final RequestChannel channel;
    private final RequestDispatcher dispatcher;
    private final List<Thread> threads = new ArrayList<>();
    /** Time the handler threads spent waiting for a request, for the idle-ratio metric. */
    private final java.util.concurrent.atomic.LongAdder idleNanos = new java.util.concurrent.atomic.LongAdder();
    /** Per thread: when its current wait began, 0 while it works; so a scrape also counts waits still running. */
    private final java.util.concurrent.atomic.AtomicLongArray idleSince;
    private volatile boolean running = true;

    public RequestHandlerPool(int threadCount, RequestChannel channel, RequestDispatcher dispatcher) {
        this.channel = channel;
        this.dispatcher = dispatcher;
        this.idleSince = new java.util.concurrent.atomic.AtomicLongArray(threadCount);
        for (int i = 0; i < threadCount; i++) {
            int index = i;
            Thread thread = new Thread(() -> runLoop(index), "strata-request-handler-" + i);
            thread.setDaemon(true);
            threads.add(thread);
        }
    }

    public void start() {
        threads.forEach(Thread::start);
    }

    private void runLoop(int index) {
        while (running || channel.size() > 0) {
            Request request;
            long idleStart = System.nanoTime();
            idleSince.set(index, idleStart);
            try {
                request = channel.poll(POLL_TIMEOUT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long dequeued = System.nanoTime();
            idleSince.set(index, 0);
            idleNanos.add(dequeued - idleStart);
            if (request == null) {
                continue;
            }
            request.markDequeued(dequeued);
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
    }

    /** Nanoseconds the handler threads have spent waiting for requests, summed over threads. */
    public long idleNanos() {
        long now = System.nanoTime();
        long total = idleNanos.sum();
        for (int i = 0; i < idleSince.length(); i++) {
            long since = idleSince.get(i);
            if (since != 0) {
                total += Math.max(0, now - since);
            }
        }
        return total;
    }

    public int threadCount() {
        return threads.size();
    }

    /** Stops after the queued requests are handled, waiting up to {@code timeoutMs}. */
    public void shutdown(long timeoutMs) throws InterruptedException {
        running = false;
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
