package io.strata.server.replica;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;

/**
 * The thin runner of the {@link LogDirMover}: a daemon thread named as Kafka names its thread
 * ({@code ReplicaAlterLogDirsThread-0}) that calls {@link LogDirMover#poll} and waits until the
 * time poll asked for, or until the mover is woken (a move was requested). All logic lives in
 * the mover; the loop is a {@link PollingThread}.
 *
 * <p>Never dies silently: an exception escaping poll is a bug, logged, counted in
 * {@link BackgroundErrors} under {@link #TASK}, and followed by a pause of
 * {@link LogDirMover#FAILURE_BACKOFF_MS} before the loop goes on.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} from any thread.
 */
public final class LogDirMoverThread implements AutoCloseable {
    /** The {@link BackgroundErrors} task name. */
    public static final String TASK = "replica-alter-log-dirs";
    /** Kafka's thread name. */
    public static final String THREAD_NAME = "ReplicaAlterLogDirsThread-0";
    /** How long close waits for the thread to end (a step copies at most one chunk, or swaps). */
    static final long JOIN_TIMEOUT_MS = 10_000;

    private final PollingThread thread;

    public LogDirMoverThread(LogDirMover mover, Time time, BackgroundErrors errors) {
        this.thread = new PollingThread(THREAD_NAME, mover::poll, time::milliseconds, errors, TASK, LogDirMover.FAILURE_BACKOFF_MS,
            Long.MAX_VALUE, JOIN_TIMEOUT_MS);
        mover.setWakeup(thread::wakeUp);
    }

    public void start() {
        thread.start();
    }

    /** Stops the loop and waits for the thread (a step in progress ends first). */
    @Override
    public void close() {
        thread.close();
    }

    public boolean isAlive() {
        return thread.isAlive();
    }
}
