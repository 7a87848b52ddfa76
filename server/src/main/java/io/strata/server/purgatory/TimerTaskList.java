package io.strata.server.purgatory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A bucket of a {@link TimingWheel}: a circular doubly linked list of entries around a
 * sentinel, plus the expiration time of the tick it currently stands for. Linking and
 * unlinking are O(1), which is what makes cancelling a delayed operation cheap.
 *
 * <p>A bucket is reused: once the wheel's clock passes its tick it is {@link #flush
 * flushed} and later stands for a tick one wheel revolution further on.
 *
 * <p>Thread-safe. Structural changes hold this bucket's monitor and then the entry's
 * monitor; no thread ever holds two bucket monitors, so there is no lock cycle.
 */
final class TimerTaskList {
    /** The expiration of a bucket that holds no tick (new, or just flushed). */
    static final long NO_EXPIRATION = Long.MIN_VALUE;

    /** Shared by every bucket of one timer: the number of entries linked anywhere. */
    private final AtomicInteger taskCounter;
    private final TimerTaskEntry sentinel = new TimerTaskEntry(null, NO_EXPIRATION);
    private final AtomicLong expirationMs = new AtomicLong(NO_EXPIRATION);

    TimerTaskList(AtomicInteger taskCounter) {
        this.taskCounter = taskCounter;
        sentinel.next = sentinel;
        sentinel.previous = sentinel;
    }

    /** Sets the tick this bucket stands for; true if it changed, so the caller must (re)queue it. */
    boolean setExpiration(long newExpirationMs) {
        return expirationMs.getAndSet(newExpirationMs) != newExpirationMs;
    }

    long expirationMs() {
        return expirationMs.get();
    }

    /**
     * Links {@code entry} at the tail, first unlinking it from any other bucket. An entry
     * whose task was cancelled or re-added in the meantime does not stay linked.
     */
    void add(TimerTaskEntry entry) {
        boolean done = false;
        while (!done) {
            entry.remove();
            synchronized (this) {
                synchronized (entry) {
                    if (entry.list == null) {
                        linkLast(entry);
                        // Check after linking: a cancel that ran meanwhile either sees the link
                        // (and unlinks it once we release the monitor) or is seen here.
                        if (entry.cancelled()) {
                            unlink(entry);
                        }
                        done = true;
                    }
                }
            }
        }
    }

    private void linkLast(TimerTaskEntry entry) {
        TimerTaskEntry tail = sentinel.previous;
        entry.next = sentinel;
        entry.previous = tail;
        entry.list = this;
        tail.next = entry;
        sentinel.previous = entry;
        taskCounter.incrementAndGet();
    }

    /** Unlinks {@code entry} if this bucket still holds it. */
    void remove(TimerTaskEntry entry) {
        synchronized (this) {
            synchronized (entry) {
                if (entry.list == this) {
                    unlink(entry);
                }
            }
        }
    }

    private void unlink(TimerTaskEntry entry) {
        entry.next.previous = entry.previous;
        entry.previous.next = entry.next;
        entry.next = null;
        entry.previous = null;
        entry.list = null;
        taskCounter.decrementAndGet();
    }

    /**
     * Unlinks every entry, resets the expiration, and then hands each entry to
     * {@code action} outside this bucket's monitor (the action usually re-adds it to the
     * wheel, possibly into another bucket).
     */
    void flush(Consumer<TimerTaskEntry> action) {
        List<TimerTaskEntry> drained = new ArrayList<>();
        synchronized (this) {
            for (TimerTaskEntry head = sentinel.next; head != sentinel; head = sentinel.next) {
                remove(head);
                drained.add(head);
            }
            expirationMs.set(NO_EXPIRATION);
        }
        drained.forEach(action);
    }

    /** Number of entries linked here; O(n), for tests and diagnostics. */
    synchronized int size() {
        int count = 0;
        for (TimerTaskEntry at = sentinel.next; at != sentinel; at = at.next) {
            count++;
        }
        return count;
    }
}
