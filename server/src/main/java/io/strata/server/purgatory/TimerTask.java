package io.strata.server.purgatory;

/**
 * Work to run once, {@link #delayMs()} after it is added to a {@link Timer}.
 *
 * <p>A task is linked to at most one pending timer entry at a time. Adding it again
 * while it is pending moves it to the new deadline (the old entry is dropped); adding it
 * after it ran schedules it afresh. {@link #cancel()} unlinks it: once the timer has
 * claimed a task to run, cancelling no longer stops it, but a task cancelled before that
 * claim never runs.
 *
 * <p>Thread-safe: {@link #cancel()} may race with the timer's expiry and with re-adds; the
 * link is swapped under this task's monitor, and list surgery happens outside it so the
 * lock order stays bucket-then-entry everywhere.
 */
public abstract class TimerTask implements Runnable {
    /**
     * The longest delay a task may ask for. Every Kafka timeout (request, session,
     * rebalance, fetch max wait) is an int32 of milliseconds, and the bound keeps
     * {@code nowMs + delayMs} far from overflow.
     */
    public static final long MAX_DELAY_MS = Integer.MAX_VALUE;

    private final long delayMs;

    /**
     * The pending entry, or null when unscheduled, cancelled or claimed to run. Written
     * under this task's monitor; volatile for the lock-free {@link TimerTaskEntry#cancelled()}.
     */
    private volatile TimerTaskEntry entry;

    protected TimerTask(long delayMs) {
        if (delayMs < 0 || delayMs > MAX_DELAY_MS) {
            throw new IllegalArgumentException(
                "timer task delay must be in [0, " + MAX_DELAY_MS + "]: delayMs=" + delayMs);
        }
        this.delayMs = delayMs;
    }

    /** How long after being added this task runs. */
    public final long delayMs() {
        return delayMs;
    }

    /** Unschedules this task; a no-op if it is not pending. */
    public final void cancel() {
        TimerTaskEntry previous;
        synchronized (this) {
            previous = entry;
            entry = null;
        }
        if (previous != null) {
            previous.remove();
        }
    }

    /** Links this task to a new pending entry, dropping any older one. */
    final void link(TimerTaskEntry newEntry) {
        TimerTaskEntry previous;
        synchronized (this) {
            previous = entry;
            entry = newEntry;
        }
        if (previous != null && previous != newEntry) {
            previous.remove();
        }
    }

    /**
     * Claims this task for running on behalf of {@code expiredEntry}. Exactly one of a
     * claim and a {@link #cancel()} (or a re-add) of the same entry wins.
     */
    final synchronized boolean claim(TimerTaskEntry expiredEntry) {
        if (entry != expiredEntry) {
            return false;
        }
        entry = null;
        return true;
    }

    final TimerTaskEntry entry() {
        return entry;
    }
}
