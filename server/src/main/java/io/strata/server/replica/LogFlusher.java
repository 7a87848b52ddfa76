package io.strata.server.replica;

import io.strata.common.BackgroundErrors;
import io.strata.storage.LogOffsetMetadata;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;

/**
 * The fsync of {@code strata.fsync=on-ack}, off the request handler threads: a handler appends
 * and parks the produce in the purgatory; this one thread fsyncs the partition's log up to its
 * end (group commit: one fsync covers every append made before it started), then lets the partition move the high
 * watermark as far as what it fsynced and the ISR allow and completes the parked produces and fetches it covers.
 *
 * <p>Invariants: an on-ack write is acknowledged (acks=1: the log's recovery point, acks=all:
 * the high watermark) and visible to consumers only after an fsync that covers it. A failed
 * fsync is logged with the partition, counted ({@value #TASK}) and remembered on the partition
 * up to the end it tried to cover: the produces waiting on it are answered KAFKA_STORAGE_ERROR,
 * and the next append requests a new fsync.
 *
 * <p>Bounds: the queue holds each partition at most once (a partition already queued is not
 * queued again), so it is bounded by the number of partitions. Thread-safe.
 */
public final class LogFlusher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogFlusher.class);
    /** Background task name (metric label). */
    public static final String TASK = "log-fsync-on-ack";

    private final LinkedBlockingQueue<Partition> queue = new LinkedBlockingQueue<>();
    private final ConcurrentHashMap.KeySetView<Partition, Boolean> queued = ConcurrentHashMap.newKeySet();
    private final Consumer<TopicPartition> onFlushed;
    private final java.util.function.BiConsumer<UnifiedLog, IOException> onLogDirFailure;
    private final Thread thread;
    private volatile BackgroundErrors backgroundErrors = new BackgroundErrors();
    private volatile boolean running = true;

    /**
     * @param onFlushed       called on the flusher thread after a partition's fsync (or its failure): completes what waited for it
     * @param onLogDirFailure told of a failed fsync: the log's data directory goes offline
     */
    LogFlusher(Consumer<TopicPartition> onFlushed, java.util.function.BiConsumer<UnifiedLog, IOException> onLogDirFailure) {
        this.onFlushed = onFlushed;
        this.onLogDirFailure = onLogDirFailure;
        this.thread = new Thread(this::run, "strata-log-flusher");
        thread.setDaemon(true);
        thread.start();
    }

    void setBackgroundErrors(BackgroundErrors errors) {
        this.backgroundErrors = errors;
    }

    /** Asks for an fsync of the partition up to its current end; returns at once. */
    void request(Partition partition) {
        if (queued.add(partition)) {
            queue.add(partition);
        }
    }

    private void run() {
        while (running) {
            Partition partition;
            try {
                partition = queue.take();
            } catch (InterruptedException e) {
                continue;
            }
            // Removed before the fsync: an append after this point queues the partition again.
            queued.remove(partition);
            try {
                flushOne(partition);
            } catch (Throwable e) {
                backgroundErrors.record(TASK);
                LOG.error("The fsync-on-ack flusher failed on {}; it goes on", partition.topicPartition(), e);
            }
        }
    }

    private void flushOne(Partition partition) {
        UnifiedLog log = partition.log();
        if (log.isClosed()) {
            return;
        }
        LogOffsetMetadata end = log.logEndOffsetMetadata();
        try {
            log.flush(end.messageOffset());
            // The leader's flushed offset is its own term in the high watermark (with followers, the minimum over the ISR).
            partition.onFlushed();
        } catch (IOException | RuntimeException e) {
            backgroundErrors.record(TASK);
            LOG.error("fsync of {} up to offset {} failed: the produces waiting for it get KAFKA_STORAGE_ERROR", partition.topicPartition(),
                end.messageOffset(), e);
            partition.recordFlushFailure(end.messageOffset());
            if (e instanceof IOException io) {
                onLogDirFailure.accept(log, io);
            }
        }
        onFlushed.accept(partition.topicPartition());
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
