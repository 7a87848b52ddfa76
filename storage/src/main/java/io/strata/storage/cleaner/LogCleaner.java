package io.strata.storage.cleaner;

import io.strata.common.Time;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The log cleaner: {@code log.cleaner.threads} background threads that compact the logs of
 * topics with cleanup.policy=compact, one log at a time each. A unit of work
 * ({@link #doWork()}) cleans the filthiest log, if any is due (Kafka's choice, see
 * {@link LogCleanerManager#grabFilthiestCompactedLog}), and then runs retention for every
 * compacted log, which the log manager otherwise leaves alone so that the two never race.
 *
 * <h2>Scheduling</h2>
 * A thread that cleaned something looks again at once. An idle thread waits up to
 * {@code log.cleaner.backoff.ms} (Kafka: 15 s), but {@link #wakeUp()} ends the wait: the log
 * manager calls it whenever a compacted log rolls a segment, the moment its dirty section can
 * grow, so a log that becomes cleanable is cleaned within one pass instead of at the next
 * poll (Kafka polls only, so it takes up to the whole backoff). A wake-up that arrives while
 * the threads are busy is not lost: the next wait returns at once.
 *
 * <h2>Failures</h2>
 * Nothing a pass throws ends a thread. An abort ({@link LogCleaningAbortedException}) is
 * expected; any other failure of a partition's cleaning marks that partition uncleanable with
 * the reason in the log ({@link LogCleanerManager#markUncleanable}) and the thread goes on with
 * the others; a failure of retention is logged per log and retried at the next pass; a failure
 * outside any partition is logged and the thread backs off. Each is counted
 * ({@link #failureCount()}). {@link #deadThreadCount()} (Kafka's DeadThreadCount) counts threads
 * that ended other than by a stop, which should never happen.
 *
 * <h2>Reconfiguration</h2>
 * {@link #reconfigure} replaces the threads, as Kafka does: every current thread is asked to stop
 * (a running pass aborts at its next check, its files removed and its partition left cleanable)
 * and joined before the new threads start, so a partition is never cleaned by two threads (the
 * manager's IN_PROGRESS state excludes that within one generation, the join across two).
 *
 * <p>Threads are never interrupted: an interrupt closes any {@link java.nio.channels.FileChannel}
 * the thread is using, and those belong to shared segments. Stopping instead sets a flag that
 * the cleaning pass checks every few batches.
 *
 * <p>Thread-safe. Tests may call {@link #doWork()} directly instead of starting the threads.
 */
public final class LogCleaner implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LogCleaner.class);
    public static final String THREAD_NAME_PREFIX = "strata-log-cleaner-";

    /**
     * Test seam: told before each cleaning pass; what it throws is a failure of that partition's
     * cleaning (as an I/O error or a bug in the pass would be).
     */
    interface CleaningHook {
        CleaningHook NONE = new CleaningHook() { };

        default void beforeCleaning(TopicPartition topicPartition) throws IOException {
        }

        default void afterCleaning(TopicPartition topicPartition) {
        }
    }

    private final LogCleanerManager manager;
    private final Time time;
    private final Throttler throttler;
    /** Serialises start, reconfigure and close, which replace {@link #workers} and set {@link #started} and {@link #closed}. */
    private final Object lifecycle = new Object();
    private volatile CleanerConfig config;
    private volatile List<Worker> workers;
    private volatile boolean started;
    private volatile boolean closed;

    private final ReentrantLock wakeLock = new ReentrantLock();
    private final Condition workAvailable = wakeLock.newCondition();
    /** Bumped by every {@link #wakeUp()}; guarded by {@link #wakeLock}. */
    private long wakeUps;

    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong deadThreads = new AtomicLong();
    private volatile CleaningHook cleaningHook = CleaningHook.NONE;

    /**
     * @param logDirs the data directories (each holds a {@code cleaner-offset-checkpoint})
     * @param logs    every partition log of the broker
     */
    public LogCleaner(CleanerConfig config, List<Path> logDirs, Supplier<Collection<UnifiedLog>> logs, Time time) {
        this.config = config;
        this.manager = new LogCleanerManager(logDirs, logs);
        this.time = time;
        this.throttler = new Throttler(config.maxIoBytesPerSecond(), time);
        this.workers = newWorkers(config.numThreads());
    }

    private List<Worker> newWorkers(int count) {
        List<Worker> created = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            created.add(new Worker(i));
        }
        return List.copyOf(created);
    }

    public CleanerConfig config() {
        return config;
    }

    public LogCleanerManager manager() {
        return manager;
    }

    public Throttler throttler() {
        return throttler;
    }

    /** Starts the cleaner threads (once). */
    public void startup() {
        synchronized (lifecycle) {
            if (started || closed) {
                return;
            }
            workers.forEach(Worker::start);
            started = true;
            LOG.info("Started {} log cleaner thread(s)", workers.size());
        }
    }

    /**
     * Applies a new configuration (a dynamic change of log.cleaner.*): the throttler's rate at
     * once; everything else by replacing the threads. Blocks until the old threads have stopped
     * (a running pass stops at its next abort check, within a few batches). log.cleaner.enable
     * is not dynamic and must not change.
     *
     * @throws IllegalArgumentException if {@code newConfig} changes log.cleaner.enable
     */
    public void reconfigure(CleanerConfig newConfig) {
        if (newConfig.enabled() != config.enabled()) {
            throw new IllegalArgumentException("log.cleaner.enable cannot change at runtime: " + config.enabled() + " -> " + newConfig.enabled());
        }
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            CleanerConfig oldConfig = config;
            throttler.updateDesiredRatePerSec(newConfig.maxIoBytesPerSecond());
            List<Worker> old = workers;
            if (started) {
                stopAndJoin(old);
            }
            config = newConfig;
            workers = newWorkers(newConfig.numThreads());
            if (started) {
                workers.forEach(Worker::start);
            }
            LOG.info("Reconfigured the log cleaner from {} to {}: {} thread(s) replaced by {}", oldConfig, newConfig, old.size(), workers.size());
        }
    }

    private void stopAndJoin(List<Worker> stopping) {
        stopping.forEach(Worker::requestStop);
        wakeUp();
        for (Worker worker : stopping) {
            worker.join();
        }
    }

    /** Whether the threads were started and not closed (they then own the retention of compacted logs). */
    public boolean isRunning() {
        return started && !closed;
    }

    /** Threads of the current configuration that are alive. */
    public int aliveThreadCount() {
        int alive = 0;
        for (Worker worker : workers) {
            if (worker.isAlive()) {
                alive++;
            }
        }
        return alive;
    }

    /** Names of the current threads that are alive (log.cleaner.threads of them once started). */
    public List<String> aliveThreadNames() {
        List<String> names = new ArrayList<>();
        for (Worker worker : workers) {
            if (worker.isAlive()) {
                names.add(worker.name());
            }
        }
        return names;
    }

    /** Kafka's DeadThreadCount: cleaner threads that ended by a failure rather than a stop. */
    public long deadThreadCount() {
        return deadThreads.get();
    }

    /** Failures of cleaning, retention or a thread's loop so far (each logged with its context). */
    public long failureCount() {
        return failures.get();
    }

    /**
     * Ends the idle wait of the cleaner threads, because a compacted log may have become
     * cleanable (it rolled a segment). Cheap; safe from any thread, including one holding a log's
     * lock (the cleaner never takes this lock while holding a log's).
     */
    public void wakeUp() {
        wakeLock.lock();
        try {
            wakeUps++;
            workAvailable.signalAll();
        } finally {
            wakeLock.unlock();
        }
    }

    private long wakeUpCount() {
        wakeLock.lock();
        try {
            return wakeUps;
        } finally {
            wakeLock.unlock();
        }
    }

    /** Waits until a wake-up after {@code seenWakeUps}, the worker's stop, or {@code backoffMs} (whichever is first). */
    private void awaitWork(Worker worker, long seenWakeUps, long backoffMs) throws InterruptedException {
        long remainingNs = TimeUnit.MILLISECONDS.toNanos(backoffMs);
        wakeLock.lock();
        try {
            while (wakeUps == seenWakeUps && !worker.stopRequested && remainingNs > 0) {
                remainingNs = workAvailable.awaitNanos(remainingNs);
            }
        } finally {
            wakeLock.unlock();
        }
    }

    /** Stops any pass over the partition and keeps the cleaner off it until {@link #resumeCleaning}; blocks until stopped. */
    public void abortAndPauseCleaning(TopicPartition topicPartition) {
        manager.abortAndPauseCleaning(topicPartition);
    }

    public void resumeCleaning(TopicPartition topicPartition) {
        manager.resumeCleaning(topicPartition);
    }

    /** Stops any pass over a partition whose log is being deleted and forgets its clean offset. */
    public void abortCleaning(TopicPartition topicPartition, Path dataDir) {
        manager.abortCleaning(topicPartition, dataDir);
    }

    /** One unit of work on the calling thread, as a cleaner thread does it; returns whether a log was cleaned. */
    public boolean doWork() {
        return workers.get(0).doWork();
    }

    /**
     * Runs retention for every compacted log that no pass is cleaning (uncleanable ones too);
     * returns the segments deleted. The cleaner threads do this after each pass; the log
     * manager's retention task calls it as well, so compacted logs keep their retention even if
     * every cleaner thread were stuck.
     */
    public int runRetentionOfCompactedLogs() {
        List<UnifiedLog> deletable = manager.deletableLogs();
        int deleted = 0;
        try {
            for (UnifiedLog log : deletable) {
                try {
                    deleted += log.deleteOldSegments();
                } catch (IOException | RuntimeException e) {
                    failures.incrementAndGet();
                    LOG.warn("Retention failed for {}; retrying at the next pass", log.topicPartition(), e);
                }
            }
        } finally {
            manager.doneDeleting(deletable.stream().map(UnifiedLog::topicPartition).toList());
        }
        return deleted;
    }

    /** Test seam: see {@link CleaningHook}. */
    void setCleaningHookForTesting(CleaningHook hook) {
        this.cleaningHook = hook;
    }

    /** Stops the threads: a running pass is aborted at its next check and its files removed. */
    @Override
    public void close() {
        List<Worker> stopping;
        synchronized (lifecycle) {
            closed = true;
            stopping = workers;
        }
        stopAndJoin(stopping);
    }

    /** One cleaner thread: its cleaner (offset map and buffers, allocated on first use) and its stop flag. */
    private final class Worker implements Runnable {
        private final int id;
        private final Thread thread;
        private volatile boolean stopRequested;
        private Cleaner cleaner;

        Worker(int id) {
            this.id = id;
            this.thread = new Thread(this, THREAD_NAME_PREFIX + id);
            this.thread.setDaemon(true);
        }

        String name() {
            return thread.getName();
        }

        void start() {
            thread.start();
        }

        boolean isAlive() {
            return thread.isAlive();
        }

        void requestStop() {
            stopRequested = true;
        }

        void join() {
            if (thread.getState() == Thread.State.NEW) {
                return;
            }
            boolean interrupted = false;
            while (true) {
                try {
                    thread.join();
                    break;
                } catch (InterruptedException e) {
                    // Keep waiting: starting new threads while this one may still clean would let two clean one log.
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void run() {
            try {
                while (!stopRequested) {
                    long seenWakeUps = wakeUpCount();
                    boolean cleaned = false;
                    try {
                        cleaned = doWork();
                    } catch (RuntimeException | Error e) {
                        // Outside any one partition (choosing a log, the checkpoint bookkeeping): back off and go on.
                        failures.incrementAndGet();
                        LOG.error("Log cleaner thread {} failed outside a partition's cleaning; backing off and going on", id, e);
                    }
                    if (!cleaned) {
                        awaitWork(this, seenWakeUps, config.backoffMs());
                    }
                }
            } catch (InterruptedException e) {
                deadThreads.incrementAndGet();
                LOG.error("Log cleaner thread {} was interrupted and stopped", id);
                Thread.currentThread().interrupt();
            } catch (Throwable e) {
                deadThreads.incrementAndGet();
                LOG.error("Log cleaner thread {} stopped", id, e);
            }
        }

        synchronized boolean doWork() {
            boolean cleaned = cleanFilthiestLog();
            runRetentionOfCompactedLogs();
            manager.maintainUncleanablePartitions();
            return cleaned;
        }

        private Cleaner cleaner() {
            if (cleaner == null) {
                CleanerConfig current = config;
                OffsetMap map = new OffsetMap(current.dedupeBufferBytesPerThread(Runtime.getRuntime().maxMemory()));
                cleaner = new Cleaner(map, current.dedupeBufferLoadFactor(), current.ioBufferBytesPerThread(), time, this::checkDone,
                    UnifiedLog.SwapObserver.NONE, throttler);
                LOG.info("Log cleaner {} allocated an offset map of {} slots", id, map.slots());
            }
            return cleaner;
        }

        private void checkDone(TopicPartition topicPartition) {
            if (stopRequested) {
                throw new LogCleaningAbortedException("the log cleaner thread is stopping");
            }
            manager.checkCleaningAborted(topicPartition);
        }

        private boolean cleanFilthiestLog() {
            Optional<LogToClean> chosen = manager.grabFilthiestCompactedLog(time.milliseconds());
            if (chosen.isEmpty()) {
                return false;
            }
            LogToClean cleanable = chosen.get();
            long endOffset = cleanable.firstDirtyOffset();
            CleaningHook hook = cleaningHook;
            try {
                hook.beforeCleaning(cleanable.topicPartition());
                endOffset = cleaner().clean(cleanable).nextDirtyOffset();
            } catch (LogCleaningAbortedException e) {
                LOG.info("Cleaning of {} stopped: {}", cleanable.topicPartition(), e.getMessage());
            } catch (IOException | RuntimeException | Error e) {
                // Kafka takes the directory offline on an I/O error; here only the partition is given up on.
                failures.incrementAndGet();
                manager.markUncleanable(cleanable.log(), "its cleaning by thread " + id + " failed: " + e, e);
            } finally {
                hook.afterCleaning(cleanable.topicPartition());
                manager.doneCleaning(cleanable.log(), endOffset);
            }
            return true;
        }
    }
}
