package io.strata.server.purgatory;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A request-path operation that waits, without holding a thread, until a condition holds
 * (enough replicas acknowledged, enough bytes arrived, every member rejoined) or its
 * delay runs out, whichever is first.
 *
 * <p>Lifecycle:
 * <pre>
 *   pending ──tryComplete() sees the condition──▶ forceComplete() ──▶ onComplete()
 *      │
 *      └──────timer fires after delayMs───────▶ forceComplete() ──▶ onComplete(), then onExpiration()
 * </pre>
 * {@link #forceComplete()} is the only transition out of pending and exactly one caller
 * wins it, so {@link #onComplete()} runs exactly once and {@link #onExpiration()} at most
 * once, after {@code onComplete()} and only when the timer won.
 *
 * <p>Thread contract: {@link #tryComplete()} is always called holding this operation's
 * lock, so a subclass may read state shared with other holders of that lock without
 * further synchronisation. The lock is per operation by default; pass one in to share
 * it, e.g. the group lock for a delayed join so the group coordinator and the purgatory
 * never interleave on one group. {@code onComplete()} runs on whichever thread won, with
 * or without that lock; {@link #run()} runs on the timer's executor without it.
 */
public abstract class DelayedOperation extends TimerTask {
    private final AtomicBoolean completed = new AtomicBoolean(false);
    private final ReentrantLock lock;
    /** The owning purgatory's expiration count, set when the operation is watched. */
    private volatile LongAdder expirationCounter;

    protected DelayedOperation(long delayMs) {
        this(delayMs, new ReentrantLock());
    }

    protected DelayedOperation(long delayMs, ReentrantLock lock) {
        super(delayMs);
        if (lock == null) {
            throw new IllegalArgumentException("delayed operation lock must not be null: delayMs=" + delayMs);
        }
        this.lock = lock;
    }

    /**
     * Checks the completion condition and, if it holds, calls {@link #forceComplete()}.
     * Called holding this operation's lock.
     *
     * @return true if this call completed the operation (the result of {@code forceComplete()})
     */
    protected abstract boolean tryComplete();

    /** Sends the response or otherwise finishes the operation; runs exactly once. */
    protected abstract void onComplete();

    /** Extra work when the delay ran out (metrics, logging); runs after {@link #onComplete()}. */
    protected abstract void onExpiration();

    /**
     * Completes the operation if nothing else has: cancels its timer task and runs
     * {@link #onComplete()}. Exactly one call over the operation's life returns true.
     */
    public final boolean forceComplete() {
        if (!completed.compareAndSet(false, true)) {
            return false;
        }
        cancel();
        onComplete();
        return true;
    }

    public final boolean isCompleted() {
        return completed.get();
    }

    /** The timer fired: complete as expired unless someone completed it first. */
    @Override
    public final void run() {
        if (forceComplete()) {
            LongAdder counter = expirationCounter;
            if (counter != null) {
                counter.increment();
            }
            onExpiration();
        }
    }

    /** {@link #tryComplete()} under the lock; false without trying if already completed. */
    final boolean safeTryComplete() {
        lock.lock();
        try {
            return !isCompleted() && tryComplete();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: try once; if that fails run {@code beforeRetry} (the purgatory puts
     * the operation on its watch lists there) and try again. A state change made before
     * the operation was watched is seen by the second try; one made after it triggers a
     * check on a watch key, which takes the lock after this method releases it. So no
     * completion is missed.
     */
    final boolean safeTryCompleteOrElse(Runnable beforeRetry) {
        lock.lock();
        try {
            if (tryComplete()) {
                return true;
            }
            beforeRetry.run();
            return tryComplete();
        } finally {
            lock.unlock();
        }
    }

    final void countExpirationsIn(LongAdder counter) {
        this.expirationCounter = counter;
    }
}
