package io.strata.server.replica;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thin runner of the {@link LogDirMover}: a daemon thread named as Kafka names its thread
 * ({@code ReplicaAlterLogDirsThread-0}) that calls {@link LogDirMover#poll} and waits until the
 * time poll asked for, or until the mover is woken (a move was requested). All logic lives in
 * the mover.
 *
 * <p>Never dies silently: an exception escaping poll is a bug, logged, counted in
 * {@link BackgroundErrors} under {@link #TASK}, and followed by a pause of
 * {@link LogDirMover#FAILURE_BACKOFF_MS} before the loop goes on.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} from any thread.
 */
public final class LogDirMoverThread implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogDirMoverThread.class);

    /** The {@link BackgroundErrors} task name. */
    public static final String TASK = "replica-alter-log-dirs";
    /** Kafka's thread name. */
    public static final String THREAD_NAME = "ReplicaAlterLogDirsThread-0";
    /** How long close waits for the thread to end (a step copies at most one chunk, or swaps). */
    static final long JOIN_TIMEOUT_MS = 10_000;

    private final LogDirMover mover;
    private final Time time;
    private final BackgroundErrors errors;
    private final Thread thread;
    private final Object signal = new Object();
    /** Guarded by {@link #signal}. */
    private boolean signalled;
    private volatile boolean running = true;

    public LogDirMoverThread(LogDirMover mover, Time time, BackgroundErrors errors) {
        this.mover = mover;
        this.time = time;
        this.errors = errors;
        this.thread = new Thread(this::run, THREAD_NAME);
        this.thread.setDaemon(true);
        mover.setWakeup(this::wakeUp);
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
        while (running) {
            long waitMs;
            try {
                long nowMs = time.milliseconds();
                waitMs = mover.poll(nowMs) - nowMs;
            } catch (Throwable e) {
                errors.record(TASK);
                LOG.error("{} failed to poll; retrying in {} ms", THREAD_NAME, LogDirMover.FAILURE_BACKOFF_MS, e);
                waitMs = LogDirMover.FAILURE_BACKOFF_MS;
            }
            try {
                awaitSignal(waitMs);
            } catch (InterruptedException e) {
                if (running) {
                    LOG.warn("{} interrupted while running; going on", THREAD_NAME);
                }
            }
        }
    }

    private void awaitSignal(long waitMs) throws InterruptedException {
        synchronized (signal) {
            if (waitMs > 0 && !signalled && running) {
                signal.wait(waitMs);
            }
            signalled = false;
        }
    }

    /** Stops the loop and waits for the thread (a step in progress ends first). */
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
                LOG.warn("{} did not stop within {} ms", THREAD_NAME, JOIN_TIMEOUT_MS);
            }
        }
    }

    public boolean isAlive() {
        return thread.isAlive();
    }
}
