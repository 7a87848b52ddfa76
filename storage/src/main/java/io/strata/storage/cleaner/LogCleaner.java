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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The log cleaner: {@code log.cleaner.threads} background threads that compact the logs of
 * topics with cleanup.policy=compact, one log at a time each. A unit of work
 * ({@link #doWork()}) cleans the filthiest log, if any is due (see {@link LogCleanerManager}),
 * and then runs retention for every compacted log, which the log manager leaves to the cleaner
 * so that the two never race. An idle thread waits {@code log.cleaner.backoff.ms}.
 *
 * <p>Threads are never interrupted: an interrupt closes any {@link java.nio.channels.FileChannel}
 * the thread is using, and those belong to shared segments. Shutdown instead sets a flag that
 * the cleaning pass checks every few batches.
 *
 * <p>Thread-safe. Tests may call {@link #doWork()} directly instead of starting the threads.
 */
public final class LogCleaner implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LogCleaner.class);

    private final CleanerConfig config;
    private final LogCleanerManager manager;
    private final Time time;
    private final List<Worker> workers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final CountDownLatch shutdownSignal = new CountDownLatch(1);
    private volatile boolean shuttingDown;
    private volatile boolean started;

    /**
     * @param logDirs the data directories (each holds a {@code cleaner-offset-checkpoint})
     * @param logs    every partition log of the broker
     */
    public LogCleaner(CleanerConfig config, List<Path> logDirs, Supplier<Collection<UnifiedLog>> logs, Time time) {
        this.config = config;
        this.manager = new LogCleanerManager(logDirs, logs);
        this.time = time;
        for (int i = 0; i < config.numThreads(); i++) {
            workers.add(new Worker(i));
        }
    }

    public CleanerConfig config() {
        return config;
    }

    public LogCleanerManager manager() {
        return manager;
    }

    /** Starts the cleaner threads (once). */
    public synchronized void startup() {
        if (started || shuttingDown) {
            return;
        }
        for (Worker worker : workers) {
            Thread thread = new Thread(worker, "strata-log-cleaner-" + worker.id);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        started = true;
        LOG.info("Started {} log cleaner thread(s)", workers.size());
    }

    /** Whether the threads run (and so own the retention of compacted logs). */
    public boolean isRunning() {
        return started && !shuttingDown;
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

    /** Stops the threads: a running pass is aborted at its next check and its files removed. */
    @Override
    public void close() {
        synchronized (this) {
            shuttingDown = true;
        }
        shutdownSignal.countDown();
        for (Thread thread : threads) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                LOG.warn("Interrupted while waiting for {} to stop", thread.getName());
                return;
            }
        }
    }

    /** One cleaner thread's state: its cleaner (offset map and buffers, allocated on first use). */
    private final class Worker implements Runnable {
        private final int id;
        private Cleaner cleaner;

        Worker(int id) {
            this.id = id;
        }

        @Override
        public void run() {
            try {
                while (!shuttingDown) {
                    if (!doWork() && shutdownSignal.await(config.backoffMs(), TimeUnit.MILLISECONDS)) {
                        return;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException | Error e) {
                LOG.error("Log cleaner thread {} stopped", id, e);
            }
        }

        synchronized boolean doWork() {
            boolean cleaned = cleanFilthiestLog();
            runRetentionOfCompactedLogs();
            return cleaned;
        }

        private Cleaner cleaner() {
            if (cleaner == null) {
                OffsetMap map = new OffsetMap(config.dedupeBufferBytesPerThread(Runtime.getRuntime().maxMemory()));
                cleaner = new Cleaner(map, config.dedupeBufferLoadFactor(), config.ioBufferBytesPerThread(), time, this::checkDone,
                    UnifiedLog.SwapObserver.NONE);
                LOG.info("Log cleaner {} allocated an offset map of {} slots", id, map.slots());
            }
            return cleaner;
        }

        private void checkDone(TopicPartition topicPartition) {
            if (shuttingDown) {
                throw new LogCleaningAbortedException("the log cleaner is shutting down");
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
            try {
                endOffset = cleaner().clean(cleanable).nextDirtyOffset();
            } catch (LogCleaningAbortedException e) {
                LOG.info("Cleaning of {} stopped: {}", cleanable.topicPartition(), e.getMessage());
            } catch (IOException | RuntimeException e) {
                // Kafka would take the directory offline on an I/O error; here the partition is left alone until restart.
                LOG.error("Cleaning of {} failed; it is not cleaned again until restart", cleanable.topicPartition(), e);
                manager.markUncleanable(cleanable.topicPartition());
            } finally {
                manager.doneCleaning(cleanable.log(), endOffset);
            }
            return true;
        }

        private void runRetentionOfCompactedLogs() {
            List<UnifiedLog> deletable = manager.deletableLogs();
            try {
                for (UnifiedLog log : deletable) {
                    try {
                        log.deleteOldSegments();
                    } catch (IOException | RuntimeException e) {
                        LOG.warn("Retention failed for {}", log.topicPartition(), e);
                    }
                }
            } finally {
                manager.doneDeleting(deletable.stream().map(UnifiedLog::topicPartition).toList());
            }
        }
    }
}
