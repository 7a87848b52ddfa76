package io.strata.server.purgatory;

/**
 * One scheduling of a {@link TimerTask}: the task, its absolute deadline on the timer's
 * clock, and its links in the {@link TimerTaskList} bucket that currently holds it.
 *
 * <p>Thread contract: {@link #list}, {@link #next} and {@link #previous} are written only
 * while holding the owning bucket's monitor and then this entry's monitor (in that
 * order); {@link #list} is volatile so {@link #remove()} can find the bucket to lock.
 */
final class TimerTaskEntry {
    /** The task, or null for a bucket's sentinel. */
    final TimerTask task;
    final long expirationMs;

    volatile TimerTaskList list;
    TimerTaskEntry next;
    TimerTaskEntry previous;

    TimerTaskEntry(TimerTask task, long expirationMs) {
        this.task = task;
        this.expirationMs = expirationMs;
    }

    /** True once the task was cancelled, re-added or claimed: this entry must not run. */
    boolean cancelled() {
        return task.entry() != this;
    }

    /** Unlinks this entry from whichever bucket holds it, retrying if it moves meanwhile. */
    void remove() {
        TimerTaskList current = list;
        while (current != null) {
            current.remove(this);
            current = list;
        }
    }
}
