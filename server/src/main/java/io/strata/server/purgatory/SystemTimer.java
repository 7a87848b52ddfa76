package io.strata.server.purgatory;

import io.strata.common.Time;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Timer} on a hierarchical {@link TimingWheel} whose clock is the injected
 * {@link Time#hiResClockMs()}.
 *
 * <p>A task's deadline is {@code now + delayMs} rounded up to a multiple of
 * {@code tickMs}, so a task never runs before its deadline and runs at the first
 * {@link #advanceClock} that sees the clock at or past the rounded deadline. Due tasks
 * run on the task executor, never under the timer's locks, so a task may add tasks.
 *
 * <p>Under a mock clock, drive it deterministically: advance the clock, then call
 * {@code advanceClock(0)}; with a direct executor ({@code Runnable::run}) every due task
 * has run when that call returns.
 *
 * <p>Thread-safe. {@link #add} takes the read side of a read/write lock so adds run in
 * parallel; {@link #advanceClock} takes the write side while it moves the wheel's clock,
 * because an add that read the old clock could otherwise place an entry in a bucket
 * that has just been flushed.
 */
public final class SystemTimer implements Timer {
    private static final Logger LOG = LoggerFactory.getLogger(SystemTimer.class);
    public static final long DEFAULT_TICK_MS = 1;
    public static final int DEFAULT_WHEEL_SIZE = 20;
    /**
     * Due tasks waiting for the owned executor thread. Beyond it the thread that advances
     * the clock runs tasks itself, which slows expiry instead of growing a queue.
     */
    static final int EXPIRED_TASK_QUEUE_CAPACITY = 10_000;

    private final Time time;
    private final long tickMs;
    private final Executor taskExecutor;
    /** The executor this timer created and must stop, or null if the caller owns it. */
    private final ExecutorService ownedExecutor;
    private final AtomicInteger taskCounter = new AtomicInteger();
    private final BucketQueue bucketQueue;
    private final TimingWheel timingWheel;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    /** A timer with the default wheel, running tasks on its own thread {@code executor-<executorName>}. */
    public SystemTimer(String executorName, Time time) {
        this(executorName, time, DEFAULT_TICK_MS, DEFAULT_WHEEL_SIZE);
    }

    public SystemTimer(String executorName, Time time, long tickMs, int wheelSize) {
        this(time, tickMs, wheelSize, newTaskExecutor("executor-" + executorName), true);
    }

    /** A timer that runs due tasks on {@code taskExecutor}, which the caller owns and stops. */
    public SystemTimer(Time time, long tickMs, int wheelSize, Executor taskExecutor) {
        this(time, tickMs, wheelSize, taskExecutor, false);
    }

    private SystemTimer(Time time, long tickMs, int wheelSize, Executor taskExecutor, boolean ownsExecutor) {
        this.time = time;
        this.tickMs = tickMs;
        this.taskExecutor = taskExecutor;
        this.ownedExecutor = ownsExecutor ? (ExecutorService) taskExecutor : null;
        this.bucketQueue = new BucketQueue(time);
        this.timingWheel = new TimingWheel(tickMs, wheelSize, time.hiResClockMs(), taskCounter, bucketQueue);
    }

    private static ExecutorService newTaskExecutor(String threadName) {
        return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(EXPIRED_TASK_QUEUE_CAPACITY),
            task -> {
                Thread thread = new Thread(task, threadName);
                thread.setDaemon(true);
                return thread;
            },
            new ThreadPoolExecutor.CallerRunsPolicy());
    }

    @Override
    public void add(TimerTask task) {
        long nowMs = time.hiResClockMs();
        TimerTaskEntry entry = new TimerTaskEntry(task, deadlineMs(nowMs, task.delayMs()));
        task.link(entry);
        // Due already (a zero delay on a tick boundary): run it now. The wheel cannot tell,
        // because its clock only moves when a bucket falls due and may lag the real clock;
        // it would park the task in a bucket that expires at the next advance.
        boolean placed = false;
        if (entry.expirationMs > nowMs) {
            lock.readLock().lock();
            try {
                placed = timingWheel.add(entry);
            } finally {
                lock.readLock().unlock();
            }
        }
        if (!placed && task.claim(entry)) {
            execute(task);
        }
    }

    /** {@code nowMs + delayMs}, rounded up to the tick so no task runs early. */
    private long deadlineMs(long nowMs, long delayMs) {
        long exactMs = nowMs + delayMs;
        return Math.floorDiv(exactMs + tickMs - 1, tickMs) * tickMs;
    }

    @Override
    public boolean advanceClock(long timeoutMs) throws InterruptedException {
        BucketQueue.ScheduledBucket due = bucketQueue.poll(timeoutMs);
        if (due == null) {
            return false;
        }
        List<TimerTask> expired = new ArrayList<>();
        lock.writeLock().lock();
        try {
            while (due != null) {
                timingWheel.advanceClock(due.expirationMs());
                due.bucket().flush(entry -> reinsert(entry, expired));
                due = bucketQueue.pollDue();
            }
        } finally {
            lock.writeLock().unlock();
        }
        expired.forEach(this::execute);
        return true;
    }

    /**
     * Hands a claimed task to the executor. A task that throws on a caller-runs executor
     * is logged, so one faulty task cannot strand the other claimed tasks or stop the
     * thread that advances the clock.
     */
    private void execute(TimerTask task) {
        try {
            taskExecutor.execute(task);
        } catch (RuntimeException e) {
            LOG.error("Timer task {} failed", task, e);
        }
    }

    /** Cascades a flushed entry down the wheel, or collects its task if it is due. */
    private void reinsert(TimerTaskEntry entry, List<TimerTask> expired) {
        if (!timingWheel.add(entry) && entry.task.claim(entry)) {
            expired.add(entry.task);
        }
    }

    @Override
    public int size() {
        return taskCounter.get();
    }

    @Override
    public void close() {
        if (ownedExecutor != null) {
            ownedExecutor.shutdown();
        }
    }

    /** Levels of the wheel created so far; for tests. */
    int levelCount() {
        lock.readLock().lock();
        try {
            return timingWheel.levelCount();
        } finally {
            lock.readLock().unlock();
        }
    }
}
