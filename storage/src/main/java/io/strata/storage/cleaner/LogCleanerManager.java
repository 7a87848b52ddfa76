package io.strata.storage.cleaner;

import io.strata.storage.FileRecords;
import io.strata.storage.LogSegment;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import io.strata.storage.checkpoint.OffsetCheckpointFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Decides which log the cleaner threads clean next, tracks each partition's cleaning state and
 * keeps the clean offsets: per data directory, the {@code cleaner-offset-checkpoint} file
 * (Kafka's name, in the offset checkpoint format) maps each partition to the offset below which
 * its log is clean.
 *
 * <h2>Cleaning states (Kafka's)</h2>
 * A partition with no state may be chosen. The transitions, all under one lock:
 * <pre>
 *   (none)        --grabFilthiestCompactedLog / deletableLogs--> IN_PROGRESS
 *   IN_PROGRESS   --doneCleaning / doneDeleting-->                (none)
 *   IN_PROGRESS   --abortAndPauseCleaning-->                      ABORTED   (the caller waits)
 *   ABORTED       --doneCleaning-->                               PAUSED(1) (the caller is released)
 *   (none)        --abortAndPauseCleaning-->                      PAUSED(1)
 *   PAUSED(n)     --abortAndPauseCleaning-->                      PAUSED(n + 1)
 *   PAUSED(n)     --resumeCleaning-->                             PAUSED(n - 1), (none) after PAUSED(1)
 * </pre>
 * Any other transition is a bug and throws {@link IllegalStateException}. A partition whose
 * cleaning failed for a reason other than an abort is marked uncleanable (per data directory,
 * with the reason) and no longer chosen for cleaning until the broker restarts or the log is
 * deleted, as in Kafka. Unlike Kafka, its retention still runs ({@link #deletableLogs}): a
 * compacted log the cleaner gave up on must not also stop honouring retention.ms/bytes and the
 * log start offset, or it grows without bound.
 *
 * <p>Thread-safe.
 */
public final class LogCleanerManager {
    private static final Logger LOG = LoggerFactory.getLogger(LogCleanerManager.class);
    public static final String CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint";
    /** How long an aborting caller waits between checks of the state (it is also signalled). */
    private static final long PAUSE_WAIT_MS = 100;

    private enum Kind { IN_PROGRESS, ABORTED, PAUSED }

    private record State(Kind kind, int pausedCount) {
        static final State IN_PROGRESS = new State(Kind.IN_PROGRESS, 0);
        static final State ABORTED = new State(Kind.ABORTED, 0);

        static State paused(int count) {
            return new State(Kind.PAUSED, count);
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition pausedCleaning = lock.newCondition();
    private final Supplier<Collection<UnifiedLog>> logs;
    /** Data directory → its checkpoint file; guarded by {@link #lock}. */
    private final Map<Path, OffsetCheckpointFile> checkpointFiles = new HashMap<>();
    /** Data directory → partition → clean offset, as last written; guarded by {@link #lock}. */
    private final Map<Path, Map<TopicPartition, Long>> checkpoints = new HashMap<>();
    private final Map<TopicPartition, State> states = new HashMap<>();
    /** Data directory → uncleanable partition → why; guarded by {@link #lock}. */
    private final Map<Path, Map<TopicPartition, String>> uncleanable = new HashMap<>();
    private final List<Path> logDirs;

    /**
     * @param logDirs the data directories, whose checkpoints are read now
     * @param logs    every partition log the broker holds (read at each decision)
     */
    public LogCleanerManager(List<Path> logDirs, Supplier<Collection<UnifiedLog>> logs) {
        this.logs = logs;
        this.logDirs = logDirs.stream().map(dir -> dir.toAbsolutePath().normalize()).toList();
        for (Path dir : logDirs) {
            Path key = dir.toAbsolutePath().normalize();
            OffsetCheckpointFile file = new OffsetCheckpointFile(key.resolve(CLEANER_CHECKPOINT_FILE));
            checkpointFiles.put(key, file);
            checkpoints.put(key, readCheckpoint(file));
        }
    }

    private static Map<TopicPartition, Long> readCheckpoint(OffsetCheckpointFile file) {
        try {
            return new HashMap<>(file.read());
        } catch (IOException e) {
            // Clean offsets only save work: without them every compacted log is cleaned from its start.
            LOG.warn("Ignoring unreadable {}: {}", file.file(), e.getMessage());
            return new HashMap<>();
        }
    }

    // ---------------------------------------------------------------- choosing

    /**
     * Chooses the compacted log with the largest dirty ratio among those above their
     * min.cleanable.dirty.ratio or past their max.compaction.lag.ms, and marks it IN_PROGRESS.
     */
    public Optional<LogToClean> grabFilthiestCompactedLog(long nowMs) {
        lock.lock();
        try {
            LogToClean filthiest = null;
            for (UnifiedLog log : logs.get()) {
                TopicPartition topicPartition = log.topicPartition();
                if (!log.config().compact || log.isClosed() || states.containsKey(topicPartition) || isUncleanableLocked(topicPartition)) {
                    continue;
                }
                LogToClean candidate;
                try {
                    candidate = toClean(log, nowMs);
                } catch (RuntimeException e) {
                    markUncleanable(log, "cannot size it up for cleaning: " + e, e);
                    continue;
                }
                boolean cleanable = candidate.totalBytes() > 0 && ((candidate.needCompactionNow() && candidate.cleanableBytes() > 0)
                    || candidate.cleanableRatio() > log.config().minCleanableDirtyRatio);
                if (cleanable && (filthiest == null || candidate.cleanableRatio() > filthiest.cleanableRatio())) {
                    filthiest = candidate;
                }
            }
            if (filthiest == null) {
                return Optional.empty();
            }
            states.put(filthiest.topicPartition(), State.IN_PROGRESS);
            return Optional.of(filthiest);
        } finally {
            lock.unlock();
        }
    }

    /** Sizes up {@code log} for cleaning; a checkpoint that no longer fits the log is reset (and rewritten). */
    private LogToClean toClean(UnifiedLog log, long nowMs) {
        Path dataDir = dataDirOf(log);
        Long checkpointed = checkpoints.getOrDefault(dataDir, Map.of()).get(log.topicPartition());
        OffsetsToClean offsets = cleanableOffsets(log, checkpointed, nowMs);
        if (offsets.forceUpdateCheckpoint()) {
            updateCheckpoint(dataDir, log.topicPartition(), offsets.firstDirtyOffset());
        }
        boolean needCompactionNow = maxCompactionDelayMs(log, offsets.firstDirtyOffset(), nowMs) > 0;
        return LogToClean.of(log, offsets.firstDirtyOffset(), offsets.firstUncleanableDirtyOffset(), needCompactionNow);
    }

    /** Where a log's dirty section starts and stops; {@code forceUpdateCheckpoint} if the checkpoint was invalid. */
    public record OffsetsToClean(long firstDirtyOffset, long firstUncleanableDirtyOffset, boolean forceUpdateCheckpoint) {
    }

    /**
     * Kafka's rule: the dirty section starts at the checkpoint (or the log start offset if there
     * is none, or it is out of the log's range) and stops at the earliest of the last stable
     * offset (nothing undecided or unreplicated is cleaned), the active segment, and the first
     * dirty segment whose newest record is younger than min.compaction.lag.ms.
     */
    public static OffsetsToClean cleanableOffsets(UnifiedLog log, Long checkpointedOffset, long nowMs) {
        long logStartOffset = log.logStartOffset();
        long firstDirtyOffset;
        boolean forceUpdate;
        if (checkpointedOffset == null) {
            firstDirtyOffset = logStartOffset;
            forceUpdate = false;
        } else if (checkpointedOffset < logStartOffset || checkpointedOffset > log.logEndOffset()) {
            if (checkpointedOffset > log.logEndOffset()) {
                LOG.warn("Resetting the clean offset of {} to the log start offset {}: checkpointed {} is beyond the log end {}",
                    log.topicPartition(), logStartOffset, checkpointedOffset, log.logEndOffset());
            }
            firstDirtyOffset = logStartOffset;
            forceUpdate = true;
        } else {
            firstDirtyOffset = checkpointedOffset;
            forceUpdate = false;
        }
        long firstUncleanable = Math.min(log.lastStableOffset(), log.activeSegment().baseOffset());
        long minCompactionLagMs = Math.max(log.config().minCompactionLagMs, 0L);
        if (minCompactionLagMs > 0) {
            for (LogSegment segment : log.nonActiveLogSegmentsFrom(firstDirtyOffset)) {
                if (largestTimestamp(segment) > nowMs - minCompactionLagMs) {
                    firstUncleanable = Math.min(firstUncleanable, segment.baseOffset());
                    break;
                }
            }
        }
        return new OffsetsToClean(firstDirtyOffset, Math.max(firstDirtyOffset, firstUncleanable), forceUpdate);
    }

    /**
     * How long past max.compaction.lag.ms the oldest dirty record is (by the first batch
     * timestamp of each dirty non-active segment); 0 if none is.
     */
    public static long maxCompactionDelayMs(UnifiedLog log, long firstDirtyOffset, long nowMs) {
        long cleanUntilMs = nowMs - Math.max(log.config().maxCompactionLagMs, 0L);
        if (cleanUntilMs <= 0) {
            return 0L; // no lag configured (Kafka's default is Long.MAX_VALUE): nothing to read
        }
        long earliest = Long.MAX_VALUE;
        for (LogSegment segment : log.nonActiveLogSegmentsFrom(firstDirtyOffset)) {
            long first = firstBatchTimestamp(segment);
            if (first > 0) {
                earliest = Math.min(earliest, first);
            }
        }
        return earliest < cleanUntilMs ? cleanUntilMs - earliest : 0L;
    }

    private static long firstBatchTimestamp(LogSegment segment) {
        Iterator<FileRecords.FileBatch> batches = segment.log().batchesFrom(0).iterator();
        return batches.hasNext() ? batches.next().maxTimestamp() : -1L;
    }

    private static long largestTimestamp(LogSegment segment) {
        try {
            return segment.largestTimestamp();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Marks every compacted log that is not being cleaned IN_PROGRESS and returns them, so that
     * their retention (log start offset, and time and size with cleanup.policy=compact,delete)
     * runs without racing a cleaning pass. Uncleanable partitions are included: giving up on
     * compacting a log never stops its retention. Each must be handed back with
     * {@link #doneDeleting}.
     */
    public List<UnifiedLog> deletableLogs() {
        lock.lock();
        try {
            List<UnifiedLog> deletable = new ArrayList<>();
            for (UnifiedLog log : logs.get()) {
                TopicPartition topicPartition = log.topicPartition();
                if (log.config().compact && !log.isClosed() && !states.containsKey(topicPartition)) {
                    states.put(topicPartition, State.IN_PROGRESS);
                    deletable.add(log);
                }
            }
            return deletable;
        } finally {
            lock.unlock();
        }
    }

    public void doneDeleting(Collection<TopicPartition> topicPartitions) {
        lock.lock();
        try {
            for (TopicPartition topicPartition : topicPartitions) {
                State state = states.get(topicPartition);
                if (state == State.IN_PROGRESS) {
                    states.remove(topicPartition);
                } else if (state == State.ABORTED) {
                    states.put(topicPartition, State.paused(1));
                    pausedCleaning.signalAll();
                } else {
                    throw new IllegalStateException("retention of " + topicPartition + " finished in state " + state);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the pass over {@code log}: an IN_PROGRESS partition records {@code endOffset} as its clean
     * offset; an ABORTED one becomes PAUSED(1) and its aborting caller is released.
     */
    public void doneCleaning(UnifiedLog log, long endOffset) {
        lock.lock();
        try {
            TopicPartition topicPartition = log.topicPartition();
            State state = states.get(topicPartition);
            if (state == State.IN_PROGRESS) {
                if (!log.isClosed()) {
                    updateCheckpoint(dataDirOf(log), topicPartition, endOffset);
                }
                states.remove(topicPartition);
            } else if (state == State.ABORTED) {
                states.put(topicPartition, State.paused(1));
                pausedCleaning.signalAll();
            } else {
                throw new IllegalStateException("cleaning of " + topicPartition + " finished in state " + state + ", endOffset=" + endOffset);
            }
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- pausing

    /**
     * Stops any pass over {@code topicPartition} and keeps the cleaner off it until
     * {@link #resumeCleaning}. Blocks until a running pass has stopped.
     */
    public void abortAndPauseCleaning(TopicPartition topicPartition) {
        lock.lock();
        try {
            State state = states.get(topicPartition);
            if (state == null) {
                states.put(topicPartition, State.paused(1));
            } else if (state == State.IN_PROGRESS) {
                states.put(topicPartition, State.ABORTED);
            } else if (state.kind() == Kind.PAUSED) {
                states.put(topicPartition, State.paused(state.pausedCount() + 1));
            } else {
                throw new IllegalStateException("cannot abort and pause the cleaning of " + topicPartition + " in state " + state);
            }
            while (states.get(topicPartition).kind() != Kind.PAUSED) {
                pausedCleaning.await(PAUSE_WAIT_MS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the cleaning of " + topicPartition + " to stop", e);
        } finally {
            lock.unlock();
        }
    }

    /** Undoes one {@link #abortAndPauseCleaning}. */
    public void resumeCleaning(TopicPartition topicPartition) {
        lock.lock();
        try {
            State state = states.get(topicPartition);
            if (state == null || state.kind() != Kind.PAUSED) {
                throw new IllegalStateException("cannot resume the cleaning of " + topicPartition + " in state " + state);
            }
            if (state.pausedCount() == 1) {
                states.remove(topicPartition);
            } else {
                states.put(topicPartition, State.paused(state.pausedCount() - 1));
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops any pass over {@code topicPartition} for good and forgets it: its state, its
     * uncleanable mark and its clean offset (the log is being deleted).
     */
    public void abortCleaning(TopicPartition topicPartition, Path dataDir) {
        lock.lock();
        try {
            abortAndPauseCleaning(topicPartition);
            resumeCleaning(topicPartition);
            uncleanable.values().forEach(partitions -> partitions.remove(topicPartition));
            removeCheckpoint(dataDir.toAbsolutePath().normalize(), topicPartition);
        } finally {
            lock.unlock();
        }
    }

    /** Throws {@link LogCleaningAbortedException} if the pass over {@code topicPartition} was aborted. */
    public void checkCleaningAborted(TopicPartition topicPartition) {
        lock.lock();
        try {
            if (states.get(topicPartition) == State.ABORTED) {
                throw new LogCleaningAbortedException("the cleaning of " + topicPartition + " was aborted");
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops choosing {@code log} for cleaning (until restart or deletion) and logs why, with the
     * topic-partition and data directory; its retention goes on.
     */
    public void markUncleanable(UnifiedLog log, String reason, Throwable cause) {
        lock.lock();
        try {
            Path dataDir = dataDirOf(log);
            uncleanable.computeIfAbsent(dataDir, dir -> new HashMap<>()).put(log.topicPartition(), reason);
            LOG.error("Marking {} in {} uncleanable: {}. It is not compacted again until the broker restarts; its retention goes on",
                log.topicPartition(), dataDir, reason, cause);
        } finally {
            lock.unlock();
        }
    }

    public boolean isUncleanable(TopicPartition topicPartition) {
        lock.lock();
        try {
            return isUncleanableLocked(topicPartition);
        } finally {
            lock.unlock();
        }
    }

    private boolean isUncleanableLocked(TopicPartition topicPartition) {
        for (Map<TopicPartition, String> partitions : uncleanable.values()) {
            if (partitions.containsKey(topicPartition)) {
                return true;
            }
        }
        return false;
    }

    /** The uncleanable partitions of one data directory and why each is (a copy). */
    public Map<TopicPartition, String> uncleanablePartitions(Path dataDir) {
        lock.lock();
        try {
            return Map.copyOf(uncleanable.getOrDefault(dataDir.toAbsolutePath().normalize(), Map.of()));
        } finally {
            lock.unlock();
        }
    }

    /** The data directories, as the per-directory metrics name them. */
    public List<Path> logDirs() {
        return logDirs;
    }

    /**
     * Kafka's uncleanable-bytes of one data directory: the cleanable bytes (first dirty offset to
     * first uncleanable offset) of its uncleanable partitions that still have a log.
     */
    public long uncleanableBytes(Path dataDir, long nowMs) {
        lock.lock();
        try {
            Map<TopicPartition, String> partitions = uncleanable.get(dataDir.toAbsolutePath().normalize());
            if (partitions == null || partitions.isEmpty()) {
                return 0L;
            }
            long bytes = 0;
            for (UnifiedLog log : logs.get()) {
                if (!partitions.containsKey(log.topicPartition()) || log.isClosed()) {
                    continue;
                }
                try {
                    Long checkpointed = checkpoints.getOrDefault(dataDir.toAbsolutePath().normalize(), Map.of()).get(log.topicPartition());
                    OffsetsToClean offsets = cleanableOffsets(log, checkpointed, nowMs);
                    bytes += LogToClean.of(log, offsets.firstDirtyOffset(), offsets.firstUncleanableDirtyOffset(), false).cleanableBytes();
                } catch (RuntimeException e) {
                    // A gauge must not fail the scrape; the partition is already reported uncleanable.
                    LOG.debug("Cannot size up uncleanable {}", log.topicPartition(), e);
                }
            }
            return bytes;
        } finally {
            lock.unlock();
        }
    }

    /** Forgets uncleanable partitions whose log is gone (Kafka's maintainUncleanablePartitions). */
    public void maintainUncleanablePartitions() {
        lock.lock();
        try {
            if (uncleanable.isEmpty()) {
                return;
            }
            Set<TopicPartition> present = new HashSet<>();
            for (UnifiedLog log : logs.get()) {
                present.add(log.topicPartition());
            }
            uncleanable.values().forEach(partitions -> partitions.keySet().retainAll(present));
            uncleanable.values().removeIf(Map::isEmpty);
        } finally {
            lock.unlock();
        }
    }

    public boolean isPaused(TopicPartition topicPartition) {
        lock.lock();
        try {
            State state = states.get(topicPartition);
            return state != null && state.kind() == Kind.PAUSED;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- checkpoints

    /** Every partition's clean offset, over all data directories. */
    public Map<TopicPartition, Long> allCleanerCheckpoints() {
        lock.lock();
        try {
            Map<TopicPartition, Long> all = new HashMap<>();
            checkpoints.values().forEach(all::putAll);
            return all;
        } finally {
            lock.unlock();
        }
    }

    private void updateCheckpoint(Path dataDir, TopicPartition topicPartition, long offset) {
        Map<TopicPartition, Long> offsets = checkpoints.get(dataDir);
        if (offsets == null) {
            LOG.warn("Not checkpointing the clean offset {} of {}: {} is not a data directory", offset, topicPartition, dataDir);
            return;
        }
        offsets.put(topicPartition, offset);
        writeCheckpoint(dataDir);
    }

    private void removeCheckpoint(Path dataDir, TopicPartition topicPartition) {
        Map<TopicPartition, Long> offsets = checkpoints.get(dataDir);
        if (offsets != null && offsets.remove(topicPartition) != null) {
            writeCheckpoint(dataDir);
        }
    }

    /** Rewrites a directory's checkpoint, dropping partitions that no longer have a log there. */
    private void writeCheckpoint(Path dataDir) {
        Set<TopicPartition> present = new HashSet<>();
        for (UnifiedLog log : logs.get()) {
            if (dataDirOf(log).equals(dataDir)) {
                present.add(log.topicPartition());
            }
        }
        Map<TopicPartition, Long> offsets = checkpoints.get(dataDir);
        offsets.keySet().retainAll(present);
        try {
            checkpointFiles.get(dataDir).write(offsets);
        } catch (IOException e) {
            // The in-memory offsets stay right; a lost checkpoint only means re-cleaning after a restart.
            LOG.error("Failed to write {}", checkpointFiles.get(dataDir).file(), e);
        }
    }

    private static Path dataDirOf(UnifiedLog log) {
        return log.dir().toAbsolutePath().normalize().getParent();
    }
}
