package io.strata.storage;

import io.strata.common.Time;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.CorruptRecordException;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.OptionalLong;

/**
 * One segment of a partition log: the {@code .log} file of record batches starting at
 * {@link #baseOffset()}, with its sparse {@code .index} (an entry every
 * {@code index.interval.bytes} of log, mapping a batch's last offset to its position), its
 * {@code .timeindex} (max timestamp so far → offset) and its {@code .txnindex} (aborted
 * transactions). File names are the base offset in 20 digits, as in Kafka.
 *
 * <p>Thread-safety: appends, truncation and recovery run under the partition lock; reads run
 * concurrently and see only bytes below the log's published size.
 */
public final class LogSegment implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LogSegment.class);

    public static final String LOG_SUFFIX = ".log";
    public static final String INDEX_SUFFIX = ".index";
    public static final String TIME_INDEX_SUFFIX = ".timeindex";
    public static final String TXN_INDEX_SUFFIX = ".txnindex";
    public static final String DELETED_SUFFIX = ".deleted";
    public static final String CLEANED_SUFFIX = ".cleaned";
    public static final String SWAP_SUFFIX = ".swap";

    private final FileRecords log;
    private final OffsetIndex offsetIndex;
    private final TimeIndex timeIndex;
    private final TransactionIndex txnIndex;
    private final long baseOffset;
    private final int indexIntervalBytes;
    private final long rollJitterMs;
    private final Time time;
    private final long createdMs;
    private int bytesSinceLastIndexEntry;
    private volatile long maxTimestampSoFar = RecordBatchConstants.NO_TIMESTAMP;
    private volatile long offsetOfMaxTimestampSoFar = -1L;
    /** Timestamp of the first batch, which segment.ms rolling measures from. */
    private volatile long rollingBasedTimestamp = -1L;

    private LogSegment(FileRecords log, OffsetIndex offsetIndex, TimeIndex timeIndex, TransactionIndex txnIndex, long baseOffset,
                       int indexIntervalBytes, long rollJitterMs, Time time) {
        this.log = log;
        this.offsetIndex = offsetIndex;
        this.timeIndex = timeIndex;
        this.txnIndex = txnIndex;
        this.baseOffset = baseOffset;
        this.indexIntervalBytes = indexIntervalBytes;
        this.rollJitterMs = rollJitterMs;
        this.time = time;
        this.createdMs = time.milliseconds();
    }

    /** Zero-padded 20-digit file name prefix of an offset, as Kafka names segment files. */
    public static String filenamePrefixFromOffset(long offset) {
        return String.format("%020d", offset);
    }

    public static Path logFile(Path dir, long baseOffset, String suffix) {
        return dir.resolve(filenamePrefixFromOffset(baseOffset) + LOG_SUFFIX + suffix);
    }

    public static Path offsetIndexFile(Path dir, long baseOffset, String suffix) {
        return dir.resolve(filenamePrefixFromOffset(baseOffset) + INDEX_SUFFIX + suffix);
    }

    public static Path timeIndexFile(Path dir, long baseOffset, String suffix) {
        return dir.resolve(filenamePrefixFromOffset(baseOffset) + TIME_INDEX_SUFFIX + suffix);
    }

    public static Path txnIndexFile(Path dir, long baseOffset, String suffix) {
        return dir.resolve(filenamePrefixFromOffset(baseOffset) + TXN_INDEX_SUFFIX + suffix);
    }

    /** Opens (or creates) the segment at {@code baseOffset} in {@code dir}; files carry {@code suffix} (usually ""). */
    public static LogSegment open(Path dir, long baseOffset, LogConfig config, Time time, long rollJitterMs, String suffix) throws IOException {
        FileRecords log = FileRecords.open(logFile(dir, baseOffset, suffix));
        OffsetIndex offsetIndex = new OffsetIndex(offsetIndexFile(dir, baseOffset, suffix), baseOffset, config.segmentIndexBytes, true);
        TimeIndex timeIndex = new TimeIndex(timeIndexFile(dir, baseOffset, suffix), baseOffset, config.segmentIndexBytes, true);
        TransactionIndex txnIndex = new TransactionIndex(baseOffset, txnIndexFile(dir, baseOffset, suffix));
        LogSegment segment = new LogSegment(log, offsetIndex, timeIndex, txnIndex, baseOffset, config.indexIntervalBytes, rollJitterMs, time);
        segment.loadLargestTimestamp();
        return segment;
    }

    private void loadLargestTimestamp() {
        TimestampOffset last = timeIndex.lastEntry();
        if (last.timestamp() > maxTimestampSoFar) {
            maxTimestampSoFar = last.timestamp();
            offsetOfMaxTimestampSoFar = last.offset();
        }
    }

    public long baseOffset() {
        return baseOffset;
    }

    public FileRecords log() {
        return log;
    }

    public OffsetIndex offsetIndex() {
        return offsetIndex;
    }

    public TimeIndex timeIndex() {
        return timeIndex;
    }

    public TransactionIndex txnIndex() {
        return txnIndex;
    }

    public int size() {
        return log.sizeInBytes();
    }

    public long maxTimestampSoFar() {
        return maxTimestampSoFar;
    }

    public long offsetOfMaxTimestampSoFar() {
        return offsetOfMaxTimestampSoFar;
    }

    /** Whether {@code offset} can be stored here: index entries hold offsets relative to the base as u32. */
    public boolean canConvertToRelativeOffset(long offset) {
        long relative = offset - baseOffset;
        return relative >= 0 && relative <= Integer.MAX_VALUE;
    }

    /**
     * Appends batches whose offsets are assigned, adding an index entry whenever
     * {@code index.interval.bytes} of log have passed since the last one.
     *
     * @param largestOffset the last offset in {@code records}
     */
    public void append(long largestOffset, MemoryRecords records) throws IOException {
        if (records.sizeInBytes() == 0) {
            return;
        }
        if (!canConvertToRelativeOffset(largestOffset)) {
            throw new IllegalArgumentException("offset " + largestOffset + " cannot be stored in the segment at " + baseOffset);
        }
        int physicalPosition = log.sizeInBytes();
        log.append(records);
        for (RecordBatch entry : records.batches()) {
            DefaultRecordBatch batch = (DefaultRecordBatch) entry;
            if (rollingBasedTimestamp < 0) {
                rollingBasedTimestamp = batch.maxTimestamp();
            }
            if (batch.maxTimestamp() > maxTimestampSoFar) {
                maxTimestampSoFar = batch.maxTimestamp();
                offsetOfMaxTimestampSoFar = batch.lastOffset();
            }
            if (bytesSinceLastIndexEntry > indexIntervalBytes) {
                offsetIndex.append(batch.lastOffset(), physicalPosition);
                timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar);
                bytesSinceLastIndexEntry = 0;
            }
            physicalPosition += batch.sizeInBytes();
            bytesSinceLastIndexEntry += batch.sizeInBytes();
        }
    }

    public void appendAbortedTxn(AbortedTxn aborted) throws IOException {
        txnIndex.append(aborted);
    }

    /** The batch holding {@code offset}, or the first batch after it; null if none. */
    public FileRecords.FileBatch translateOffset(long offset, int startingFilePosition) {
        OffsetPosition mapping = offsetIndex.lookup(offset);
        return log.searchForOffset(offset, Math.max(mapping.position(), startingFilePosition));
    }

    /**
     * Reads from the batch containing {@code startOffset}, at most {@code maxSize} bytes and
     * nothing at or past {@code maxPosition}. With {@code minOneMessage} the first batch is
     * returned whole even if larger than {@code maxSize}, so consumers always make progress.
     * Returns null if no batch at or after {@code startOffset} exists here.
     */
    public FetchDataInfo read(long startOffset, int maxSize, long maxPosition, boolean minOneMessage) {
        if (maxSize < 0) {
            throw new IllegalArgumentException("invalid max size " + maxSize + " for a read from segment " + log.file());
        }
        FileRecords.FileBatch first = translateOffset(startOffset, 0);
        if (first == null) {
            return null;
        }
        int startPosition = first.position();
        LogOffsetMetadata offsetMetadata = new LogOffsetMetadata(startOffset, baseOffset, startPosition);
        int adjustedMaxSize = minOneMessage ? Math.max(maxSize, first.sizeInBytes()) : maxSize;
        if (adjustedMaxSize == 0) {
            return FetchDataInfo.empty(offsetMetadata);
        }
        int fetchSize = (int) Math.min(maxPosition - startPosition, adjustedMaxSize);
        if (fetchSize <= 0) {
            return FetchDataInfo.empty(offsetMetadata);
        }
        return new FetchDataInfo(offsetMetadata, log.slice(startPosition, fetchSize), adjustedMaxSize < first.sizeInBytes(), null);
    }

    /**
     * The offset just past a read of {@code fetchSizeBytes} from {@code startPosition}: the base
     * offset of the first batch that starts at or after the read's end (a batch cut by the end
     * counts as read), or empty if the read reaches the end of this segment. The offset index
     * gives a position at most {@code index.interval.bytes} before the end, so only a few batch
     * headers are read. Bounds the aborted transactions a read_committed fetch returns.
     */
    public OptionalLong fetchUpperBoundOffset(int startPosition, int fetchSizeBytes) {
        long endPosition = (long) startPosition + fetchSizeBytes;
        if (endPosition >= log.sizeInBytes()) {
            return OptionalLong.empty();
        }
        int scanFrom = Math.max(startPosition, offsetIndex.lookupByPosition((int) endPosition).position());
        for (FileRecords.FileBatch batch : log.batchesFrom(scanFrom)) {
            if (batch.position() >= endPosition) {
                return OptionalLong.of(batch.baseOffset());
            }
        }
        return OptionalLong.empty();
    }

    /**
     * Rebuilds the indexes from the log, validating every batch (size, magic, CRC, offsets);
     * truncates the log at the first invalid batch and returns the bytes removed. Producer
     * state and the leader epoch cache are updated from the batches as they are read.
     */
    public int recover(ProducerStateManager producerState, LeaderEpochFileCache epochCache) throws IOException {
        offsetIndex.reset();
        timeIndex.reset();
        txnIndex.reset();
        bytesSinceLastIndexEntry = 0;
        maxTimestampSoFar = RecordBatchConstants.NO_TIMESTAMP;
        offsetOfMaxTimestampSoFar = -1L;
        rollingBasedTimestamp = -1L;
        int validBytes = 0;
        long expectedNextOffset = baseOffset;
        try {
            for (FileRecords.FileBatch header : log.batchesFrom(0)) {
                DefaultRecordBatch batch = header.load();
                batch.ensureValid();
                if (batch.baseOffset() < expectedNextOffset && validBytes > 0 || batch.lastOffset() < batch.baseOffset()) {
                    throw new CorruptRecordException("batch offsets " + batch.baseOffset() + ".." + batch.lastOffset()
                        + " do not follow offset " + (expectedNextOffset - 1));
                }
                if (!canConvertToRelativeOffset(batch.lastOffset())) {
                    throw new CorruptRecordException("batch offset " + batch.lastOffset() + " does not belong to segment " + baseOffset);
                }
                if (rollingBasedTimestamp < 0) {
                    rollingBasedTimestamp = batch.maxTimestamp();
                }
                if (batch.maxTimestamp() > maxTimestampSoFar) {
                    maxTimestampSoFar = batch.maxTimestamp();
                    offsetOfMaxTimestampSoFar = batch.lastOffset();
                }
                if (bytesSinceLastIndexEntry > indexIntervalBytes) {
                    offsetIndex.append(batch.lastOffset(), validBytes);
                    timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar);
                    bytesSinceLastIndexEntry = 0;
                }
                validBytes += batch.sizeInBytes();
                bytesSinceLastIndexEntry += batch.sizeInBytes();
                expectedNextOffset = batch.lastOffset() + 1;
                // As Kafka does, learn only epochs newer than the cache's latest. A segment recovered
                // from the middle of the log holds older epochs whose start offsets lie in earlier
                // segments: assigning one would drop every later entry and re-add the epoch at the
                // wrong start offset.
                if (epochCache != null && batch.partitionLeaderEpoch() >= 0
                    && batch.partitionLeaderEpoch() > epochCache.latestEpoch().orElse(LeaderEpochFileCache.UNDEFINED_EPOCH)) {
                    epochCache.assign(batch.partitionLeaderEpoch(), batch.baseOffset());
                }
                if (producerState != null) {
                    applyToProducerState(batch, producerState);
                }
            }
        } catch (CorruptRecordException e) {
            LOG.warn("Found invalid data in {} at position {}: {}", log.file(), validBytes, e.getMessage());
        } catch (io.strata.protocol.ProtocolException e) {
            LOG.warn("Found unreadable data in {} at position {}: {}", log.file(), validBytes, e.getMessage());
        }
        int truncated = log.sizeInBytes() - validBytes;
        if (truncated > 0) {
            LOG.warn("Truncating {} to {} bytes: {} bytes after it are not a valid batch", log.file(), validBytes, truncated);
        }
        log.truncateTo(validBytes);
        offsetIndex.trimToValidSize();
        if (maxTimestampSoFar >= 0) {
            // The final entry, so that the trimmed time index covers the whole segment.
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, true);
        }
        timeIndex.trimToValidSize();
        return truncated;
    }

    /** Replays one batch into producer state (recovery), writing aborted transactions to the txn index. */
    void applyToProducerState(DefaultRecordBatch batch, ProducerStateManager producerState) throws IOException {
        applyToProducerState(batch, producerState, true);
    }

    /** Replays one batch into producer state when the txn index is already complete (log loading). */
    void applyToProducerStateWithoutIndex(DefaultRecordBatch batch, ProducerStateManager producerState) throws IOException {
        applyToProducerState(batch, producerState, false);
    }

    private void applyToProducerState(DefaultRecordBatch batch, ProducerStateManager producerState, boolean writeTxnIndex) throws IOException {
        if (!batch.hasProducerId()) {
            producerState.updateMapEndOffset(batch.lastOffset() + 1);
            return;
        }
        if (batch.isControlBatch()) {
            List<Record> records = batch.records();
            if (!records.isEmpty()) {
                Record record = records.get(0);
                ControlRecordType type = ControlRecordType.parseKey(record.key());
                if (type == ControlRecordType.ABORT || type == ControlRecordType.COMMIT) {
                    EndTransactionMarker marker = EndTransactionMarker.fromRecord(record);
                    ProducerStateManager.CompletedTxn completed = producerState.recordMarker(batch.producerId(), batch.producerEpoch(),
                        marker.coordinatorEpoch(), type == ControlRecordType.COMMIT, batch.baseOffset(), batch.maxTimestamp(), MarkerCheck.NONE);
                    if (writeTxnIndex && completed != null && completed.isAborted()) {
                        long lastStable = producerState.firstUnstableOffset().orElse(batch.baseOffset() + 1);
                        txnIndex.append(new AbortedTxn(completed.producerId(), completed.firstOffset(), completed.lastOffset(),
                            Math.min(lastStable, completed.lastOffset() + 1)));
                    }
                }
            }
        } else {
            producerState.recordDataBatch(batch);
        }
        producerState.updateMapEndOffset(batch.lastOffset() + 1);
    }

    /** The offset after the last batch, or the base offset if the segment is empty. */
    public long readNextOffset() {
        OffsetPosition last = offsetIndex.lookup(Long.MAX_VALUE);
        long next = baseOffset;
        for (FileRecords.FileBatch batch : log.batchesFrom(last.position())) {
            next = batch.nextOffset();
        }
        return next;
    }

    /**
     * Removes every batch at or after {@code offset} (the batch containing it included) and
     * returns the bytes removed.
     */
    public int truncateTo(long offset) throws IOException {
        FileRecords.FileBatch first = translateOffset(offset, 0);
        if (first == null) {
            return 0;
        }
        offsetIndex.truncateTo(offset);
        timeIndex.truncateTo(offset);
        txnIndex.truncateTo(offset);
        offsetIndex.resize(offsetIndex.maxIndexSizeBytes());
        timeIndex.resize(timeIndex.maxIndexSizeBytes());
        int removed = log.truncateTo(first.position());
        if (log.sizeInBytes() == 0) {
            rollingBasedTimestamp = -1L;
        }
        bytesSinceLastIndexEntry = 0;
        maxTimestampSoFar = RecordBatchConstants.NO_TIMESTAMP;
        offsetOfMaxTimestampSoFar = -1L;
        loadLargestTimestamp();
        // Batches after the last time index entry may hold a larger timestamp.
        OffsetPosition lastIndexed = offsetIndex.lookup(Long.MAX_VALUE);
        for (FileRecords.FileBatch batch : log.batchesFrom(lastIndexed.position())) {
            if (batch.maxTimestamp() > maxTimestampSoFar) {
                maxTimestampSoFar = batch.maxTimestamp();
                offsetOfMaxTimestampSoFar = batch.lastOffset();
            }
        }
        return removed;
    }

    /** Roll conditions: size, time since the first batch (with jitter), full indexes, offset overflow. */
    public boolean shouldRoll(LogConfig config, int messagesSize, long largestTimestampMs, long maxOffsetInMessages, long nowMs) {
        boolean reachedRollMs = timeWaitedForRoll(nowMs, largestTimestampMs) > config.maxSegmentMs() - rollJitterMs;
        return size() > config.segmentBytes - messagesSize
            || (size() > 0 && reachedRollMs)
            || offsetIndex.isFull() || timeIndex.isFull()
            || !canConvertToRelativeOffset(maxOffsetInMessages);
    }

    /** Time since the segment's first batch (by its timestamp when it has one, else since creation). */
    public long timeWaitedForRoll(long nowMs, long messageTimestampMs) {
        long rollingBase = rollingBasedTimestamp;
        if (rollingBase >= 0) {
            return messageTimestampMs - rollingBase;
        }
        return nowMs - createdMs;
    }

    /** When the segment stops being the active one: final time index entry and trimmed index files. */
    public void onBecomeInactiveSegment() throws IOException {
        if (maxTimestampSoFar >= 0) {
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, true);
        }
        offsetIndex.trimToValidSize();
        timeIndex.trimToValidSize();
    }

    /**
     * The first offset whose record timestamp is at least {@code timestampMs}, searching from
     * {@code startingOffset}; null if no record here qualifies.
     */
    public TimestampAndOffset findOffsetByTimestamp(long timestampMs, long startingOffset) {
        TimestampOffset indexed = timeIndex.lookup(timestampMs);
        long searchFrom = Math.max(indexed.offset(), startingOffset);
        int position = offsetIndex.lookup(searchFrom).position();
        for (FileRecords.FileBatch header : log.batchesFrom(position)) {
            if (header.maxTimestamp() < timestampMs) {
                continue;
            }
            for (Record record : header.load().records()) {
                if (record.timestamp() >= timestampMs && record.offset() >= startingOffset) {
                    return new TimestampAndOffset(record.timestamp(), record.offset(), header.partitionLeaderEpoch());
                }
            }
        }
        return null;
    }

    /** A timestamp lookup result. */
    public record TimestampAndOffset(long timestamp, long offset, int leaderEpoch) {
    }

    /** Gives the indexes their full preallocated size again (the active segment after recovery). */
    public void resizeIndexes(int maxIndexSizeBytes) throws IOException {
        offsetIndex.resize(maxIndexSizeBytes);
        timeIndex.resize(maxIndexSizeBytes);
    }

    public void flush() throws IOException {
        log.flush();
        offsetIndex.flush();
        timeIndex.flush();
        txnIndex.flush();
    }

    public long lastModifiedMs() throws IOException {
        return Files.getLastModifiedTime(log.file()).toMillis();
    }

    public void setLastModifiedMs(long ms) throws IOException {
        FileTime time = FileTime.fromMillis(ms);
        Files.setLastModifiedTime(log.file(), time);
        Files.setLastModifiedTime(offsetIndex.file(), time);
        Files.setLastModifiedTime(timeIndex.file(), time);
    }

    /** The largest timestamp of the segment, or its last-modified time if it holds none. */
    public long largestTimestamp() throws IOException {
        return maxTimestampSoFar >= 0 ? maxTimestampSoFar : lastModifiedMs();
    }

    /** Renames all files from {@code oldSuffix} to {@code newSuffix} (e.g. "" to ".deleted"). */
    public void changeFileSuffixes(String oldSuffix, String newSuffix) throws IOException {
        log.renameTo(replaceSuffix(log.file(), oldSuffix, newSuffix));
        offsetIndex.renameTo(replaceSuffix(offsetIndex.file(), oldSuffix, newSuffix));
        timeIndex.renameTo(replaceSuffix(timeIndex.file(), oldSuffix, newSuffix));
        txnIndex.renameTo(replaceSuffix(txnIndex.file(), oldSuffix, newSuffix));
    }

    private static Path replaceSuffix(Path file, String oldSuffix, String newSuffix) {
        String name = file.getFileName().toString();
        if (!name.endsWith(oldSuffix)) {
            throw new IllegalArgumentException("expected suffix " + oldSuffix + " on " + file);
        }
        return file.resolveSibling(name.substring(0, name.length() - oldSuffix.length()) + newSuffix);
    }

    public void deleteIfExists() throws IOException {
        log.deleteIfExists();
        offsetIndex.deleteIfExists();
        timeIndex.deleteIfExists();
        txnIndex.deleteIfExists();
    }

    @Override
    public void close() throws IOException {
        if (maxTimestampSoFar >= 0) {
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, true);
        }
        offsetIndex.close();
        timeIndex.close();
        txnIndex.close();
        log.close();
    }

    /**
     * Closes the segment's files without writing anything (no time index entry, no trim): the
     * segment of a failed log directory, whose disk must not be written again by this process.
     */
    public void closeHandlers() throws IOException {
        offsetIndex.closeHandler();
        timeIndex.closeHandler();
        txnIndex.close();
        log.close();
    }

    @Override
    public String toString() {
        return "LogSegment(baseOffset=" + baseOffset + ", size=" + size() + ", file=" + log.file() + ")";
    }
}
