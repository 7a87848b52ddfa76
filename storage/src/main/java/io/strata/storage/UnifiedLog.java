package io.strata.storage;

import io.strata.common.Time;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordLimits;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.checkpoint.LeaderEpochCheckpointFile;
import io.strata.storage.checkpoint.PartitionMetadataFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The log of one partition: an ordered set of segments, the log start offset, the log end
 * offset, the high watermark, the leader epoch cache and the producer state.
 *
 * <h2>Invariants</h2>
 * <ul>
 *   <li>logStartOffset ≤ highWatermark ≤ logEndOffset; the last segment is the active one and
 *       holds the log end.</li>
 *   <li>Offsets in the log are strictly increasing; every stored batch is a valid magic-2
 *       batch whose offsets are assigned here (leader) or by the leader (follower).</li>
 *   <li>The recovery point only moves after a successful fsync of everything below it.</li>
 * </ul>
 *
 * <p>Threading: one writer at a time under {@link #lock} (the partition lock); readers run
 * concurrently, bounded by the volatile log end / high watermark metadata that writers
 * publish after the bytes are written.
 */
public final class UnifiedLog implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(UnifiedLog.class);
    public static final String LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint";
    public static final String DELETE_DIR_SUFFIX = "-delete";

    private final Object lock = new Object();
    private volatile Path dir;
    private final TopicPartition topicPartition;
    private volatile LogConfig config;
    private final Time time;
    private final ScheduledExecutorService scheduler;
    private final Random random = new Random();
    private final ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();
    private final LeaderEpochFileCache epochCache;
    private final ProducerStateManager producerState;
    private final PartitionMetadataFile partitionMetadata;
    /** Guarded by {@link #lock}: the topic id as known here, whether it was read from the file, whether its write is deferred. */
    private UUID recordedTopicId;
    private boolean topicIdLoaded;
    private boolean topicIdWritePending;
    private final boolean fsyncOnAck;

    private volatile long logStartOffset;
    private volatile long recoveryPoint;
    private volatile LogOffsetMetadata logEnd;
    private volatile LogOffsetMetadata highWatermark;
    private volatile long lastFlushedMs;
    private long unflushedMessages;
    private volatile boolean closed;
    /** Bumped by every truncation, so the cleaner can tell that segments it read may have changed. */
    private volatile long truncationCount;
    /** Told the duration in nanoseconds of each flush that fsynced something (the flush-latency metric). */
    private volatile java.util.function.LongConsumer flushObserver = NO_FLUSH_OBSERVER;
    private static final java.util.function.LongConsumer NO_FLUSH_OBSERVER = nanos -> { };
    /**
     * Told after each roll and when the last stable offset moves into a later segment (see
     * {@link #maybeNotifyStableSegmentChange}), under the log's lock: it must be quick and take
     * no lock whose holder may wait for a log's lock.
     */
    private volatile java.util.function.Consumer<UnifiedLog> rollListener = log -> { };

    private UnifiedLog(Path dir, TopicPartition topicPartition, LogConfig config, Time time, ScheduledExecutorService scheduler,
                       long producerIdExpirationMs, boolean fsyncOnAck) throws IOException {
        this.dir = dir;
        this.topicPartition = topicPartition;
        this.config = config;
        this.time = time;
        this.scheduler = scheduler;
        this.fsyncOnAck = fsyncOnAck;
        this.epochCache = new LeaderEpochFileCache(topicPartition, new LeaderEpochCheckpointFile(dir.resolve(LEADER_EPOCH_CHECKPOINT)));
        this.producerState = new ProducerStateManager(topicPartition, dir, producerIdExpirationMs);
        this.partitionMetadata = new PartitionMetadataFile(dir);
        this.lastFlushedMs = time.milliseconds();
    }

    /**
     * Options for opening a log; checkpointed values come from the data directory's checkpoint files.
     *
     * @param checkpointedHighWatermark the partition's entry in {@code replication-offset-checkpoint}
     *        (the loaded high watermark is it, bounded by the log start and end offsets), or empty
     *        when the data directory has no such file (a directory written before Strata kept one):
     *        the high watermark is then the recovery point, bounded the same way, as before
     */
    public record LoadParams(long checkpointedLogStartOffset, long checkpointedRecoveryPoint, boolean hadCleanShutdown,
                             long producerIdExpirationMs, boolean fsyncOnAck, OptionalLong checkpointedHighWatermark) {
        /** Without a checkpointed high watermark: it loads as the bounded recovery point. */
        public LoadParams(long checkpointedLogStartOffset, long checkpointedRecoveryPoint, boolean hadCleanShutdown,
                          long producerIdExpirationMs, boolean fsyncOnAck) {
            this(checkpointedLogStartOffset, checkpointedRecoveryPoint, hadCleanShutdown, producerIdExpirationMs, fsyncOnAck,
                OptionalLong.empty());
        }

        public LoadParams {
            java.util.Objects.requireNonNull(checkpointedHighWatermark, "checkpointedHighWatermark");
        }
    }

    /**
     * Opens the log in {@code dir}, creating it if needed. After an unclean shutdown every
     * segment from the one holding the recovery point on is validated batch by batch and the
     * log is truncated at the first invalid byte; indexes that fail their sanity check or are
     * missing are rebuilt; leftovers of interrupted deletes and compactions are finished or
     * rolled back.
     */
    public static UnifiedLog load(Path dir, TopicPartition topicPartition, LogConfig config, Time time, ScheduledExecutorService scheduler,
                                  LoadParams params) throws IOException {
        Files.createDirectories(dir);
        UnifiedLog log = new UnifiedLog(dir, topicPartition, config, time, scheduler, params.producerIdExpirationMs(), params.fsyncOnAck());
        new LogLoader(log, params).load();
        // Producers that expired while the broker was down go now, as Kafka drops them when it
        // loads a snapshot, not at the first periodic check up to 10 minutes later.
        log.producerState.removeExpiredProducers(time.milliseconds());
        return log;
    }

    // ---------------------------------------------------------------- state used by the loader

    Object lock() {
        return lock;
    }

    ConcurrentSkipListMap<Long, LogSegment> segmentMap() {
        return segments;
    }

    LeaderEpochFileCache epochCache() {
        return epochCache;
    }

    ProducerStateManager producerStateManager() {
        return producerState;
    }

    Time time() {
        return time;
    }

    long newRollJitterMs() {
        return config.randomSegmentJitterMs(random);
    }

    /**
     * Sets the offsets the loader found. The high watermark is {@code checkpointedHighWatermark}
     * when present, else the recovery point (a data directory without
     * {@code replication-offset-checkpoint}), bounded by [logStartOffset, log end] either way.
     */
    void initialize(long logStartOffset, long recoveryPoint, LogOffsetMetadata logEnd, OptionalLong checkpointedHighWatermark) {
        this.logStartOffset = logStartOffset;
        this.recoveryPoint = recoveryPoint;
        this.logEnd = logEnd;
        long loaded = checkpointedHighWatermark.orElse(recoveryPoint);
        this.highWatermark = LogOffsetMetadata.offsetOnly(Math.min(Math.max(logStartOffset, loaded), logEnd.messageOffset()));
        this.highWatermark = logEnd.messageOffset() == highWatermark.messageOffset() ? logEnd : highWatermark;
    }

    // ---------------------------------------------------------------- accessors

    public Path dir() {
        return dir;
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public LogConfig config() {
        return config;
    }

    public void updateConfig(LogConfig newConfig) {
        this.config = newConfig;
    }

    public long logStartOffset() {
        return logStartOffset;
    }

    public long logEndOffset() {
        return logEnd.messageOffset();
    }

    public LogOffsetMetadata logEndOffsetMetadata() {
        return logEnd;
    }

    public long highWatermark() {
        return highWatermark.messageOffset();
    }

    public long recoveryPoint() {
        return recoveryPoint;
    }

    /** The last stable offset: nothing at or after it belongs to an undecided transaction. */
    public long lastStableOffset() {
        synchronized (lock) {
            long hw = highWatermark.messageOffset();
            return producerState.firstUnstableOffset().isPresent() ? Math.min(hw, producerState.firstUnstableOffset().getAsLong()) : hw;
        }
    }

    /** A copy of the producer states (DescribeProducers). */
    public java.util.List<ProducerStateEntry> producerStateSnapshot() {
        synchronized (lock) {
            java.util.List<ProducerStateEntry> copies = new ArrayList<>();
            for (ProducerStateEntry entry : producerState.activeProducers().values()) {
                copies.add(entry.copy());
            }
            return copies;
        }
    }

    /** Whether the producer (at this epoch) has a transaction open in this partition. */
    public boolean hasOngoingTransaction(long producerId, short producerEpoch) {
        synchronized (lock) {
            ProducerStateEntry entry = producerState.lastEntry(producerId);
            return entry != null && entry.producerEpoch() == producerEpoch && entry.currentTxnFirstOffset().isPresent();
        }
    }

    public int numberOfSegments() {
        return segments.size();
    }

    public Collection<LogSegment> logSegments() {
        return segments.values();
    }

    public LogSegment activeSegment() {
        return segments.lastEntry().getValue();
    }

    public long size() {
        long total = 0;
        for (LogSegment segment : segments.values()) {
            total += segment.size();
        }
        return total;
    }

    public LeaderEpochFileCache leaderEpochCache() {
        return epochCache;
    }

    public ProducerStateManager producerState() {
        return producerState;
    }

    /** The topic id: from {@code partition.metadata}, or assigned and not yet written there. */
    public java.util.Optional<UUID> topicId() {
        synchronized (lock) {
            try {
                return java.util.Optional.ofNullable(loadedTopicId());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Records {@code topicId} in {@code partition.metadata} now (both fsyncs), unless the file has it already. */
    public void assignTopicId(UUID topicId) throws IOException {
        synchronized (lock) {
            if (checkTopicId(topicId)) {
                partitionMetadata.record(topicId);
                recordedTopicId = topicId;
                topicIdWritePending = false;
            }
        }
    }

    /**
     * Takes {@code topicId} at once and writes {@code partition.metadata} on {@code writer} (as Kafka
     * defers its flush): creating thousands of partitions then waits on no fsync of this file. The
     * first append, a clean close, or {@link #flushTopicId} write it first if the background write has
     * not yet, so the directory names its topic before it holds any record: after a crash a log
     * without the file is empty, and an empty log adopted by a recreated topic of the same name holds
     * nothing of the old one.
     */
    public void assignTopicIdDeferred(UUID topicId, java.util.concurrent.Executor writer) throws IOException {
        synchronized (lock) {
            if (!checkTopicId(topicId)) {
                return;
            }
            recordedTopicId = topicId;
            topicIdWritePending = true;
        }
        try {
            writer.execute(() -> {
                try {
                    flushTopicId();
                } catch (IOException e) {
                    // Still pending: the first append or the close writes it (and fails there if the disk does).
                    throw new UncheckedIOException("writing " + PartitionMetadataFile.FILE_NAME + " of " + topicPartition, e);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            flushTopicId();
        }
    }

    /** Writes a deferred topic id to {@code partition.metadata} if it is still pending (no-op otherwise, or once closed). */
    public void flushTopicId() throws IOException {
        synchronized (lock) {
            if (topicIdWritePending && !closed) {
                partitionMetadata.record(recordedTopicId);
                topicIdWritePending = false;
            }
        }
    }

    /** @return whether {@code topicId} is new to this log (to be recorded); throws if the log has another id. Under the lock. */
    private boolean checkTopicId(UUID topicId) throws IOException {
        UUID existing = loadedTopicId();
        if (existing != null && !existing.equals(topicId)) {
            throw new IllegalStateException("partition " + topicPartition + " has topic id " + existing + ", not " + topicId);
        }
        return existing == null;
    }

    /** The topic id in memory, read from the file the first time. Under the lock. */
    private UUID loadedTopicId() throws IOException {
        if (!topicIdLoaded) {
            recordedTopicId = partitionMetadata.exists() ? partitionMetadata.read().orElse(null) : null;
            topicIdLoaded = true;
        }
        return recordedTopicId;
    }

    // ---------------------------------------------------------------- append

    /** Where an append comes from: it decides which checks apply. */
    public enum AppendOrigin { CLIENT, COORDINATOR, REPLICATION }

    /**
     * Appends batches as the leader: validates them, assigns offsets from the log end, stamps
     * {@code leaderEpoch} and (for LogAppendTime topics) the broker time, and writes them.
     * A retried duplicate of an idempotent producer's batch is not appended again; the
     * result carries the offsets it was given the first time.
     *
     * @throws ErrorCodeException with the Kafka error code for invalid batches or producer state
     */
    public LogAppendInfo appendAsLeader(MemoryRecords records, int leaderEpoch, AppendOrigin origin) throws IOException {
        synchronized (lock) {
            checkOpen();
            long now = time.milliseconds();
            List<DefaultRecordBatch> batches = validateBatches(records, origin, now);
            if (origin == AppendOrigin.CLIENT && batches.size() == 1) {
                LogAppendInfo duplicate = findDuplicate(batches.get(0));
                if (duplicate != null) {
                    return duplicate;
                }
            }
            long firstOffset = logEnd.messageOffset();
            long nextOffset = firstOffset;
            long maxTimestamp = -1L;
            int recordCount = 0;
            for (DefaultRecordBatch batch : batches) {
                batch.setLastOffset(nextOffset + batch.lastOffsetDelta());
                batch.setPartitionLeaderEpoch(leaderEpoch);
                if (config.logAppendTime) {
                    batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, now);
                }
                if (batch.hasProducerId()) {
                    producerState.validate(batch, origin == AppendOrigin.CLIENT);
                }
                nextOffset = batch.lastOffset() + 1;
                maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
                recordCount += batch.recordCount();
            }
            append(records, batches, firstOffset, nextOffset - 1, leaderEpoch, origin == AppendOrigin.REPLICATION ? MarkerCheck.NONE : MarkerCheck.NOT_OLDER);
            return new LogAppendInfo(firstOffset, nextOffset - 1, maxTimestamp, config.logAppendTime ? now : -1L, logStartOffset,
                recordCount, false);
        }
    }

    private LogAppendInfo findDuplicate(DefaultRecordBatch batch) {
        if (!batch.hasProducerId() || batch.isControlBatch()) {
            return null;
        }
        ProducerStateEntry entry = producerState.lastEntry(batch.producerId());
        if (entry == null) {
            return null;
        }
        BatchMetadata duplicate = entry.findDuplicateBatch(batch.producerEpoch(), batch.baseSequence(), batch.lastSequence());
        if (duplicate == null) {
            return null;
        }
        LOG.debug("Duplicate batch of producer {} seq {}..{} in {}: answering with offsets {}..{}", batch.producerId(),
            batch.baseSequence(), batch.lastSequence(), topicPartition, duplicate.firstOffset(), duplicate.lastOffset());
        return new LogAppendInfo(duplicate.firstOffset(), duplicate.lastOffset(), duplicate.timestamp(),
            config.logAppendTime ? duplicate.timestamp() : -1L, logStartOffset, 0, true);
    }

    /** Kafka's per-batch checks for writes: magic, size, CRC, record count, timestamps, keys on compacted topics. */
    private List<DefaultRecordBatch> validateBatches(MemoryRecords records, AppendOrigin origin, long now) {
        List<DefaultRecordBatch> batches = new ArrayList<>(1);
        try {
            if (records.validBytes() != records.sizeInBytes()) {
                throw new ErrorCodeException(ErrorCode.CORRUPT_MESSAGE, "record set of " + records.sizeInBytes()
                    + " bytes ends with an incomplete batch");
            }
            for (RecordBatch entry : records.batches()) {
                if (!(entry instanceof DefaultRecordBatch batch)) {
                    throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "record batches of magic " + entry.magic()
                        + " are not supported; Kafka 4 accepts magic 2 only");
                }
                if (batch.sizeInBytes() > config.maxMessageBytes) {
                    throw new ErrorCodeException(ErrorCode.MESSAGE_TOO_LARGE, "batch of " + batch.sizeInBytes()
                        + " bytes exceeds max.message.bytes=" + config.maxMessageBytes + " of " + topicPartition);
                }
                if (!batch.isValid()) {
                    throw new ErrorCodeException(ErrorCode.CORRUPT_MESSAGE, "batch fails its CRC check in " + topicPartition);
                }
                if (batch.recordCount() <= 0 || batch.recordCount() != batch.lastOffsetDelta() + 1) {
                    throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "batch record count " + batch.recordCount()
                        + " does not match its last offset delta " + batch.lastOffsetDelta());
                }
                if (origin == AppendOrigin.CLIENT && batch.isControlBatch()) {
                    throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "clients cannot write control batches");
                }
                validateTimestampsAndKeys(batch, now);
                batches.add(batch);
            }
        } catch (ProtocolException e) {
            throw new ErrorCodeException(ErrorCode.CORRUPT_MESSAGE, "malformed record batch: " + e.getMessage());
        }
        if (batches.isEmpty()) {
            throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "no record batch in the request");
        }
        return batches;
    }

    private void validateTimestampsAndKeys(DefaultRecordBatch batch, long now) {
        boolean checkEachRecord = config.compact || (!config.logAppendTime && config.messageTimestampBeforeMaxMs != Long.MAX_VALUE);
        if (!config.logAppendTime && batch.maxTimestamp() - now > config.messageTimestampAfterMaxMs) {
            throw new ErrorCodeException(ErrorCode.INVALID_TIMESTAMP, "timestamp " + batch.maxTimestamp() + " of a batch in "
                + topicPartition + " is more than message.timestamp.after.max.ms=" + config.messageTimestampAfterMaxMs + " ahead of now " + now);
        }
        if (!checkEachRecord || batch.isControlBatch()) {
            // Kafka reads every record of a batch it accepts (decompressing it if needed), so a
            // batch whose CRC is right but whose records are garbage never reaches a consumer.
            // This does the same without building record objects.
            batch.checkRecords(RecordLimits.DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES);
            return;
        }
        for (Record record : batch.records()) {
            if (config.compact && !record.hasKey()) {
                throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "compacted topic " + topicPartition.topic()
                    + " cannot accept a record without a key");
            }
            if (!config.logAppendTime && now - record.timestamp() > config.messageTimestampBeforeMaxMs) {
                throw new ErrorCodeException(ErrorCode.INVALID_TIMESTAMP, "timestamp " + record.timestamp() + " in " + topicPartition
                    + " is more than message.timestamp.before.max.ms=" + config.messageTimestampBeforeMaxMs + " before now " + now);
            }
        }
    }

    /**
     * Appends transaction markers written by the transaction coordinator (control batches
     * with offsets to be assigned here).
     */
    public LogAppendInfo appendMarker(MemoryRecords markerBatch, int leaderEpoch) throws IOException {
        return appendMarker(markerBatch, leaderEpoch, MarkerCheck.NOT_OLDER);
    }

    /** {@link #appendMarker(MemoryRecords, int)} with the given check of the markers' epochs. */
    public LogAppendInfo appendMarker(MemoryRecords markerBatch, int leaderEpoch, MarkerCheck check) throws IOException {
        synchronized (lock) {
            checkOpen();
            long now = time.milliseconds();
            List<DefaultRecordBatch> batches = validateBatches(markerBatch, AppendOrigin.COORDINATOR, now);
            long firstOffset = logEnd.messageOffset();
            long nextOffset = firstOffset;
            for (DefaultRecordBatch batch : batches) {
                if (!batch.isControlBatch()) {
                    throw new IllegalArgumentException("appendMarker takes control batches only: " + batch);
                }
                batch.setLastOffset(nextOffset + batch.lastOffsetDelta());
                batch.setPartitionLeaderEpoch(leaderEpoch);
                nextOffset = batch.lastOffset() + 1;
            }
            append(markerBatch, batches, firstOffset, nextOffset - 1, leaderEpoch, check);
            return new LogAppendInfo(firstOffset, nextOffset - 1, now, -1L, logStartOffset, batches.size(), false);
        }
    }

    // ---------------------------------------------------------------- follower append

    /**
     * Appends batches fetched from the leader as the leader wrote them (Kafka's append with origin
     * REPLICATION and no offset assignment): offsets, timestamps and each batch's
     * partitionLeaderEpoch are kept. Only what the bytes must satisfy is checked, all before
     * anything is written, so a refused append writes nothing:
     * <ul>
     *   <li>each batch is magic 2 and passes its CRC, else CORRUPT_MESSAGE (INVALID_RECORD for
     *       another magic); a truncated last batch (a Fetch response may end in one) is dropped;</li>
     *   <li>offsets strictly increase within and across batches, else {@link OffsetsOutOfOrderException};</li>
     *   <li>the first offset is not below the log end, else {@link UnexpectedAppendOffsetException}
     *       (a first offset above it is a gap a compacted leader leaves, and is allowed);</li>
     *   <li>no batch exceeds {@code segment.bytes} (RECORD_LIST_TOO_LARGE). {@code max.message.bytes}
     *       is not checked: Kafka's follower append ignores the record size (the leader accepted the
     *       batch, maybe under an older, larger limit).</li>
     * </ul>
     * No timestamp, key, sequence or duplicate check: the leader made them. Record counts are not
     * compared with offset deltas, since compacted batches keep their offsets and lose records.
     *
     * <p>Each batch is then written on its own, as one leader append of one batch would be: the
     * leader epoch cache gets {@code (partitionLeaderEpoch, baseOffset)} before the batch when that
     * epoch is newer than the latest; the segment rolls by the leader's rules (size, time, full
     * index, offsets that do not fit the active segment), at the batch's base offset; producer state
     * and the transaction index change as in the leader's append (the 5-batch metadata cache per
     * producer, KAFKA-5435). A leader that wrote one batch per append therefore has a log this one
     * matches byte for byte, segment files, indexes and snapshots included.
     *
     * <p>The high watermark does not move. Empty {@code records} (or only a partial batch) change
     * nothing and answer first and last offset -1. Holds the log's lock, as {@link #appendAsLeader}.
     *
     * @throws ErrorCodeException as listed above
     */
    public LogAppendInfo appendAsFollower(MemoryRecords records) throws IOException {
        return appendAsFollower(records, Integer.MAX_VALUE);
    }

    /**
     * {@link #appendAsFollower(MemoryRecords)} that also refuses, with INVALID_RECORD and nothing
     * appended, a batch whose partitionLeaderEpoch is above {@code currentLeaderEpoch} (the epoch
     * the follower fetched in): such a batch would put an epoch no leader has had yet into the
     * epoch cache (Kafka 4.1+, KAFKA-18723).
     */
    public LogAppendInfo appendAsFollower(MemoryRecords records, int currentLeaderEpoch) throws IOException {
        synchronized (lock) {
            checkOpen();
            List<DefaultRecordBatch> batches = validateFollowerBatches(records, currentLeaderEpoch);
            if (batches.isEmpty()) {
                return new LogAppendInfo(-1L, -1L, -1L, -1L, logStartOffset, 0, false);
            }
            long maxTimestamp = -1L;
            int recordCount = 0;
            for (DefaultRecordBatch batch : batches) {
                appendFollowerBatch(batch);
                maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
                recordCount += batch.recordCount();
            }
            if (unflushedMessages >= config.flushMessages) {
                flush(logEnd.messageOffset());
            }
            return new LogAppendInfo(batches.get(0).baseOffset(), batches.get(batches.size() - 1).lastOffset(), maxTimestamp, -1L,
                logStartOffset, recordCount, false);
        }
    }

    /** The complete batches of a follower append, checked as {@link #appendAsFollower} lists. Caller holds the lock. */
    private List<DefaultRecordBatch> validateFollowerBatches(MemoryRecords records, int currentLeaderEpoch) {
        List<DefaultRecordBatch> batches = new ArrayList<>();
        try {
            long previousLastOffset = -1L;
            for (RecordBatch entry : records.batches()) {
                if (!(entry instanceof DefaultRecordBatch batch)) {
                    throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "record batches of magic " + entry.magic()
                        + " are not supported; Kafka 4 accepts magic 2 only");
                }
                if (!batch.isValid()) {
                    throw new ErrorCodeException(ErrorCode.CORRUPT_MESSAGE, "batch at offset " + batch.baseOffset()
                        + " fails its CRC check in a follower append to " + topicPartition);
                }
                if (batch.lastOffset() < batch.baseOffset() || (!batches.isEmpty() && batch.baseOffset() <= previousLastOffset)) {
                    throw new OffsetsOutOfOrderException("out of order offsets in a follower append to " + topicPartition
                        + ": batch " + batch.baseOffset() + ".." + batch.lastOffset() + " after last offset " + previousLastOffset);
                }
                if (batch.partitionLeaderEpoch() != io.strata.protocol.records.RecordBatchDescriptor.NO_PARTITION_LEADER_EPOCH && batch.partitionLeaderEpoch() > currentLeaderEpoch) {
                    throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "batch at offset " + batch.baseOffset() + " of a follower append to "
                        + topicPartition + " has leader epoch " + batch.partitionLeaderEpoch() + ", above the current leader epoch "
                        + currentLeaderEpoch);
                }
                if (batch.sizeInBytes() > config.segmentBytes) {
                    throw new ErrorCodeException(ErrorCode.RECORD_LIST_TOO_LARGE, "batch of " + batch.sizeInBytes()
                        + " bytes exceeds segment.bytes=" + config.segmentBytes + " of " + topicPartition);
                }
                previousLastOffset = batch.lastOffset();
                batches.add(batch);
            }
        } catch (ProtocolException e) {
            throw new ErrorCodeException(ErrorCode.CORRUPT_MESSAGE, "malformed record batch in a follower append to " + topicPartition
                + ": " + e.getMessage());
        }
        if (!batches.isEmpty() && batches.get(0).baseOffset() < logEnd.messageOffset()) {
            long first = batches.get(0).baseOffset();
            long last = batches.get(batches.size() - 1).lastOffset();
            throw new UnexpectedAppendOffsetException("unexpected offset in a follower append to " + topicPartition + ": first offset "
                + first + " is below the log end offset " + logEnd.messageOffset() + " (append " + first + ".." + last
                + ", log start " + logStartOffset + ")", first, last);
        }
        return batches;
    }

    /** Writes one validated follower batch: epoch, roll, producer state, bytes, transaction index, log end. Caller holds the lock. */
    private void appendFollowerBatch(DefaultRecordBatch batch) throws IOException {
        if (batch.partitionLeaderEpoch() >= 0) {
            assignEpochIfNewer(batch.partitionLeaderEpoch(), batch.baseOffset());
        }
        LogSegment segment = maybeRoll(batch.sizeInBytes(), batch.maxTimestamp(), batch.lastOffset(),
            Math.max(batch.baseOffset(), logEnd.messageOffset()));
        // Markers unchecked: the leader decided. A control batch its cleaner emptied changes no producer, as in recovery.
        ProducerStateManager.CompletedTxn completed = !batch.isControlBatch() || batch.recordCount() > 0
            ? recordProducerState(batch, MarkerCheck.NONE) : null;
        segment.append(batch.lastOffset(), MemoryRecords.readableRecords(batch.buffer()));
        afterWrite(segment, completed == null ? List.of() : List.of(completed), batch.baseOffset(), batch.lastOffset());
    }

    // ---------------------------------------------------------------- leader epochs

    /**
     * Records that {@code leaderEpoch} starts at {@code startOffset} (a new leader passes its log
     * end offset) if the epoch is newer than the latest in the cache; the checkpoint file is
     * written before this returns, as for every assignment. Kafka's
     * {@code UnifiedLog.maybeAssignEpochStartOffset}.
     */
    public void maybeAssignEpochStartOffset(int leaderEpoch, long startOffset) {
        synchronized (lock) {
            assignEpochIfNewer(leaderEpoch, startOffset);
        }
    }

    /** Assigns {@code leaderEpoch} from {@code startOffset} if the cache's latest epoch is older (or there is none). Caller holds the lock. */
    private void assignEpochIfNewer(int leaderEpoch, long startOffset) {
        java.util.OptionalInt latest = epochCache.latestEpoch();
        if (latest.isEmpty() || leaderEpoch > latest.getAsInt()) {
            epochCache.assign(leaderEpoch, startOffset);
        }
    }

    /** The latest leader epoch in the cache, empty if it has none. */
    public java.util.OptionalInt latestEpoch() {
        return epochCache.latestEpoch();
    }

    /**
     * The largest local epoch not above {@code leaderEpoch} and the offset at which it ended (the
     * log end for the latest epoch), as {@link LeaderEpochFileCache#endOffsetFor} answers it;
     * empty when the cache has no such answer (no epoch at or below the requested one that it can
     * place, or {@code leaderEpoch} undefined). Kafka's {@code UnifiedLog.endOffsetForEpoch}.
     */
    public java.util.Optional<EpochOffset> endOffsetForEpoch(int leaderEpoch) {
        EpochOffset found = epochCache.endOffsetFor(leaderEpoch, logEnd.messageOffset());
        if (found.endOffset() == LeaderEpochFileCache.UNDEFINED_OFFSET) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(found);
    }

    /** Writes validated batches with assigned offsets; updates producer state, indexes, epochs and the log end. */
    private void append(MemoryRecords records, List<DefaultRecordBatch> batches, long firstOffset, long lastOffset, int leaderEpoch,
                        MarkerCheck markerCheck) throws IOException {
        if (topicIdWritePending) {
            partitionMetadata.record(recordedTopicId);
            topicIdWritePending = false;
        }
        long maxTimestamp = batches.stream().mapToLong(DefaultRecordBatch::maxTimestamp).max().orElse(-1L);
        LogSegment segment = maybeRoll(records.sizeInBytes(), maxTimestamp, lastOffset, logEnd.messageOffset());
        // Producer state first (markers can still be refused), then the bytes.
        List<ProducerStateManager.CompletedTxn> completed = new ArrayList<>();
        for (DefaultRecordBatch batch : batches) {
            ProducerStateManager.CompletedTxn txn = recordProducerState(batch, markerCheck);
            if (txn != null) {
                completed.add(txn);
            }
        }
        segment.append(lastOffset, records);
        if (leaderEpoch >= 0) {
            epochCache.assign(leaderEpoch, firstOffset);
        }
        afterWrite(segment, completed, firstOffset, lastOffset);
        if (unflushedMessages >= config.flushMessages) {
            flush(logEnd.messageOffset());
        }
    }

    /** A batch's effect on producer state: the transaction a marker completes, or null. Caller holds the lock. */
    private ProducerStateManager.CompletedTxn recordProducerState(DefaultRecordBatch batch, MarkerCheck markerCheck) {
        if (!batch.hasProducerId()) {
            return null;
        }
        if (batch.isControlBatch()) {
            return applyMarker(batch, markerCheck);
        }
        producerState.recordDataBatch(batch);
        return null;
    }

    /**
     * After {@code firstOffset..lastOffset} were written to {@code segment}: the aborted
     * transactions among {@code completed} go to its transaction index, and the producer state's
     * map end, the log end and the unflushed count move past the write. Caller holds the lock.
     */
    private void afterWrite(LogSegment segment, List<ProducerStateManager.CompletedTxn> completed, long firstOffset, long lastOffset)
        throws IOException {
        for (ProducerStateManager.CompletedTxn txn : completed) {
            if (txn.isAborted()) {
                long lastStable = producerState.firstUnstableOffset().orElse(txn.lastOffset() + 1);
                segment.appendAbortedTxn(new AbortedTxn(txn.producerId(), txn.firstOffset(), txn.lastOffset(),
                    Math.min(lastStable, txn.lastOffset() + 1)));
            }
        }
        producerState.updateMapEndOffset(lastOffset + 1);
        logEnd = new LogOffsetMetadata(lastOffset + 1, segment.baseOffset(), segment.size());
        unflushedMessages += lastOffset - firstOffset + 1;
    }

    private ProducerStateManager.CompletedTxn applyMarker(DefaultRecordBatch batch, MarkerCheck check) {
        List<Record> records = batch.records();
        if (records.size() != 1) {
            throw new ErrorCodeException(ErrorCode.INVALID_RECORD, "a transaction marker batch holds exactly one record, not " + records.size());
        }
        Record record = records.get(0);
        ControlRecordType type = ControlRecordType.parseKey(record.key());
        if (type != ControlRecordType.ABORT && type != ControlRecordType.COMMIT) {
            return null;
        }
        EndTransactionMarker marker = EndTransactionMarker.fromRecord(record);
        return producerState.recordMarker(batch.producerId(), batch.producerEpoch(), marker.coordinatorEpoch(),
            type == ControlRecordType.COMMIT, batch.baseOffset(), batch.maxTimestamp(), check);
    }

    /** The segment to write to: the active one, or a new one starting at {@code rollAt} if the leader's rules roll it. */
    private LogSegment maybeRoll(int messagesSize, long maxTimestamp, long maxOffset, long rollAt) throws IOException {
        LogSegment active = activeSegment();
        long now = time.milliseconds();
        if (active.shouldRoll(config, messagesSize, maxTimestamp, maxOffset, now)) {
            return roll(rollAt);
        }
        return active;
    }

    /** Starts a new active segment at {@code newOffset} (normally the log end). */
    public LogSegment roll(long newOffset) throws IOException {
        synchronized (lock) {
            LogSegment active = activeSegment();
            if (active.size() == 0 && active.baseOffset() == newOffset) {
                return active;
            }
            if (segments.containsKey(newOffset)) {
                throw new IllegalStateException("cannot roll " + topicPartition + " to " + newOffset + ": a segment with that base offset exists");
            }
            active.onBecomeInactiveSegment();
            producerState.updateMapEndOffset(newOffset);
            // Captured here (the state at the roll offset), written and fsynced off the lock.
            ProducerStateManager.PendingSnapshot snapshot = producerState.captureSnapshot();
            LogSegment segment = LogSegment.open(dir, newOffset, config, time, newRollJitterMs(), "");
            segments.put(newOffset, segment);
            logEnd = new LogOffsetMetadata(logEnd.messageOffset(), segment.baseOffset(), segment.size());
            LOG.debug("Rolled new segment of {} at offset {}", topicPartition, newOffset);
            // The rolled segment will never change again: flush it off the append path, after the
            // snapshot is durable, since the flush moves the recovery point past the snapshot's offset.
            long flushUpTo = newOffset;
            scheduler.execute(() -> {
                persistSnapshotQuietly(snapshot);
                flushQuietly(flushUpTo);
            });
            rollListener.accept(this);
            return segment;
        }
    }

    // ---------------------------------------------------------------- high watermark

    /** Moves the high watermark forward to {@code offset} (never past the log end); returns true if it moved. */
    public boolean maybeIncrementHighWatermark(LogOffsetMetadata offset) {
        synchronized (lock) {
            if (offset.messageOffset() > logEnd.messageOffset()) {
                throw new IllegalArgumentException("high watermark " + offset.messageOffset() + " beyond the log end "
                    + logEnd.messageOffset() + " of " + topicPartition);
            }
            if (offset.messageOffset() > highWatermark.messageOffset()
                || (offset.messageOffset() == highWatermark.messageOffset() && highWatermark.messageOffsetOnly() && !offset.messageOffsetOnly())) {
                long stableBefore = config.compact ? lastStableOffset() : -1;
                highWatermark = offset;
                maybeNotifyStableSegmentChange(stableBefore);
                return true;
            }
            return false;
        }
    }

    /**
     * The cleaner may take a segment only once the last stable offset has passed it. A roll
     * normally comes after that, but not always (an append racing its predecessor's high
     * watermark, an open transaction): when the last stable offset moves into a later segment,
     * the roll listener is told too. Only the cleaner listens, and only for compacted logs: others
     * skip the work on every high watermark move ({@code stableBefore} is then unused). Caller holds the lock.
     */
    private void maybeNotifyStableSegmentChange(long stableBefore) {
        if (!config.compact) {
            return;
        }
        long stableAfter = lastStableOffset();
        if (stableAfter > stableBefore) {
            // A segment base in (stableBefore, stableAfter]: the stable offset crossed into a later segment.
            Long crossed = segments.higherKey(stableBefore);
            if (crossed != null && crossed <= stableAfter) {
                rollListener.accept(this);
            }
        }
    }

    public void updateHighWatermark(long offset) {
        synchronized (lock) {
            long bounded = Math.max(logStartOffset, Math.min(offset, logEnd.messageOffset()));
            long stableBefore = config.compact ? lastStableOffset() : -1;
            highWatermark = bounded == logEnd.messageOffset() ? logEnd : LogOffsetMetadata.offsetOnly(bounded);
            maybeNotifyStableSegmentChange(stableBefore);
        }
    }

    /** On a single node the leader's log end is the high watermark once the write is durable enough. */
    public LogOffsetMetadata highWatermarkMetadata() {
        return highWatermark;
    }

    // ---------------------------------------------------------------- read

    /**
     * Reads from {@code startOffset} up to {@code maxLength} bytes, no further than the bound
     * the isolation gives. With {@code minOneMessage} the first batch is returned whole even
     * if it is larger than {@code maxLength}.
     *
     * @throws ErrorCodeException OFFSET_OUT_OF_RANGE if the offset is below the log start or past the log end
     */
    public FetchDataInfo read(long startOffset, int maxLength, FetchIsolation isolation, boolean minOneMessage) {
        LogOffsetMetadata end = logEnd;
        LogOffsetMetadata bound = switch (isolation) {
            case LOG_END -> end;
            case HIGH_WATERMARK -> offsetMetadata(highWatermark);
            case TXN_COMMITTED -> offsetMetadata(LogOffsetMetadata.offsetOnly(lastStableOffset()));
        };
        long start = logStartOffset;
        if (startOffset > end.messageOffset() || startOffset < start) {
            throw new ErrorCodeException(ErrorCode.OFFSET_OUT_OF_RANGE, "offset " + startOffset + " is out of range for " + topicPartition
                + " [" + start + ", " + end.messageOffset() + "]");
        }
        if (startOffset >= bound.messageOffset()) {
            return FetchDataInfo.empty(offsetMetadata(LogOffsetMetadata.offsetOnly(startOffset)));
        }
        Map.Entry<Long, LogSegment> entry = segments.floorEntry(startOffset);
        while (entry != null) {
            LogSegment segment = entry.getValue();
            long maxPosition = bound.segmentBaseOffset() == segment.baseOffset() ? bound.relativePositionInSegment() : segment.size();
            FetchDataInfo info = segment.read(startOffset, maxLength, maxPosition, minOneMessage);
            if (info != null) {
                if (isolation == FetchIsolation.TXN_COMMITTED) {
                    long upperBoundOffset = Math.min(bound.messageOffset(), fetchUpperBoundOffset(entry, info));
                    return info.withAbortedTransactions(collectAbortedTransactions(startOffset, upperBoundOffset));
                }
                return info;
            }
            entry = segments.higherEntry(entry.getKey());
        }
        return FetchDataInfo.empty(end);
    }

    /**
     * The offset just past what a read returned, as Kafka bounds the aborted transactions of a
     * read_committed fetch: only those overlapping the returned range go to the client, not every
     * one up to the last stable offset (a consumer far behind would get them all, every fetch).
     */
    private long fetchUpperBoundOffset(Map.Entry<Long, LogSegment> entry, FetchDataInfo info) {
        OptionalLong inSegment = entry.getValue().fetchUpperBoundOffset(info.fetchOffsetMetadata().relativePositionInSegment(),
            info.records().sizeInBytes());
        if (inSegment.isPresent()) {
            return inSegment.getAsLong();
        }
        Long nextSegmentBase = segments.higherKey(entry.getKey());
        return nextSegmentBase != null ? nextSegmentBase : logEnd.messageOffset();
    }

    /** Fills in the segment position of an offset known only by number. */
    private LogOffsetMetadata offsetMetadata(LogOffsetMetadata offset) {
        if (!offset.messageOffsetOnly()) {
            return offset;
        }
        LogOffsetMetadata end = logEnd;
        if (offset.messageOffset() >= end.messageOffset()) {
            return end;
        }
        Map.Entry<Long, LogSegment> entry = segments.floorEntry(offset.messageOffset());
        while (entry != null) {
            FileRecords.FileBatch batch = entry.getValue().translateOffset(offset.messageOffset(), 0);
            if (batch != null) {
                // Bound at the batch holding the offset: readers stop before it.
                return new LogOffsetMetadata(offset.messageOffset(), entry.getKey(), batch.position());
            }
            entry = segments.higherEntry(entry.getKey());
        }
        return end;
    }

    /** Aborted transactions that overlap [startOffset, upperBoundOffset), for read_committed fetches. */
    public List<AbortedTxn> collectAbortedTransactions(long startOffset, long upperBoundOffset) {
        List<AbortedTxn> aborted = new ArrayList<>();
        Map.Entry<Long, LogSegment> floor = segments.floorEntry(startOffset);
        ConcurrentNavigableMap<Long, LogSegment> from = floor == null ? segments : segments.tailMap(floor.getKey(), true);
        for (LogSegment segment : from.values()) {
            TxnIndexSearchResult result = segment.txnIndex().collectAbortedTxns(startOffset, upperBoundOffset);
            aborted.addAll(result.abortedTransactions());
            if (result.isComplete()) {
                break;
            }
        }
        return aborted;
    }

    // ---------------------------------------------------------------- offsets by time

    /** Result of a ListOffsets lookup. */
    public record OffsetAndTimestamp(long offset, long timestamp, int leaderEpoch) {
    }

    /**
     * The first offset whose timestamp is at least {@code timestampMs}, or null if every record
     * is older (the caller answers with the log end). Special timestamps (-1 latest, -2 earliest,
     * -3 max timestamp) are resolved by the caller.
     */
    public OffsetAndTimestamp fetchOffsetByTimestamp(long timestampMs) {
        for (LogSegment segment : segments.values()) {
            if (segment.maxTimestampSoFar() < timestampMs) {
                continue;
            }
            LogSegment.TimestampAndOffset found = segment.findOffsetByTimestamp(timestampMs, logStartOffset);
            if (found != null) {
                return new OffsetAndTimestamp(found.offset(), found.timestamp(), found.leaderEpoch());
            }
        }
        return null;
    }

    /** The record with the largest timestamp (ListOffsets MAX_TIMESTAMP), or null for an empty log. */
    public OffsetAndTimestamp maxTimestampOffset() {
        long bestTimestamp = -1L;
        long bestOffset = -1L;
        for (LogSegment segment : segments.values()) {
            if (segment.maxTimestampSoFar() > bestTimestamp) {
                bestTimestamp = segment.maxTimestampSoFar();
                bestOffset = segment.offsetOfMaxTimestampSoFar();
            }
        }
        if (bestOffset < 0) {
            return null;
        }
        // The index points at the batch's last offset; find the exact record.
        LogSegment.TimestampAndOffset exact = segments.floorEntry(bestOffset).getValue().findOffsetByTimestamp(bestTimestamp, logStartOffset);
        long offset = exact != null ? exact.offset() : bestOffset;
        return new OffsetAndTimestamp(offset, bestTimestamp, epochForOffset(offset));
    }

    /** The leader epoch in which {@code offset} was written, or -1 if unknown. */
    public int epochForOffset(long offset) {
        int epoch = -1;
        for (EpochEntry entry : epochCache.epochEntries()) {
            if (entry.startOffset() > offset) {
                break;
            }
            epoch = entry.epoch();
        }
        return epoch;
    }

    // ---------------------------------------------------------------- flush

    /** Where each flush's duration (nanoseconds) is reported; the log manager sets it on every log. */
    public void setFlushObserver(java.util.function.LongConsumer observer) {
        this.flushObserver = observer;
    }

    /** Told after every roll and stable-offset segment change (the log manager wakes the cleaner with it: the log may now be cleanable). */
    public void setRollListener(java.util.function.Consumer<UnifiedLog> listener) {
        this.rollListener = listener;
    }

    /** Test seam: runs in {@link #flush} before the fsync up to {@code target}; may block or throw to slow or fail it. */
    public interface FsyncHook {
        void beforeFsync(long target) throws IOException;
    }

    private volatile FsyncHook beforeFsync = target -> { };

    /** Test seam: see {@link FsyncHook}. */
    public void setBeforeFsync(FsyncHook hook) {
        this.beforeFsync = hook;
    }

    /** Fsyncs everything below {@code offset} and moves the recovery point there. */
    public void flush(long offset) throws IOException {
        long target = Math.min(offset, logEnd.messageOffset());
        if (target <= recoveryPoint) {
            return;
        }
        long flushStartNanos = System.nanoTime();
        beforeFsync.beforeFsync(target);
        Map.Entry<Long, LogSegment> floor = segments.floorEntry(recoveryPoint);
        Collection<LogSegment> toFlush = (floor == null ? segments : segments.tailMap(floor.getKey(), true)).headMap(target, false).values();
        for (LogSegment segment : toFlush) {
            segment.flush();
        }
        synchronized (lock) {
            if (target > recoveryPoint) {
                recoveryPoint = target;
                lastFlushedMs = time.milliseconds();
                unflushedMessages = 0;
            }
        }
        flushObserver.accept(System.nanoTime() - flushStartNanos);
    }

    /**
     * Writes and fsyncs a snapshot captured at a roll without holding the partition lock, then
     * publishes it under the lock. A snapshot that fails is only logged: the log loads from an
     * older snapshot (or the segment start) and replays more.
     */
    private void persistSnapshotQuietly(ProducerStateManager.PendingSnapshot snapshot) {
        if (snapshot == null || closed) {
            return;
        }
        try {
            producerState.writeSnapshotFile(snapshot);
            boolean published;
            synchronized (lock) {
                published = !closed && producerState.publishSnapshot(snapshot);
            }
            if (published) {
                producerState.syncSnapshotDirectory();
            } else if (snapshot.tempFile != null) {
                Files.deleteIfExists(snapshot.tempFile);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("Writing the producer snapshot of {} at offset {} failed; a load replays from an older one", topicPartition,
                snapshot.offset(), e);
        }
    }

    private void flushQuietly(long offset) {
        try {
            if (!closed) {
                flush(offset);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("Background flush of {} to {} failed", topicPartition, offset, e);
        }
    }

    /** Flushes if {@code flush.ms} has passed since the last flush (called by the log manager's flusher). */
    public void maybeFlushByTime() throws IOException {
        if (time.milliseconds() - lastFlushedMs >= config.flushMs && logEnd.messageOffset() > recoveryPoint) {
            flush(logEnd.messageOffset());
        }
    }

    /** Whether acks=all appends must be fsynced before they are acknowledged ({@code strata.fsync=on-ack}). */
    public boolean fsyncOnAck() {
        return fsyncOnAck;
    }

    // ---------------------------------------------------------------- retention

    /**
     * Deletes whole segments past retention (time, size) or wholly below the log start
     * offset. The active segment is only removed by first rolling a new one, so the log always
     * has an active segment. Returns the number of segments deleted.
     */
    public int deleteOldSegments() throws IOException {
        synchronized (lock) {
            long now = time.milliseconds();
            List<LogSegment> deletable = new ArrayList<>();
            long remainingBytes = size();
            List<LogSegment> all = new ArrayList<>(segments.values());
            for (int i = 0; i < all.size(); i++) {
                LogSegment segment = all.get(i);
                LogSegment next = i + 1 < all.size() ? all.get(i + 1) : null;
                boolean belowStart = next != null && next.baseOffset() <= logStartOffset;
                // Kafka leaves out only an empty active segment. An empty older one (the cleaner leaves
                // them when every record of a segment was superseded) is judged by its file time, as
                // Kafka does, instead of stopping retention of everything after it.
                boolean candidate = next != null || segment.size() > 0;
                boolean expired = config.delete && config.retentionMs >= 0 && candidate
                    && now - segment.largestTimestamp() > config.retentionMs;
                boolean oversized = config.delete && config.retentionBytes >= 0 && remainingBytes - segment.size() >= config.retentionBytes
                    && candidate;
                boolean belowHighWatermark = next != null ? next.baseOffset() <= highWatermark.messageOffset()
                    : logEnd.messageOffset() <= highWatermark.messageOffset();
                if (!(belowStart || ((expired || oversized) && belowHighWatermark))) {
                    break;
                }
                deletable.add(segment);
                remainingBytes -= segment.size();
            }
            if (deletable.isEmpty()) {
                return 0;
            }
            if (deletable.size() == segments.size()) {
                roll(logEnd.messageOffset());
            }
            for (LogSegment segment : deletable) {
                segments.remove(segment.baseOffset());
                scheduleDeletion(segment);
            }
            long newStart = Math.max(logStartOffset, segments.firstKey());
            if (newStart > logStartOffset) {
                logStartOffset = newStart;
                epochCache.truncateFromStart(newStart);
                producerState.deleteSnapshotsBefore(newStart);
            }
            LOG.info("Deleted {} segment(s) of {} by retention; log start offset is now {}", deletable.size(), topicPartition, logStartOffset);
            return deletable.size();
        }
    }

    /** Renames the segment's files to {@code .deleted} now and removes them after {@code file.delete.delay.ms}, so open readers finish safely. */
    private void scheduleDeletion(LogSegment segment) throws IOException {
        segment.changeFileSuffixes("", LogSegment.DELETED_SUFFIX);
        scheduler.schedule(() -> {
            try {
                segment.deleteIfExists();
            } catch (IOException e) {
                LOG.warn("Could not delete {}", segment, e);
            }
        }, config.fileDeleteDelayMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Moves the log start offset forward (DeleteRecords); segments wholly below it are deleted
     * by the next retention pass.
     *
     * @throws ErrorCodeException OFFSET_OUT_OF_RANGE if {@code newStart} is beyond the high watermark
     */
    public boolean maybeIncrementLogStartOffset(long newStart) throws IOException {
        synchronized (lock) {
            if (newStart > highWatermark.messageOffset()) {
                throw new ErrorCodeException(ErrorCode.OFFSET_OUT_OF_RANGE, "cannot move the log start offset of " + topicPartition
                    + " to " + newStart + ": the high watermark is " + highWatermark.messageOffset());
            }
            if (newStart <= logStartOffset) {
                return false;
            }
            logStartOffset = newStart;
            epochCache.truncateFromStart(newStart);
            producerState.deleteSnapshotsBefore(newStart);
            return true;
        }
    }

    // ---------------------------------------------------------------- truncation

    /** Removes everything at or after {@code targetOffset} (a follower catching up with a new leader). */
    public void truncateTo(long targetOffset) throws IOException {
        synchronized (lock) {
            if (targetOffset < 0) {
                throw new IllegalArgumentException("cannot truncate " + topicPartition + " to negative offset " + targetOffset);
            }
            if (targetOffset >= logEnd.messageOffset()) {
                // Nothing to cut, but an epoch this replica assigned as a leader that wrote nothing may start at the log end:
                // a follower truncating to the leader's end of that epoch must lose it, or it diverges again (KAFKA-10706).
                epochCache.truncateFromEnd(targetOffset);
                return;
            }
            truncationCount++;
            if (targetOffset < segments.firstKey()) {
                truncateFullyAndStartAt(targetOffset);
                return;
            }
            for (LogSegment segment : new ArrayList<>(segments.tailMap(targetOffset, false).values())) {
                segments.remove(segment.baseOffset());
                scheduleDeletion(segment);
            }
            LogSegment last = activeSegment();
            last.truncateTo(targetOffset);
            logEnd = new LogOffsetMetadata(targetOffset, last.baseOffset(), last.size());
            if (highWatermark.messageOffset() > targetOffset) {
                highWatermark = logEnd;
            }
            recoveryPoint = Math.min(recoveryPoint, targetOffset);
            epochCache.truncateFromEnd(targetOffset);
            rebuildProducerState();
        }
    }

    /** Deletes every segment and starts empty at {@code newOffset}. */
    public void truncateFullyAndStartAt(long newOffset) throws IOException {
        synchronized (lock) {
            truncationCount++;
            for (LogSegment segment : new ArrayList<>(segments.values())) {
                segments.remove(segment.baseOffset());
                scheduleDeletion(segment);
            }
            LogSegment segment = LogSegment.open(dir, newOffset, config, time, newRollJitterMs(), "");
            segments.put(newOffset, segment);
            logStartOffset = newOffset;
            recoveryPoint = newOffset;
            logEnd = new LogOffsetMetadata(newOffset, newOffset, 0);
            highWatermark = logEnd;
            epochCache.clearAndFlush();
            producerState.truncateFullyAndStartAt(newOffset);
        }
    }

    /** Reloads producer state from the newest usable snapshot and replays the log after it. */
    void rebuildProducerState() throws IOException {
        long from = producerState.truncateAndReload(logStartOffset, logEnd.messageOffset());
        Map.Entry<Long, LogSegment> floor = segments.floorEntry(from);
        Collection<LogSegment> replay = floor == null ? segments.values() : segments.tailMap(floor.getKey(), true).values();
        for (LogSegment segment : replay) {
            int position = segment.offsetIndex().lookup(from).position();
            for (FileRecords.FileBatch header : segment.log().batchesFrom(position)) {
                if (header.lastOffset() < from) {
                    continue;
                }
                segment.applyToProducerStateWithoutIndex(header.load(), producerState);
            }
        }
        producerState.updateMapEndOffset(logEnd.messageOffset());
    }

    // ---------------------------------------------------------------- compaction support

    /** The segments that hold offsets in [{@code from}, {@code to}): the one containing {@code from} and every later one below {@code to}. */
    public List<LogSegment> logSegments(long from, long to) {
        if (from > to) {
            throw new IllegalArgumentException("invalid segment range of " + topicPartition + ": from=" + from + " > to=" + to);
        }
        if (from == to) {
            return List.of();
        }
        Long floor = segments.floorKey(from);
        return new ArrayList<>(segments.subMap(floor == null ? from : floor, true, to, false).values());
    }

    /** The segments from the one containing {@code from} up to, not including, the active segment. */
    public List<LogSegment> nonActiveLogSegmentsFrom(long from) {
        return logSegments(Math.min(from, activeSegment().baseOffset()), activeSegment().baseOffset());
    }

    /** Incremented by every truncation; see {@link #replaceSegments}. */
    public long truncationCount() {
        return truncationCount;
    }

    /**
     * What the cleaner must keep of a producer: the batch holding its last data offset (its last
     * sequence), or, when it has none, its last transaction marker (its epoch, for fencing).
     */
    public record LastRecord(OptionalLong lastDataOffset, short producerEpoch) {
    }

    /** The last record of every producer the partition still tracks. */
    public Map<Long, LastRecord> lastRecordsOfActiveProducers() {
        synchronized (lock) {
            Map<Long, LastRecord> last = new java.util.HashMap<>();
            for (Map.Entry<Long, ProducerStateEntry> entry : producerState.activeProducers().entrySet()) {
                long lastDataOffset = entry.getValue().lastDataOffset();
                last.put(entry.getKey(), new LastRecord(lastDataOffset >= 0 ? OptionalLong.of(lastDataOffset) : OptionalLong.empty(),
                    entry.getValue().producerEpoch()));
            }
            return last;
        }
    }

    /** The points between the steps of {@link #replaceSegments}; a crash after each one leaves a state the loader repairs. */
    public enum SwapStep {
        /** Nothing renamed yet: the cleaned segment's files still end in {@code .cleaned} (a crash rolls the clean back). */
        CLEANED_WRITTEN,
        /** The cleaned files end in {@code .swap} (a crash from here on completes the swap). */
        RENAMED_TO_SWAP,
        /** The cleaned segment is in the segment map; the replaced segments are renamed {@code .deleted} and out of it. */
        OLD_SEGMENTS_DELETED
    }

    /** Called after each {@link SwapStep}; tests throw from it to simulate a crash at that point. */
    @FunctionalInterface
    public interface SwapObserver {
        SwapObserver NONE = step -> { };

        void afterStep(SwapStep step) throws IOException;
    }

    /**
     * Replaces {@code oldSegments}, a run of consecutive non-active segments, with {@code cleaned}
     * (their compacted copy, base offset that of the first old segment, files suffixed
     * {@code .cleaned}, fully written and flushed). Crash-safe, as Kafka does it:
     * <ol>
     *   <li>the cleaned files are renamed {@code .cleaned} → {@code .swap}, the log file first: once
     *       {@code <base>.log.swap} exists the swap is committed, and the loader completes it;</li>
     *   <li>the cleaned segment takes the first old segment's place in the segment map, the other old
     *       segments leave it, and all old segments are renamed {@code .deleted} and deleted after
     *       {@code file.delete.delay.ms};</li>
     *   <li>the cleaned files are renamed {@code .swap} → final names.</li>
     * </ol>
     * Readers never see a gap: the map entry of the first old segment is replaced atomically, and
     * until the other entries are removed they still name readable segments (the old ones), whose
     * files stay open until the delayed delete.
     *
     * @param truncationCountAtStart {@link #truncationCount()} before the cleaner read the old segments
     * @return false, changing nothing, if the log changed under the cleaner (closed, truncated, or
     *         an old segment deleted or become active); the caller deletes the cleaned files
     */
    public boolean replaceSegments(LogSegment cleaned, List<LogSegment> oldSegments, long truncationCountAtStart,
                                   SwapObserver observer) throws IOException {
        synchronized (lock) {
            if (oldSegments.isEmpty() || cleaned.baseOffset() != oldSegments.get(0).baseOffset()) {
                throw new IllegalArgumentException("cleaned segment " + cleaned + " must start where the replaced segments "
                    + oldSegments + " of " + topicPartition + " start");
            }
            String refusal = swapRefusal(oldSegments, truncationCountAtStart);
            if (refusal != null) {
                LOG.info("Not swapping in cleaned segment {} of {}: {}", cleaned, topicPartition, refusal);
                return false;
            }
            observer.afterStep(SwapStep.CLEANED_WRITTEN);
            cleaned.changeFileSuffixes(LogSegment.CLEANED_SUFFIX, LogSegment.SWAP_SUFFIX);
            forceDirectory();
            observer.afterStep(SwapStep.RENAMED_TO_SWAP);
            segments.put(cleaned.baseOffset(), cleaned);
            for (LogSegment old : oldSegments) {
                if (old.baseOffset() != cleaned.baseOffset()) {
                    segments.remove(old.baseOffset(), old);
                }
                scheduleDeletion(old);
            }
            observer.afterStep(SwapStep.OLD_SEGMENTS_DELETED);
            cleaned.changeFileSuffixes(LogSegment.SWAP_SUFFIX, "");
            forceDirectory();
            return true;
        }
    }

    /** Why the old segments may no longer be replaced, or null if they may. Called under the lock. */
    private String swapRefusal(List<LogSegment> oldSegments, long truncationCountAtStart) {
        if (closed) {
            return "the log is closed";
        }
        if (truncationCount != truncationCountAtStart) {
            return "the log was truncated while it was being cleaned";
        }
        for (LogSegment old : oldSegments) {
            if (segments.get(old.baseOffset()) != old) {
                return "segment " + old.baseOffset() + " was deleted while it was being cleaned";
            }
        }
        long lastOld = oldSegments.get(oldSegments.size() - 1).baseOffset();
        if (lastOld >= activeSegment().baseOffset()) {
            return "segment " + lastOld + " is the active segment";
        }
        return null;
    }

    /** Makes renames in the log directory durable. */
    private void forceDirectory() throws IOException {
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(dir, java.nio.file.StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    // ---------------------------------------------------------------- lifecycle

    private void checkOpen() {
        if (closed) {
            throw new ErrorCodeException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "log of " + topicPartition + " is closed");
        }
    }

    /** Clean close: final time index entries, trimmed indexes, a producer snapshot, files closed. */
    @Override
    public void close() throws IOException {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (topicIdWritePending) {
                partitionMetadata.record(recordedTopicId);
                topicIdWritePending = false;
            }
            closed = true;
            producerState.updateMapEndOffset(logEnd.messageOffset());
            producerState.takeSnapshot();
            for (LogSegment segment : segments.values()) {
                segment.close();
            }
        }
    }

    /**
     * Closes the log without writing to its directory (no producer snapshot, no index trim, no
     * flush), as Kafka's {@code closeHandlers}: the log of a failed log directory. Every later
     * operation is refused ({@link #checkOpen}); what was written stays on disk for the next
     * start's recovery. Failures to close one segment's files are logged and the others closed.
     */
    public void closeHandlers() {
        synchronized (lock) {
            closed = true;
            for (LogSegment segment : segments.values()) {
                try {
                    segment.closeHandlers();
                } catch (IOException | RuntimeException e) {
                    LOG.warn("Closing the files of {} of {} failed", segment, topicPartition, e);
                }
            }
        }
    }

    /** Closes and deletes the whole directory (topic deletion). */
    public void delete() throws IOException {
        synchronized (lock) {
            closed = true;
            for (LogSegment segment : segments.values()) {
                segment.deleteIfExists();
            }
            segments.clear();
            if (Files.exists(dir)) {
                try (var files = Files.walk(dir)) {
                    for (Path path : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(path);
                    }
                }
            }
        }
    }

    /** Renames the directory (e.g. to mark it for asynchronous deletion). */
    public void renameDir(String newName) throws IOException {
        synchronized (lock) {
            topicIdWritePending = false; // renamed to be deleted or reopened: the file of the old path is moot
            Path target = dir.resolveSibling(newName);
            Files.move(dir, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            dir = target;
            producerState.updateDir(target);
        }
    }

    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "UnifiedLog(" + topicPartition + ", start=" + logStartOffset + ", end=" + logEnd.messageOffset()
            + ", hw=" + highWatermark.messageOffset() + ", segments=" + segments.size() + ")";
    }
}
