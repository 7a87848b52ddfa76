package io.strata.server.replica.fetcher;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.server.replica.PollingThread;

/**
 * The thin runner of one {@link ReplicaFetcher}: a daemon thread named as Kafka names it
 * ({@code ReplicaFetcherThread-<fetcherId>-<leaderId>}) that calls {@link ReplicaFetcher#poll} in a
 * loop and waits in between until the time poll asked for, or until the fetcher wakes it (a request
 * completed, partitions were added). All logic lives in the fetcher; the loop is a
 * {@link PollingThread}. Used for endpoints without an event loop of their own (the broker's
 * endpoints have one and run on {@link EventLoopFetcherRunner}).
 *
 * <p>Never dies silently: an exception escaping poll is a bug, logged with the fetcher's name,
 * counted in {@link BackgroundErrors} under {@link #TASK}, and followed by a pause of
 * {@code replica.fetch.backoff.ms} before the loop goes on.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} from any thread.
 */
public final class ReplicaFetcherThread implements AutoCloseable {
    /** The {@link BackgroundErrors} task name. */
    public static final String TASK = "replica-fetcher";
    /** Longest wait between polls even without a wake-up: bounds the cost of a lost signal. */
    static final long MAX_IDLE_WAIT_MS = 1_000;
    /** How long close waits for the thread to end. */
    static final long JOIN_TIMEOUT_MS = 5_000;

    private final PollingThread thread;

    public ReplicaFetcherThread(ReplicaFetcher fetcher, Time time, BackgroundErrors errors, long errorBackoffMs) {
        this.thread = new PollingThread(fetcher.name(), fetcher::poll, time::hiResClockMs, errors, TASK, errorBackoffMs, MAX_IDLE_WAIT_MS,
            JOIN_TIMEOUT_MS);
        fetcher.setWakeup(thread::wakeUp);
    }

    public void start() {
        thread.start();
    }

    /** Stops the loop and waits for the thread; the fetcher itself is closed by its owner. */
    @Override
    public void close() {
        thread.close();
    }

    public boolean isAlive() {
        return thread.isAlive();
    }
}
