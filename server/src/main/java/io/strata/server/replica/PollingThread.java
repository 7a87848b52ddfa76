package io.strata.server.replica;

import io.strata.common.BackgroundErrors;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A daemon thread that steps a poll-driven state machine: it calls {@code poll(nowMs)}, which
 * answers when it next wants to run, and waits until then (at most {@code maxIdleWaitMs}, which
 * bounds the cost of a lost wake-up) or until {@link #wakeUp} is called. The runner of the replica
 * fetchers and of the log-dir mover; all logic lives in what it polls.
 *
 * <p>Never dies silently: an exception escaping poll is a bug, logged with the thread's name,
 * counted in {@link BackgroundErrors} under the given task, and followed by a pause of
 * {@code errorBackoffMs} before the loop goes on.
 *
 * <p>Thread-safety: {@link #start}, {@link #wakeUp}, {@link #close} and {@link #isAlive} from any thread.
 */
public final class PollingThread implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PollingThread.class);

    private final String name;
    private final LongUnaryOperator poll;
    private final LongSupplier clockMs;
    private final BackgroundErrors errors;
    private final String task;
    private final long errorBackoffMs;
    private final long maxIdleWaitMs;
    private final long joinTimeoutMs;
    private final Thread thread;
    private final Object signal = new Object();
    /** Guarded by {@link #signal}. */
    private boolean signalled;
    private volatile boolean running = true;

    /**
     * @param poll    steps the state machine at {@code nowMs} and answers the time it next wants to run
     * @param clockMs the clock poll is given
     */
    public PollingThread(String name, LongUnaryOperator poll, LongSupplier clockMs, BackgroundErrors errors, String task,
                         long errorBackoffMs, long maxIdleWaitMs, long joinTimeoutMs) {
        this.name = name;
        this.poll = poll;
        this.clockMs = clockMs;
        this.errors = errors;
        this.task = task;
        this.errorBackoffMs = errorBackoffMs;
        this.maxIdleWaitMs = maxIdleWaitMs;
        this.joinTimeoutMs = joinTimeoutMs;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** Makes the loop poll again now (or right after the poll under way). */
    public void wakeUp() {
        synchronized (signal) {
            signalled = true;
            signal.notifyAll();
        }
    }

    private void run() {
        LOG.info("{} started", name);
        while (running) {
            long waitMs;
            try {
                long nowMs = clockMs.getAsLong();
                waitMs = Math.min(maxIdleWaitMs, poll.applyAsLong(nowMs) - nowMs);
            } catch (Throwable e) {
                errors.record(task);
                LOG.error("{} failed to poll; retrying in {} ms", name, errorBackoffMs, e);
                waitMs = errorBackoffMs;
            }
            try {
                awaitSignal(waitMs);
            } catch (InterruptedException e) {
                if (running) {
                    LOG.warn("{} interrupted while running; going on", name);
                }
            }
        }
        LOG.info("{} stopped", name);
    }

    private void awaitSignal(long waitMs) throws InterruptedException {
        synchronized (signal) {
            if (waitMs > 0 && !signalled && running) {
                signal.wait(waitMs);
            }
            signalled = false;
        }
    }

    /** Stops the loop and waits for the thread (a poll under way ends first) unless called on it. */
    @Override
    public void close() {
        running = false;
        wakeUp();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(joinTimeoutMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.warn("{} did not stop within {} ms", name, joinTimeoutMs);
            }
        }
    }

    public boolean isAlive() {
        return thread.isAlive();
    }
}
