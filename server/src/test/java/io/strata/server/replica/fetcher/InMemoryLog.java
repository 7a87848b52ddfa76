package io.strata.server.replica.fetcher;

import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.EpochOffset;
import io.strata.storage.TopicPartition;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A follower (or leader) log in memory that really stores the batches it is given, with an epoch
 * cache assigned per batch as UnifiedLog does, and Kafka's endOffsetFor rules. Truncation must
 * fall on batch boundaries (it always does in these tests). Can be told to fail the next append.
 * Thread-safe (synchronized).
 */
final class InMemoryLog implements FollowerLog {
    private final TopicPartition topicPartition;
    private final UUID topicId;
    private final List<DefaultRecordBatch> batches = new ArrayList<>();
    private final TreeMap<Integer, Long> epochStarts = new TreeMap<>();
    private long logStartOffset;
    private long logEndOffset;
    private long highWatermark;
    private long maxHighWatermarkSeen;
    private IOException nextAppendFailure;
    private int truncations;

    InMemoryLog(TopicPartition topicPartition, UUID topicId) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
    }

    /** A batch of {@code records} records at offset {@code baseOffset}, in {@code epoch} (-1: none). */
    static MemoryRecords batch(long baseOffset, int epoch, int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, baseOffset).partitionLeaderEpoch(epoch);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L + baseOffset + i, null, ("value-" + (baseOffset + i) + "-e" + epoch).getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    /** Appends a new batch at the log end as a leader would. */
    synchronized InMemoryLog appendBatch(int epoch, int records) {
        try {
            appendAsFollower(batch(logEndOffset, epoch, records), Integer.MAX_VALUE);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return this;
    }

    /** Appends the leader's batches covering offsets [from, to) (a shared history). */
    synchronized InMemoryLog copyFrom(InMemoryLog other, long from, long to) throws IOException {
        for (DefaultRecordBatch batch : other.batchesSnapshot()) {
            if (batch.baseOffset() >= from && batch.lastOffset() < to) {
                appendAsFollower(MemoryRecords.readableRecords(batch.buffer()), Integer.MAX_VALUE);
            }
        }
        return this;
    }

    /** A new leader's epoch start at the log end, before any batch of it (UnifiedLog.maybeAssignEpochStartOffset). */
    synchronized InMemoryLog assignEpoch(int epoch) {
        assign(epoch, logEndOffset);
        return this;
    }

    /** Kafka's LeaderEpochFileCache.assign: a new latest entry replaces entries starting at or after it. */
    private void assign(int epoch, long startOffset) {
        if (!epochStarts.isEmpty() && epoch <= epochStarts.lastKey()) {
            return;
        }
        epochStarts.values().removeIf(start -> start >= startOffset);
        epochStarts.put(epoch, startOffset);
    }

    synchronized void setHighWatermark(long offset) {
        highWatermark = Math.min(offset, logEndOffset);
        maxHighWatermarkSeen = Math.max(maxHighWatermarkSeen, highWatermark);
    }

    synchronized void failNextAppend(IOException failure) {
        nextAppendFailure = failure;
    }

    synchronized List<DefaultRecordBatch> batchesSnapshot() {
        return new ArrayList<>(batches);
    }

    /** Batches from {@code offset} up to about {@code maxBytes} (at least one), as one buffer. */
    synchronized MemoryRecords read(long offset, int maxBytes) {
        List<DefaultRecordBatch> selected = new ArrayList<>();
        int size = 0;
        for (DefaultRecordBatch batch : batches) {
            if (batch.lastOffset() < offset) {
                continue;
            }
            if (!selected.isEmpty() && size + batch.sizeInBytes() > maxBytes) {
                break;
            }
            selected.add(batch);
            size += batch.sizeInBytes();
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (DefaultRecordBatch batch : selected) {
            buffer.put(batch.buffer());
        }
        return MemoryRecords.readableRecords(buffer.flip());
    }

    /** The stored bytes, batch by batch, for comparing replicas. */
    synchronized List<ByteBuffer> contents() {
        return batches.stream().map(DefaultRecordBatch::buffer).toList();
    }

    synchronized Map<Integer, Long> epochStarts() {
        return new TreeMap<>(epochStarts);
    }

    synchronized long maxHighWatermarkSeen() {
        return maxHighWatermarkSeen;
    }

    synchronized int truncations() {
        return truncations;
    }

    @Override
    public TopicPartition topicPartition() {
        return topicPartition;
    }

    @Override
    public UUID topicId() {
        return topicId;
    }

    @Override
    public synchronized long logStartOffset() {
        return logStartOffset;
    }

    @Override
    public synchronized long logEndOffset() {
        return logEndOffset;
    }

    @Override
    public synchronized long highWatermark() {
        return highWatermark;
    }

    @Override
    public synchronized OptionalInt latestEpoch() {
        return epochStarts.isEmpty() ? OptionalInt.empty() : OptionalInt.of(epochStarts.lastKey());
    }

    /** LeaderEpochFileCache.endOffsetFor as Kafka defines it. */
    @Override
    public synchronized Optional<EpochOffset> endOffsetForEpoch(int epoch) {
        if (epochStarts.isEmpty() || epoch < 0) {
            return Optional.empty();
        }
        if (epochStarts.lastKey() == epoch) {
            return Optional.of(new EpochOffset(epoch, logEndOffset));
        }
        Map.Entry<Integer, Long> higher = epochStarts.higherEntry(epoch);
        if (higher == null) {
            return Optional.empty();
        }
        Map.Entry<Integer, Long> floor = epochStarts.floorEntry(epoch);
        return Optional.of(new EpochOffset(floor == null ? epoch : floor.getKey(), higher.getValue()));
    }

    @Override
    public synchronized void truncateTo(long offset) {
        truncations++;
        batches.removeIf(batch -> {
            if (batch.baseOffset() < offset && batch.lastOffset() >= offset) {
                throw new AssertionError("truncation inside a batch: offset=" + offset + ", batch=" + batch);
            }
            return batch.baseOffset() >= offset;
        });
        logEndOffset = Math.min(logEndOffset, offset);
        highWatermark = Math.min(highWatermark, logEndOffset);
        epochStarts.values().removeIf(start -> start >= offset); // even at the log end (KAFKA-10706)
    }

    @Override
    public synchronized void truncateFullyAndStartAt(long offset) {
        truncations++;
        batches.clear();
        epochStarts.clear();
        logStartOffset = offset;
        logEndOffset = offset;
        highWatermark = offset;
    }

    @Override
    public synchronized long appendAsFollower(MemoryRecords records, int currentLeaderEpoch) throws IOException {
        if (nextAppendFailure != null) {
            IOException failure = nextAppendFailure;
            nextAppendFailure = null;
            throw failure;
        }
        // As UnifiedLog.appendAsFollower: every batch is checked before any is written; a batch failing its CRC, or of a
        // leader epoch above the followed one, refuses the whole append.
        long expectedStart = logEndOffset;
        for (RecordBatch batch : records.batches()) {
            DefaultRecordBatch defaultBatch = (DefaultRecordBatch) batch;
            if (!defaultBatch.isValid()) {
                throw new io.strata.storage.ErrorCodeException(io.strata.protocol.ErrorCode.CORRUPT_MESSAGE, "batch at offset "
                    + defaultBatch.baseOffset() + " fails its CRC check");
            }
            if (defaultBatch.partitionLeaderEpoch() > currentLeaderEpoch) {
                throw new io.strata.storage.ErrorCodeException(io.strata.protocol.ErrorCode.INVALID_RECORD, "batch at offset "
                    + defaultBatch.baseOffset() + " has leader epoch " + defaultBatch.partitionLeaderEpoch() + " above " + currentLeaderEpoch);
            }
            if (defaultBatch.baseOffset() < expectedStart) {
                throw new IllegalStateException("unexpected append offset: baseOffset=" + defaultBatch.baseOffset() + ", logEndOffset=" + expectedStart);
            }
            expectedStart = defaultBatch.lastOffset() + 1;
        }
        for (RecordBatch batch : records.batches()) {
            DefaultRecordBatch defaultBatch = (DefaultRecordBatch) batch;
            ByteBuffer copy = ByteBuffer.allocate(defaultBatch.sizeInBytes()).put(defaultBatch.buffer()).flip();
            DefaultRecordBatch stored = DefaultRecordBatch.wrap(copy);
            batches.add(stored);
            int epoch = stored.partitionLeaderEpoch();
            if (epoch >= 0) {
                assign(epoch, stored.baseOffset());
            }
            logEndOffset = stored.lastOffset() + 1;
        }
        return logEndOffset;
    }

    @Override
    public synchronized void updateHighWatermark(long leaderHighWatermark) {
        highWatermark = Math.max(highWatermark, Math.min(leaderHighWatermark, logEndOffset));
        maxHighWatermarkSeen = Math.max(maxHighWatermarkSeen, highWatermark);
    }

    @Override
    public synchronized void maybeIncrementLogStartOffset(long leaderLogStartOffset) {
        if (leaderLogStartOffset > highWatermark) {
            throw new IllegalStateException("log start beyond the high watermark: " + leaderLogStartOffset + " > " + highWatermark);
        }
        if (leaderLogStartOffset > logStartOffset) {
            logStartOffset = leaderLogStartOffset;
            batches.removeIf(batch -> batch.lastOffset() < leaderLogStartOffset);
        }
    }

    @Override
    public String toString() {
        return "InMemoryLog(" + topicPartition + ", start=" + logStartOffset + ", end=" + logEndOffset + ", hw=" + highWatermark + ", epochs="
            + epochStarts + ")";
    }
}
