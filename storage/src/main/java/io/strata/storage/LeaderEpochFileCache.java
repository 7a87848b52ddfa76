package io.strata.storage;

import io.strata.storage.checkpoint.LeaderEpochCheckpointFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A partition's leader epochs and the offset at which each began, kept in memory and persisted
 * to its {@link LeaderEpochCheckpointFile} synchronously on every change.
 *
 * <h2>Invariant</h2>
 * Sorted by epoch, start offsets strictly increase: epoch {@code e} covers offsets from its
 * start offset up to the next entry's start offset (or the log end for the latest epoch).
 * Every change keeps this:
 * <ul>
 *   <li>{@link #assign} of an entry that is not new (same epoch as the latest and a start offset
 *       not lower) is ignored. Otherwise every entry from the end whose epoch is
 *       {@code >= epoch} or whose start offset is {@code >= startOffset} is removed first, then
 *       the new entry is added. E.g. {@code [(0,0),(1,5),(2,10)]} assigned {@code (2,7)} becomes
 *       {@code [(0,0),(1,5),(2,7)]}; assigned {@code (3,5)} becomes {@code [(0,0),(3,5)]}.</li>
 *   <li>{@link #truncateFromEnd} removes entries starting at or after the new log end.</li>
 *   <li>{@link #truncateFromStart} removes entries starting at or before the new log start and
 *       re-adds the last of them starting exactly at the log start.</li>
 * </ul>
 *
 * <h2>Durability</h2>
 * A change is in the file before the method returns; an I/O failure surfaces as
 * {@link UncheckedIOException} with the in-memory state already changed, which the caller treats
 * as a failed log directory. Loading re-applies the file's entries through {@code assign}, so a
 * file whose entries break the invariant loads as its consistent suffix.
 *
 * <h2>Thread contract</h2>
 * Thread-safe: readers share a {@link ReentrantReadWriteLock}; every change, including its
 * checkpoint write, holds the write lock, so the file never goes back to an older state.
 */
public final class LeaderEpochFileCache {
    /** "No epoch", as Kafka's OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH. */
    public static final int UNDEFINED_EPOCH = -1;
    /** "No offset", as Kafka's OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET. */
    public static final long UNDEFINED_OFFSET = -1L;

    private static final Logger LOG = LoggerFactory.getLogger(LeaderEpochFileCache.class);

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final TopicPartition topicPartition;
    private final LeaderEpochCheckpointFile checkpoint;
    /** Guarded by lock. */
    private final TreeMap<Integer, EpochEntry> epochs = new TreeMap<>();

    /**
     * Loads the cache from {@code checkpoint} (empty when the file does not exist).
     *
     * @throws IOException including {@link io.strata.storage.checkpoint.CorruptCheckpointException}
     */
    public LeaderEpochFileCache(TopicPartition topicPartition, LeaderEpochCheckpointFile checkpoint) throws IOException {
        this.topicPartition = Objects.requireNonNull(topicPartition, "topicPartition");
        this.checkpoint = Objects.requireNonNull(checkpoint, "checkpoint");
        for (EpochEntry entry : checkpoint.read()) {
            assignInMemory(entry);
        }
    }

    /**
     * Records that {@code epoch} began at {@code startOffset}; see the class javadoc for how
     * conflicting entries are removed.
     *
     * @throws IllegalArgumentException if either value is negative
     */
    public void assign(int epoch, long startOffset) {
        EpochEntry entry = new EpochEntry(epoch, startOffset);
        if (!isUpdateNeeded(entry)) {
            return; // the common case, decided under the read lock only
        }
        writeLocked(() -> {
            if (assignInMemory(entry)) {
                writeCheckpoint();
            }
            return null;
        });
    }

    private boolean isUpdateNeeded(EpochEntry entry) {
        if (entry.epoch() < 0 || entry.startOffset() < 0) {
            throw new IllegalArgumentException("invalid leader epoch entry for " + topicPartition + ": epoch=" + entry.epoch()
                + ", startOffset=" + entry.startOffset());
        }
        return latestEntry().map(latest -> entry.epoch() != latest.epoch() || entry.startOffset() < latest.startOffset())
            .orElse(true);
    }

    /** The caller holds the write lock or is the constructor. @return whether the cache changed */
    private boolean assignInMemory(EpochEntry entry) {
        if (!isUpdateNeeded(entry)) {
            return false;
        }
        List<EpochEntry> removed = removeWhile(epochs.descendingMap().values().iterator(),
            existing -> existing.epoch() >= entry.epoch() || existing.startOffset() >= entry.startOffset());
        epochs.put(entry.epoch(), entry);
        boolean onlyReplacedUnusedEpoch = removed.isEmpty()
            || (removed.size() == 1 && removed.get(0).startOffset() == entry.startOffset());
        if (!onlyReplacedUnusedEpoch) {
            LOG.warn("[{}] New leader epoch entry {} removed conflicting entries {}; the cache now holds {}",
                topicPartition, entry, removed, epochs.values());
        }
        return true;
    }

    private static List<EpochEntry> removeWhile(Iterator<EpochEntry> iterator, Predicate<EpochEntry> condition) {
        List<EpochEntry> removed = new ArrayList<>();
        while (iterator.hasNext()) {
            EpochEntry entry = iterator.next();
            if (!condition.test(entry)) {
                break;
            }
            removed.add(entry);
            iterator.remove();
        }
        return removed;
    }

    public OptionalInt latestEpoch() {
        return latestEntry().map(entry -> OptionalInt.of(entry.epoch())).orElse(OptionalInt.empty());
    }

    public Optional<EpochEntry> latestEntry() {
        return readLocked(() -> Optional.ofNullable(epochs.lastEntry()).map(Map.Entry::getValue));
    }

    public Optional<EpochEntry> earliestEntry() {
        return readLocked(() -> Optional.ofNullable(epochs.firstEntry()).map(Map.Entry::getValue));
    }

    /** The epoch before the latest one, if there are at least two. */
    public OptionalInt previousEpoch() {
        return readLocked(() -> {
            if (epochs.isEmpty()) {
                return OptionalInt.empty();
            }
            Integer previous = epochs.lowerKey(epochs.lastKey());
            return previous == null ? OptionalInt.empty() : OptionalInt.of(previous);
        });
    }

    /** The epoch whose range holds {@code offset}: the last entry starting at or before it. */
    public OptionalInt epochForOffset(long offset) {
        return readLocked(() -> {
            OptionalInt found = OptionalInt.empty();
            for (EpochEntry entry : epochs.values()) {
                if (entry.startOffset() > offset) {
                    break;
                }
                found = OptionalInt.of(entry.epoch());
            }
            return found;
        });
    }

    /**
     * Kafka's OffsetForLeaderEpoch answer: the largest epoch {@code <= requestedEpoch} and the
     * offset at which it ended.
     * <ul>
     *   <li>{@code requestedEpoch} is {@link #UNDEFINED_EPOCH}, or above every known epoch, or the
     *       cache is empty: {@link EpochOffset#UNDEFINED}.</li>
     *   <li>{@code requestedEpoch} is the latest epoch: {@code (latest, logEndOffset)}.</li>
     *   <li>{@code requestedEpoch} is below the earliest epoch (its data has been deleted):
     *       {@code (requestedEpoch, start offset of the earliest epoch)}, as Kafka answers since
     *       2.x, so a follower or consumer truncates to the log start rather than falling back to
     *       the high watermark.</li>
     *   <li>Otherwise: {@code (largest epoch <= requestedEpoch, start offset of the next higher epoch)}.</li>
     * </ul>
     */
    public EpochOffset endOffsetFor(int requestedEpoch, long logEndOffset) {
        return readLocked(() -> {
            if (requestedEpoch == UNDEFINED_EPOCH) {
                return EpochOffset.UNDEFINED;
            }
            if (!epochs.isEmpty() && epochs.lastKey() == requestedEpoch) {
                return new EpochOffset(requestedEpoch, logEndOffset);
            }
            Map.Entry<Integer, EpochEntry> higher = epochs.higherEntry(requestedEpoch);
            if (higher == null) {
                return EpochOffset.UNDEFINED;
            }
            Map.Entry<Integer, EpochEntry> floor = epochs.floorEntry(requestedEpoch);
            int epoch = floor == null ? requestedEpoch : floor.getKey();
            return new EpochOffset(epoch, higher.getValue().startOffset());
        });
    }

    /**
     * Removes every entry whose start offset is {@code >= endOffset}, after the log was truncated
     * to {@code endOffset}. A negative {@code endOffset} is ignored.
     */
    public void truncateFromEnd(long endOffset) {
        writeLocked(() -> {
            Map.Entry<Integer, EpochEntry> latest = epochs.lastEntry();
            if (endOffset >= 0 && latest != null && latest.getValue().startOffset() >= endOffset) {
                List<EpochEntry> removed = removeWhile(epochs.descendingMap().values().iterator(),
                    entry -> entry.startOffset() >= endOffset);
                LOG.debug("[{}] Truncated leader epochs {} from end offset {}", topicPartition, removed, endOffset);
                writeCheckpoint();
            }
            return null;
        });
    }

    /**
     * After the log start moved to {@code startOffset}: removes the entries starting at or
     * before it and re-adds the last of them as starting at {@code startOffset}. An entry that
     * starts exactly at {@code startOffset} is therefore kept unchanged.
     */
    public void truncateFromStart(long startOffset) {
        writeLocked(() -> {
            List<EpochEntry> removed = removeWhile(epochs.values().iterator(), entry -> entry.startOffset() <= startOffset);
            if (!removed.isEmpty()) {
                EpochEntry lastRemoved = removed.get(removed.size() - 1);
                epochs.put(lastRemoved.epoch(), new EpochEntry(lastRemoved.epoch(), startOffset));
                LOG.debug("[{}] Truncated leader epochs {} to start offset {}", topicPartition, removed, startOffset);
                writeCheckpoint();
            }
            return null;
        });
    }

    /** A copy of the entries in epoch order. */
    public List<EpochEntry> epochEntries() {
        return readLocked(() -> new ArrayList<>(epochs.values()));
    }

    public boolean isEmpty() {
        return readLocked(epochs::isEmpty);
    }

    /** Removes every entry and writes the empty checkpoint. */
    public void clearAndFlush() {
        writeLocked(() -> {
            epochs.clear();
            writeCheckpoint();
            return null;
        });
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    /** The caller holds the write lock. */
    private void writeCheckpoint() {
        try {
            checkpoint.write(epochs.values());
        } catch (IOException e) {
            throw new UncheckedIOException("failed to write leader epoch checkpoint " + checkpoint.file()
                + " for " + topicPartition, e);
        }
    }

    private <T> T readLocked(Supplier<T> action) {
        lock.readLock().lock();
        try {
            return action.get();
        } finally {
            lock.readLock().unlock();
        }
    }

    private <T> T writeLocked(Supplier<T> action) {
        lock.writeLock().lock();
        try {
            return action.get();
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public String toString() {
        return "LeaderEpochFileCache(" + topicPartition + ", " + epochEntries() + ")";
    }
}
