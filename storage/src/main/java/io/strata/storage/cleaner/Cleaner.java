package io.strata.storage.cleaner;

import io.strata.common.Time;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatchDescriptor;
import io.strata.storage.FileRecords;
import io.strata.storage.LogSegment;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Compacts one log: keeps, for every key, only the record with the latest offset (Kafka's log
 * compaction). One pass:
 * <ol>
 *   <li><b>Map.</b> Reads the dirty section [first dirty offset, first uncleanable offset) and
 *       records each key's latest offset in the {@link OffsetMap}, skipping aborted
 *       transactions. If the map fills up, the pass covers only the part that was mapped; the
 *       next pass continues from there.</li>
 *   <li><b>Copy.</b> Rewrites every segment from the start of the log to the end of the mapped
 *       section, in groups that fit one segment ({@code segment.bytes}, {@code segment.index.bytes},
 *       offsets within an int of the base), each group into one {@code .cleaned} segment that is
 *       then swapped in by {@link UnifiedLog#replaceSegments}.</li>
 * </ol>
 * What a record needs to survive the copy:
 * <ul>
 *   <li>its offset is past the mapped section, or it is its key's latest record;</li>
 *   <li>if it is a tombstone (null value): its batch has no delete horizon yet, or the horizon
 *       is still ahead. The first pass that keeps a tombstone stamps its batch with the horizon
 *       now + {@code delete.retention.ms} (KIP-534), so tombstones live that long after they were
 *       first cleaned;</li>
 *   <li>it is not in an aborted transaction. Transaction markers go once nothing of their
 *       transaction remains, after a delete horizon of their own
 *       ({@link CleanedTransactionMetadata}).</li>
 * </ul>
 * Batches keep their offsets and producer fields. The batch holding an active producer's last
 * sequence (or its last marker) stays, emptied if need be, so producer state still rebuilds from
 * the log; so does the last batch before the first uncleanable offset, so the cleaned log still
 * ends where it did.
 *
 * <p>Not thread-safe: one per cleaner thread, which owns its offset map and buffers. The log is
 * read without its lock (cleaned segments are never the active one); only the swap takes it.
 */
public final class Cleaner {
    private static final Logger LOG = LoggerFactory.getLogger(Cleaner.class);
    /** How many batches are read between two checks for an abort. */
    private static final int BATCHES_PER_ABORT_CHECK = 64;

    /** Throws {@link LogCleaningAbortedException} when the pass over {@code topicPartition} must stop. */
    @FunctionalInterface
    public interface AbortCheck {
        AbortCheck NEVER = topicPartition -> { };

        void check(TopicPartition topicPartition);
    }

    /** The outcome of a pass: everything below {@code nextDirtyOffset} is now clean. */
    public record Result(long nextDirtyOffset, CleanerStats stats) {
    }

    private final OffsetMap offsetMap;
    private final int maxDesiredMapSize;
    private final ByteBuffer writeBuffer;
    private final Time time;
    private final AbortCheck abortCheck;
    private final UnifiedLog.SwapObserver swapObserver;
    private final Throttler throttler;
    private int batchesSinceAbortCheck;

    /**
     * @param loadFactor    how full the map may get (log.cleaner.io.buffer.load.factor)
     * @param ioBufferBytes how many cleaned bytes are collected before they are written
     * @param swapObserver  told after each step of a swap (tests simulate crashes with it)
     */
    public Cleaner(OffsetMap offsetMap, double loadFactor, int ioBufferBytes, Time time, AbortCheck abortCheck,
                   UnifiedLog.SwapObserver swapObserver) {
        this(offsetMap, loadFactor, ioBufferBytes, time, abortCheck, swapObserver, Throttler.unlimited(time));
    }

    /**
     * @param throttler shared by all cleaner threads: told every byte read and written
     *                  (log.cleaner.io.max.bytes.per.second)
     */
    public Cleaner(OffsetMap offsetMap, double loadFactor, int ioBufferBytes, Time time, AbortCheck abortCheck,
                   UnifiedLog.SwapObserver swapObserver, Throttler throttler) {
        this.throttler = throttler;
        this.offsetMap = offsetMap;
        this.maxDesiredMapSize = (int) (offsetMap.slots() * loadFactor);
        if (maxDesiredMapSize < 1) {
            throw new IllegalArgumentException("the offset map cannot hold a single key, so cleaning would never progress: slots="
                + offsetMap.slots() + ", loadFactor=" + loadFactor);
        }
        this.writeBuffer = ByteBuffer.allocate(ioBufferBytes);
        this.time = time;
        this.abortCheck = abortCheck;
        this.swapObserver = swapObserver;
    }

    /** Cleans {@code cleanable} as of now. */
    public Result clean(LogToClean cleanable) throws IOException {
        return clean(cleanable, time.milliseconds());
    }

    /**
     * Cleans {@code cleanable} as of {@code nowMs} (delete horizons are compared with it and new
     * ones start at it).
     *
     * @throws LogCleaningAbortedException if the pass was aborted or the log changed under it; the
     *                                     groups swapped in before stay swapped in
     */
    public Result clean(LogToClean cleanable, long nowMs) throws IOException {
        UnifiedLog log = cleanable.log();
        long truncationCount = log.truncationCount();
        CleanerStats stats = new CleanerStats();
        long upperBound = cleanable.firstUncleanableOffset();
        LOG.info("Cleaning {}: dirty section [{}, {})", log.topicPartition(), cleanable.firstDirtyOffset(), upperBound);
        buildOffsetMap(log, cleanable.firstDirtyOffset(), upperBound, stats);
        long endOffset = offsetMap.latestOffset() + 1;
        if (endOffset <= cleanable.firstDirtyOffset()) {
            return new Result(cleanable.firstDirtyOffset(), stats);
        }
        CleanedTransactionMetadata transactions = new CleanedTransactionMetadata();
        List<List<LogSegment>> groups = groupSegmentsBySize(log.logSegments(0, endOffset), log.config().segmentBytes,
            log.config().segmentIndexBytes, upperBound);
        for (List<LogSegment> group : groups) {
            cleanSegments(log, group, nowMs, stats, transactions, upperBound, truncationCount);
        }
        LOG.info("Cleaned {} up to offset {}: {}, offset map {}% full", log.topicPartition(), endOffset, stats,
            Math.round(offsetMap.utilization() * 100));
        return new Result(endOffset, stats);
    }

    // ---------------------------------------------------------------- map

    /** Maps the keys of [start, end) to their latest offsets, as far as the map allows. */
    void buildOffsetMap(UnifiedLog log, long start, long end, CleanerStats stats) throws IOException {
        offsetMap.clear();
        List<LogSegment> dirty = log.logSegments(start, end);
        CleanedTransactionMetadata transactions = new CleanedTransactionMetadata();
        transactions.addAbortedTransactions(log.collectAbortedTransactions(start, end));
        for (int i = 0; i < dirty.size(); i++) {
            abortCheck.check(log.topicPartition());
            long nextSegmentStart = i + 1 < dirty.size() ? dirty.get(i + 1).baseOffset() : end;
            if (mapSegment(log.topicPartition(), dirty.get(i), start, nextSegmentStart, transactions, stats)) {
                LOG.debug("Offset map of {} is full: {} segment(s) fully mapped, the one at {} partly", log.topicPartition(), i,
                    dirty.get(i).baseOffset());
                return;
            }
        }
    }

    /** Adds the keys of one segment from {@code start} on; returns true if the map filled up. */
    private boolean mapSegment(TopicPartition topicPartition, LogSegment segment, long start, long nextSegmentStart,
                               CleanedTransactionMetadata transactions, CleanerStats stats) throws IOException {
        int position = segment.offsetIndex().lookup(start).position();
        for (FileRecords.FileBatch header : segment.log().batchesFrom(position)) {
            if (header.baseOffset() >= nextSegmentStart) {
                break;
            }
            maybeCheckAbort(topicPartition);
            DefaultRecordBatch batch = header.load();
            stats.mapBatchRead(batch.sizeInBytes(), batch.recordCount());
            throttle(topicPartition, batch.sizeInBytes());
            if (batch.isControlBatch()) {
                transactions.onControlBatchRead(batch);
            } else if (!transactions.onBatchRead(batch)) {
                for (Record record : batch.records()) {
                    if (record.hasKey() && record.offset() >= start) {
                        if (offsetMap.size() >= maxDesiredMapSize) {
                            return true;
                        }
                        offsetMap.put(record.key(), record.offset());
                    }
                }
            }
            if (batch.lastOffset() >= start) {
                offsetMap.updateLatestOffset(batch.lastOffset());
            }
        }
        // Offsets removed by an earlier pass leave a gap before the next segment: it is mapped too.
        offsetMap.updateLatestOffset(nextSegmentStart - 1);
        return false;
    }

    // ---------------------------------------------------------------- group

    /**
     * Splits {@code segments} into runs that can each be rewritten as one segment: the sum of
     * their log sizes at most {@code maxSegmentBytes}, of their offset and time index sizes each at
     * most {@code maxIndexBytes}, and every offset within {@link Integer#MAX_VALUE} of the run's
     * base offset (the last segment's offsets are bounded by {@code firstUncleanableOffset}).
     */
    static List<List<LogSegment>> groupSegmentsBySize(List<LogSegment> segments, int maxSegmentBytes, int maxIndexBytes,
                                                      long firstUncleanableOffset) {
        List<List<LogSegment>> groups = new ArrayList<>();
        int next = 0;
        while (next < segments.size()) {
            LogSegment first = segments.get(next);
            List<LogSegment> group = new ArrayList<>();
            group.add(first);
            long logBytes = first.size();
            long offsetIndexBytes = first.offsetIndex().sizeInBytes();
            long timeIndexBytes = first.timeIndex().sizeInBytes();
            next++;
            while (next < segments.size()) {
                LogSegment candidate = segments.get(next);
                // An upper bound of the candidate's last offset, without reading it.
                long candidateLastOffset = next + 1 < segments.size() ? segments.get(next + 1).baseOffset() - 1 : firstUncleanableOffset - 1;
                boolean fits = logBytes + candidate.size() <= maxSegmentBytes
                    && offsetIndexBytes + candidate.offsetIndex().sizeInBytes() <= maxIndexBytes
                    && timeIndexBytes + candidate.timeIndex().sizeInBytes() <= maxIndexBytes
                    && (candidate.size() == 0 || candidateLastOffset - first.baseOffset() <= Integer.MAX_VALUE);
                if (!fits) {
                    break;
                }
                group.add(candidate);
                logBytes += candidate.size();
                offsetIndexBytes += candidate.offsetIndex().sizeInBytes();
                timeIndexBytes += candidate.timeIndex().sizeInBytes();
                next++;
            }
            groups.add(group);
        }
        return groups;
    }

    // ---------------------------------------------------------------- copy

    /** Cleans one group into a new segment and swaps it in. */
    private void cleanSegments(UnifiedLog log, List<LogSegment> group, long nowMs, CleanerStats stats,
                               CleanedTransactionMetadata transactions, long upperBound, long truncationCount) throws IOException {
        abortCheck.check(log.topicPartition());
        LogSegment cleaned = createCleanedSegment(log, group.get(0).baseOffset());
        transactions.setCleanedIndex(cleaned.txnIndex());
        try {
            Map<Long, UnifiedLog.LastRecord> lastRecords = log.lastRecordsOfActiveProducers();
            for (int i = 0; i < group.size(); i++) {
                LogSegment segment = group.get(i);
                // Aborted transactions over the whole segment: their kept markers' entries go to the cleaned index.
                long segmentEnd = i + 1 < group.size() ? group.get(i + 1).baseOffset() : segment.readNextOffset();
                transactions.addAbortedTransactions(log.collectAbortedTransactions(segment.baseOffset(), segmentEnd));
                cleanInto(log, segment, cleaned, nowMs, transactions, lastRecords, upperBound, stats);
            }
            cleaned.onBecomeInactiveSegment();
            cleaned.flush();
            cleaned.setLastModifiedMs(group.get(group.size() - 1).lastModifiedMs());
        } catch (IOException | RuntimeException | Error e) {
            deleteQuietly(cleaned, e);
            throw abortIfLogChanged(log, group, truncationCount, e);
        }
        if (!log.replaceSegments(cleaned, group, truncationCount, swapObserver)) {
            cleaned.deleteIfExists();
            throw new LogCleaningAbortedException("the log " + log.topicPartition() + " changed while it was being cleaned");
        }
        stats.segmentGroupCleaned();
    }

    /** Opens an empty {@code .cleaned} segment at {@code baseOffset}, removing leftovers of an earlier failed pass. */
    private LogSegment createCleanedSegment(UnifiedLog log, long baseOffset) throws IOException {
        Path dir = log.dir();
        String suffix = LogSegment.CLEANED_SUFFIX;
        Files.deleteIfExists(LogSegment.logFile(dir, baseOffset, suffix));
        Files.deleteIfExists(LogSegment.offsetIndexFile(dir, baseOffset, suffix));
        Files.deleteIfExists(LogSegment.timeIndexFile(dir, baseOffset, suffix));
        Files.deleteIfExists(LogSegment.txnIndexFile(dir, baseOffset, suffix));
        return LogSegment.open(dir, baseOffset, log.config(), time, 0L, suffix);
    }

    /** Copies what survives of {@code source} into {@code dest}. */
    private void cleanInto(UnifiedLog log, LogSegment source, LogSegment dest, long nowMs, CleanedTransactionMetadata transactions,
                           Map<Long, UnifiedLog.LastRecord> lastRecords, long upperBound, CleanerStats stats) throws IOException {
        writeBuffer.clear();
        long lastBufferedOffset = -1L;
        for (FileRecords.FileBatch header : source.log().batchesFrom(0)) {
            maybeCheckAbort(log.topicPartition());
            DefaultRecordBatch batch = header.load();
            stats.batchRead(batch.sizeInBytes(), batch.recordCount());
            MemoryRecords kept = filterBatch(batch, nowMs, log.config().deleteRetentionMs, transactions, lastRecords, upperBound, stats);
            // Kafka's throttler counts the bytes read and the bytes written of the copy.
            throttle(log.topicPartition(), batch.sizeInBytes() + (kept == null ? 0 : kept.sizeInBytes()));
            if (kept == null) {
                continue;
            }
            ByteBuffer bytes = kept.buffer();
            if (bytes.remaining() > writeBuffer.remaining()) {
                lastBufferedOffset = flushWriteBuffer(dest, lastBufferedOffset);
            }
            if (bytes.remaining() > writeBuffer.remaining()) {
                dest.append(batch.lastOffset(), kept);
            } else {
                writeBuffer.put(bytes);
                lastBufferedOffset = batch.lastOffset();
            }
        }
        flushWriteBuffer(dest, lastBufferedOffset);
    }

    /** Appends the buffered batches to {@code dest}; returns the new last buffered offset (none). */
    private long flushWriteBuffer(LogSegment dest, long lastBufferedOffset) throws IOException {
        if (writeBuffer.position() > 0) {
            writeBuffer.flip();
            dest.append(lastBufferedOffset, MemoryRecords.readableRecords(writeBuffer));
            writeBuffer.clear();
        }
        return -1L;
    }

    /**
     * What to write for {@code batch}: itself, a copy with fewer records or a new delete horizon,
     * an empty batch, or nothing (null).
     */
    private MemoryRecords filterBatch(DefaultRecordBatch batch, long nowMs, long deleteRetentionMs, CleanedTransactionMetadata transactions,
                                      Map<Long, UnifiedLog.LastRecord> lastRecords, long upperBound, CleanerStats stats)
        throws IOException {
        boolean canDiscardBatch = batch.isControlBatch() ? transactions.onControlBatchRead(batch) : transactions.onBatchRead(batch);
        // A marker that may go still waits for its delete horizon, as tombstones do.
        boolean discardRecords = batch.isControlBatch()
            ? canDiscardBatch && batch.hasDeleteHorizon() && batch.baseTimestamp() <= nowMs
            : canDiscardBatch;
        boolean keepEvenIfEmpty = (batch.hasProducerId() && isLastBatchOfProducer(batch, lastRecords)) || batch.nextOffset() == upperBound;
        if (discardRecords && !keepEvenIfEmpty) {
            return null;
        }
        List<Record> records = batch.records();
        List<Record> retained = new ArrayList<>(records.size());
        boolean containsTombstones = false;
        for (Record record : records) {
            if (!discardRecords && (batch.isControlBatch() || shouldRetainRecord(batch, record, nowMs, stats))) {
                retained.add(record);
                containsTombstones |= !record.hasValue();
            }
        }
        boolean markerOfEmptyTransaction = canDiscardBatch && batch.isControlBatch();
        boolean needsDeleteHorizon = (containsTombstones || markerOfEmptyTransaction) && !batch.hasDeleteHorizon();
        MemoryRecords kept;
        if (retained.isEmpty()) {
            kept = keepEvenIfEmpty ? CleanedBatches.empty(batch) : null;
        } else if (retained.size() == records.size() && !needsDeleteHorizon) {
            kept = CleanedBatches.unchanged(batch);
        } else {
            long deleteHorizonMs = needsDeleteHorizon ? saturatedAdd(nowMs, deleteRetentionMs)
                : batch.deleteHorizonMs().orElse(RecordBatchDescriptor.NO_TIMESTAMP);
            kept = CleanedBatches.retained(batch, retained, deleteHorizonMs);
        }
        if (kept != null) {
            stats.batchWritten(kept.sizeInBytes(), retained.size());
        }
        return kept;
    }

    /**
     * Kafka keeps, for each producer the partition still tracks, the batch with its last data
     * offset (it carries the last sequence), or if it has none, its last marker of the current
     * epoch (for fencing).
     */
    private static boolean isLastBatchOfProducer(DefaultRecordBatch batch, Map<Long, UnifiedLog.LastRecord> lastRecords) {
        UnifiedLog.LastRecord last = lastRecords.get(batch.producerId());
        if (last == null) {
            return false;
        }
        if (last.lastDataOffset().isPresent()) {
            return batch.lastOffset() == last.lastDataOffset().getAsLong();
        }
        return batch.isControlBatch() && batch.producerEpoch() == last.producerEpoch();
    }

    private boolean shouldRetainRecord(DefaultRecordBatch batch, Record record, long nowMs, CleanerStats stats) {
        if (record.offset() > offsetMap.latestOffset()) {
            return true; // beyond the mapped section: nothing newer is known
        }
        if (!record.hasKey()) {
            stats.invalidRecord();
            return false;
        }
        boolean latestForKey = record.offset() >= offsetMap.get(record.key());
        boolean tombstoneStillRetained = !batch.hasDeleteHorizon() || nowMs < batch.baseTimestamp();
        return latestForKey && (record.hasValue() || tombstoneStillRetained);
    }

    // ---------------------------------------------------------------- helpers

    /** Reports I/O to the shared throttler, which may sleep (checking for an abort meanwhile). */
    private void throttle(TopicPartition topicPartition, int bytes) {
        try {
            throttler.maybeThrottle(bytes, abortCheck, topicPartition);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LogCleaningAbortedException("interrupted while throttled");
        }
    }

    private void maybeCheckAbort(TopicPartition topicPartition) {
        if (++batchesSinceAbortCheck >= BATCHES_PER_ABORT_CHECK) {
            batchesSinceAbortCheck = 0;
            abortCheck.check(topicPartition);
        }
    }

    /**
     * A failure while reading segments that the log has since deleted, truncated or closed is
     * the race Kafka prevents by pausing the cleaner; here it aborts the pass instead of marking
     * the partition uncleanable.
     */
    private static RuntimeException abortIfLogChanged(UnifiedLog log, List<LogSegment> group, long truncationCount, Throwable failure)
        throws IOException {
        boolean changed = log.isClosed() || log.truncationCount() != truncationCount
            || !group.stream().allMatch(segment -> log.logSegments().contains(segment));
        if (changed && !(failure instanceof LogCleaningAbortedException)) {
            LogCleaningAbortedException aborted = new LogCleaningAbortedException("the log " + log.topicPartition()
                + " changed while it was being cleaned: " + failure);
            aborted.addSuppressed(failure);
            return aborted;
        }
        if (failure instanceof IOException io) {
            throw io;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        return (RuntimeException) failure;
    }

    private static void deleteQuietly(LogSegment cleaned, Throwable cause) {
        try {
            cleaned.deleteIfExists();
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }

    public OffsetMap offsetMap() {
        return offsetMap;
    }
}
