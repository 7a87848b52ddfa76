package io.strata.server.replica.fetcher;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thin runner of one {@link ReplicaFetcher}: a daemon thread named as Kafka names it
 * ({@code ReplicaFetcherThread-<fetcherId>-<leaderId>}) that calls {@link ReplicaFetcher#poll} in a
 * loop and waits in between until the time poll asked for, or until the fetcher wakes it (a request
 * completed, partitions were added). All logic lives in the fetcher.
 *
 * <p>Never dies silently: an exception escaping poll is a bug, logged with the fetcher's name,
 * counted in {@link BackgroundErrors} under {@link #TASK}, and followed by a pause of
 * {@code replica.fetch.backoff.ms} before the loop goes on.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} from any thread.
 */
public final class ReplicaFetcherThread implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcherThread.class);

    /** The {@link BackgroundErrors} task name. */
    public static final String TASK = "replica-fetcher";
    /** Longest wait between polls even without a wake-up: bounds the cost of a lost signal. */
    static final long MAX_IDLE_WAIT_MS = 1_000;
    /** How long close waits for the thread to end. */
    static final long JOIN_TIMEOUT_MS = 5_000;

    private final ReplicaFetcher fetcher;
    private final Time time;
    private final BackgroundErrors errors;
    private final long errorBackoffMs;
    private final Thread thread;
    private final Object signal = new Object();
    /** Guarded by {@link #signal}. */
    private boolean signalled;
    private volatile boolean running = true;

    public ReplicaFetcherThread(ReplicaFetcher fetcher, Time time, BackgroundErrors errors, long errorBackoffMs) {
        this.fetcher = fetcher;
        this.time = time;
        this.errors = errors;
        this.errorBackoffMs = errorBackoffMs;
        this.thread = new Thread(this::run, fetcher.name());
        this.thread.setDaemon(true);
        fetcher.setWakeup(this::wakeUp);
    }

    public void start() {
        thread.start();
    }

    private void wakeUp() {
        synchronized (signal) {
            signalled = true;
            signal.notifyAll();
        }
    }

    private void run() {
        LOG.info("{} started", fetcher.name());
        while (running) {
            long waitMs;
            try {
                long nowMs = time.hiResClockMs();
                long nextPollMs = fetcher.poll(nowMs);
                waitMs = Math.min(MAX_IDLE_WAIT_MS, nextPollMs - nowMs);
            } catch (Throwable e) {
                errors.record(TASK);
                LOG.error("{} failed to poll; retrying in {} ms", fetcher.name(), errorBackoffMs, e);
                waitMs = errorBackoffMs;
            }
            try {
                awaitSignal(waitMs);
            } catch (InterruptedException e) {
                if (running) {
                    LOG.warn("{} interrupted while running; going on", fetcher.name());
                }
            }
        }
        LOG.info("{} stopped", fetcher.name());
    }

    private void awaitSignal(long waitMs) throws InterruptedException {
        if (waitMs <= 0) {
            return;
        }
        synchronized (signal) {
            if (!signalled && running) {
                signal.wait(waitMs);
            }
            signalled = false;
        }
    }

    /** Stops the loop and waits for the thread; the fetcher itself is closed by its owner. */
    @Override
    public void close() {
        running = false;
        wakeUp();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(JOIN_TIMEOUT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.warn("{} did not stop within {} ms", fetcher.name(), JOIN_TIMEOUT_MS);
            }
        }
    }

    public boolean isAlive() {
        return thread.isAlive();
    }
}
