package io.strata.server.purgatory;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One level of a hierarchical timing wheel: {@code wheelSize} buckets of {@code tickMs}
 * each, so the level spans {@code intervalMs = tickMs * wheelSize}. A deadline too far
 * out for this level goes to an overflow level whose tick is this level's interval,
 * created on first need. When a coarse bucket falls due its entries are re-added from
 * the bottom level and cascade into finer buckets, until they land in a bucket of the
 * bottom level and finally fall due there.
 *
 * <h2>Placement</h2>
 * A level with clock {@code currentTimeMs} (always a multiple of {@code tickMs}) accepts
 * deadlines in {@code [currentTimeMs + tickMs, currentTimeMs + intervalMs)}: anything
 * sooner is already due, anything later overflows. An accepted deadline goes to tick
 * {@code virtualId = deadline / tickMs}, slot {@code virtualId % wheelSize}, and the
 * bucket expires at {@code virtualId * tickMs}. Accepted deadlines lie within one
 * revolution, so two different ticks never share a live slot.
 *
 * <h2>Worked example</h2>
 * The defaults, {@code tickMs = 1}, {@code wheelSize = 20}, started at 0. Level 0 spans
 * 20 ms, level 1 ({@code tickMs} 20) spans 400 ms, level 2 ({@code tickMs} 400) spans
 * 8 000 ms, level 3 ({@code tickMs} 8 000) spans 160 000 ms. Tasks added at clock 0:
 * <pre>
 *   deadline | level | slot                  | bucket expires at
 *   ---------+-------+-----------------------+------------------
 *        0   |   -   | already due: runs now |        -
 *        7   |   0   |  7 % 20          = 7  |        7
 *       25   |   1   | (25 / 20) % 20   = 1  |       20
 *      450   |   2   | (450 / 400) % 20 = 1  |      400
 * </pre>
 * At 20, level-1 slot 1 falls due: the clocks move to 20 and task 25 is re-added. Now
 * {@code 25 - 20 < 20}, so it lands in level-0 slot {@code 25 % 20 = 5}, which expires
 * at 25, and it runs then. Task 450 cascades the same way: at 400 it moves to level-1
 * slot {@code (450 / 20) % 20 = 2} (expires at 440), at 440 to level-0 slot
 * {@code 450 % 20 = 10} (expires at 450). With a 1 ms bottom tick a task therefore
 * never runs before its deadline; {@link SystemTimer} rounds deadlines up to the tick
 * so that this holds for coarser ticks too.
 *
 * <h2>Cost</h2>
 * <ul>
 *   <li>Insert: O(1) per level tried (an index computation and a list link), plus an
 *       O(log B) bucket-queue offer when the bucket was empty, where B is the number of
 *       queued buckets (at most {@code wheelSize} per level), not the number of tasks.
 *       Levels needed grow as {@code log_wheelSize(delayMs / tickMs)}: a 30 s request
 *       timeout needs 4 levels with the defaults, {@link TimerTask#MAX_DELAY_MS} 8.
 *   <li>Delete (cancel): O(1), an unlink from a doubly linked list.
 *   <li>Advance: one bucket-queue poll per non-empty bucket that falls due, plus O(1)
 *       per entry in it. Empty ticks cost nothing, because the clock jumps from one
 *       bucket expiration to the next rather than ticking. Each task moves at most once
 *       per level, so a task costs O(levels) over its whole life.
 * </ul>
 * A priority queue of tasks ({@link java.util.concurrent.DelayQueue}) would instead pay
 * O(log n) per insert and per cancel, with n the number of parked requests, which is
 * hundreds of thousands on a busy broker.
 *
 * <p>Thread contract: {@link #add} may run concurrently with {@link #add} (buckets
 * synchronise themselves and the overflow level is created under this level's monitor);
 * {@link #advanceClock} must exclude {@link #add}. {@link SystemTimer} guarantees both
 * with a read/write lock, which also publishes {@link #currentTimeMs}.
 */
final class TimingWheel {
    private final long tickMs;
    private final int wheelSize;
    private final long intervalMs;
    private final AtomicInteger taskCounter;
    private final BucketQueue bucketQueue;
    private final TimerTaskList[] buckets;
    /** Start of the current tick; a multiple of {@link #tickMs}. Guarded by the timer's lock. */
    private long currentTimeMs;
    private volatile TimingWheel overflowWheel;

    TimingWheel(long tickMs, int wheelSize, long startMs, AtomicInteger taskCounter, BucketQueue bucketQueue) {
        if (tickMs < 1) {
            throw new IllegalArgumentException("timing wheel tick must be positive: tickMs=" + tickMs);
        }
        if (wheelSize < 2) {
            throw new IllegalArgumentException("timing wheel needs at least 2 buckets: wheelSize=" + wheelSize);
        }
        this.tickMs = tickMs;
        this.wheelSize = wheelSize;
        this.intervalMs = Math.multiplyExact(tickMs, (long) wheelSize);
        this.taskCounter = taskCounter;
        this.bucketQueue = bucketQueue;
        this.buckets = new TimerTaskList[wheelSize];
        for (int slot = 0; slot < wheelSize; slot++) {
            buckets[slot] = new TimerTaskList(taskCounter);
        }
        this.currentTimeMs = startMs - Math.floorMod(startMs, tickMs);
    }

    /**
     * Places {@code entry} in this level or an overflow level. False if the entry was
     * cancelled or is already due; the caller then runs or drops it.
     */
    boolean add(TimerTaskEntry entry) {
        long untilDueMs = entry.expirationMs - currentTimeMs;
        if (entry.cancelled() || untilDueMs < tickMs) {
            return false;
        }
        if (untilDueMs < intervalMs) {
            addToBucket(entry);
            return true;
        }
        return overflowWheel().add(entry);
    }

    private void addToBucket(TimerTaskEntry entry) {
        long virtualId = Math.floorDiv(entry.expirationMs, tickMs);
        TimerTaskList bucket = buckets[(int) Math.floorMod(virtualId, (long) wheelSize)];
        bucket.add(entry);
        long bucketExpirationMs = virtualId * tickMs;
        if (bucket.setExpiration(bucketExpirationMs)) {
            bucketQueue.offer(bucket, bucketExpirationMs);
        }
    }

    private TimingWheel overflowWheel() {
        TimingWheel overflow = overflowWheel;
        if (overflow == null) {
            synchronized (this) {
                overflow = overflowWheel;
                if (overflow == null) {
                    overflow = new TimingWheel(intervalMs, wheelSize, currentTimeMs, taskCounter, bucketQueue);
                    overflowWheel = overflow;
                }
            }
        }
        return overflow;
    }

    /** Moves this level's clock (and every overflow level's) to the tick containing {@code timeMs}. */
    void advanceClock(long timeMs) {
        if (timeMs - currentTimeMs < tickMs) {
            return;
        }
        currentTimeMs = timeMs - Math.floorMod(timeMs, tickMs);
        TimingWheel overflow = overflowWheel;
        if (overflow != null) {
            overflow.advanceClock(currentTimeMs);
        }
    }

    long currentTimeMs() {
        return currentTimeMs;
    }

    /** This level plus the overflow levels created so far. */
    int levelCount() {
        TimingWheel overflow = overflowWheel;
        return overflow == null ? 1 : 1 + overflow.levelCount();
    }
}
