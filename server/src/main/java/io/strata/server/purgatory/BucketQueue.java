package io.strata.server.purgatory;

import io.strata.common.Time;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The non-empty buckets of all levels of a timing wheel, ordered by expiration, with a
 * blocking poll for the earliest one to fall due.
 *
 * <p>This replaces {@link java.util.concurrent.DelayQueue}, whose notion of "due" is
 * hard-wired to {@link System#nanoTime()}: here "due" means
 * {@code expirationMs <= time.hiResClockMs()} on the injected {@link Time}, so a test
 * that advances a mock clock and then polls sees exactly the buckets that are due. Only
 * the bounded wait in {@link #poll(long)} is measured in real time, because a thread can
 * only park in real time; with a mock clock that wait simply ends at its timeout.
 *
 * <p>Each element is a snapshot {@code (expirationMs, bucket)}, so the order never
 * depends on a bucket's mutable expiration. Size is bounded by the number of buckets:
 * a bucket is offered only when its expiration changes, which happens at most once per
 * wheel revolution.
 *
 * <p>Thread-safe: every method holds one internal lock.
 */
final class BucketQueue {
    /** A bucket as it was when offered: the tick it stood for. */
    record ScheduledBucket(long expirationMs, TimerTaskList bucket) {
    }

    private final Time time;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition headChanged = lock.newCondition();
    private final PriorityQueue<ScheduledBucket> queue =
        new PriorityQueue<>(Comparator.comparingLong(ScheduledBucket::expirationMs));

    BucketQueue(Time time) {
        this.time = time;
    }

    void offer(TimerTaskList bucket, long expirationMs) {
        ScheduledBucket scheduled = new ScheduledBucket(expirationMs, bucket);
        lock.lock();
        try {
            queue.add(scheduled);
            if (queue.peek() == scheduled) {
                // A poller may be parked until a later head falls due; let it recompute.
                headChanged.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Removes and returns the earliest bucket if it is due now, else null; never blocks. */
    ScheduledBucket pollDue() {
        lock.lock();
        try {
            return pollDue(time.hiResClockMs());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes and returns the earliest bucket once it is due, waiting up to
     * {@code timeoutMs} of real time for that; null if none fell due.
     */
    ScheduledBucket poll(long timeoutMs) throws InterruptedException {
        if (timeoutMs < 0) {
            throw new IllegalArgumentException("poll timeout must not be negative: timeoutMs=" + timeoutMs);
        }
        long remainingNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        lock.lockInterruptibly();
        try {
            while (true) {
                long nowMs = time.hiResClockMs();
                ScheduledBucket due = pollDue(nowMs);
                if (due != null || remainingNs <= 0) {
                    return due;
                }
                long waitNs = waitNs(nowMs, remainingNs);
                long leftNs = headChanged.awaitNanos(waitNs);
                remainingNs -= waitNs - leftNs;
            }
        } finally {
            lock.unlock();
        }
    }

    int size() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    private ScheduledBucket pollDue(long nowMs) {
        ScheduledBucket head = queue.peek();
        if (head == null || head.expirationMs() > nowMs) {
            return null;
        }
        return queue.poll();
    }

    /** Park until the head is due or the timeout ends, whichever is first. */
    private long waitNs(long nowMs, long remainingNs) {
        ScheduledBucket head = queue.peek();
        if (head == null) {
            return remainingNs;
        }
        return Math.min(remainingNs, TimeUnit.MILLISECONDS.toNanos(head.expirationMs() - nowMs));
    }
}
