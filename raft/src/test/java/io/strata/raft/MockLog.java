package io.strata.raft;

import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.Records;
import io.strata.protocol.records.TimestampType;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An in-memory {@link RaftLog} of real record batches v2 that, like a disk without fsync,
 * loses everything appended since the last {@link #flush()} when the simulation "crashes" it
 * ({@link #crash()}). The log object itself stands for the disk and survives the replica's
 * restart. Snapshots live in memory too and survive a crash once frozen (an unfrozen one is
 * never published); dropping the log prefix behind a snapshot is durable at once, as a
 * segment deletion is.
 */
final class MockLog implements RaftLog {
    /** One batch as stored: its bytes and, for the checks, its records' values. */
    record Batch(long baseOffset, int epoch, boolean control, List<byte[]> values, ByteBuffer bytes) {
        long nextOffset() {
            return baseOffset + values.size();
        }
    }

    /** One entry, for comparing logs. */
    record Entry(long offset, int epoch, boolean control, byte[] value) {
        boolean sameAs(Entry other) {
            return offset == other.offset && epoch == other.epoch && control == other.control && Arrays.equals(value, other.value);
        }
    }

    private final List<Batch> batches = new ArrayList<>();
    private long flushedOffset;
    private long logStartOffset;
    /** Frozen snapshots by end offset. */
    private final TreeMap<Long, MemorySnapshot> snapshots = new TreeMap<>();

    @Override
    public OffsetAndEpoch endOffset() {
        if (batches.isEmpty()) {
            MemorySnapshot atStart = snapshots.get(logStartOffset);
            return atStart != null ? atStart.snapshotId() : new OffsetAndEpoch(logStartOffset, 0);
        }
        Batch last = batches.get(batches.size() - 1);
        return new OffsetAndEpoch(last.nextOffset(), last.epoch());
    }

    @Override
    public long flushedOffset() {
        return flushedOffset;
    }

    @Override
    public OffsetAndEpoch endOffsetForEpoch(int epoch) {
        int found = -1;
        for (int i = 0; i < batches.size(); i++) {
            if (batches.get(i).epoch() <= epoch) {
                found = i;
            }
        }
        if (found < 0) {
            MemorySnapshot atStart = snapshots.get(logStartOffset);
            return atStart != null && atStart.snapshotId().epoch() <= epoch ? atStart.snapshotId() : OffsetAndEpoch.ZERO;
        }
        int foundEpoch = batches.get(found).epoch();
        return new OffsetAndEpoch(batches.get(found).nextOffset(), foundEpoch);
    }

    @Override
    public long appendAsLeader(List<byte[]> values, int epoch, long timestampMs) {
        checkEpoch(epoch);
        long base = endOffset().offset();
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, base).partitionLeaderEpoch(epoch);
        for (byte[] value : values) {
            builder.append(timestampMs, null, value);
        }
        store(builder.build());
        return endOffset().offset() - 1;
    }

    @Override
    public long appendControlAsLeader(ControlRecordType type, byte[] value, int epoch, long timestampMs) {
        checkEpoch(epoch);
        long base = endOffset().offset();
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, base)
            .partitionLeaderEpoch(epoch).controlBatch(true);
        builder.appendControlRecord(timestampMs, type, ByteBuffer.wrap(value));
        store(builder.build());
        return base;
    }

    private void checkEpoch(int epoch) {
        if (epoch < endOffset().epoch()) {
            throw new IllegalArgumentException("epoch " + epoch + " is below the last entry's epoch " + endOffset().epoch());
        }
    }

    @Override
    public void appendAsFollower(Records records) {
        MemoryRecords memory = (MemoryRecords) records;
        for (RecordBatch entry : memory.batches()) {
            DefaultRecordBatch batch = (DefaultRecordBatch) entry;
            batch.ensureValid();
            if (batch.baseOffset() != endOffset().offset()) {
                throw new IllegalArgumentException("batch at " + batch.baseOffset() + " does not start at the log end " + endOffset().offset());
            }
            checkEpoch(batch.partitionLeaderEpoch());
            ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes());
            copy.put(batch.buffer().duplicate());
            copy.flip();
            store(MemoryRecords.readableRecords(copy));
        }
    }

    private void store(MemoryRecords records) {
        for (RecordBatch entry : records.batches()) {
            DefaultRecordBatch batch = (DefaultRecordBatch) entry;
            List<byte[]> values = new ArrayList<>();
            for (Record record : batch.records()) {
                ByteBuffer value = record.value();
                byte[] bytes = new byte[value == null ? 0 : value.remaining()];
                if (value != null) {
                    value.duplicate().get(bytes);
                }
                values.add(bytes);
            }
            ByteBuffer bytes = ByteBuffer.allocate(batch.sizeInBytes());
            bytes.put(batch.buffer().duplicate());
            bytes.flip();
            batches.add(new Batch(batch.baseOffset(), batch.partitionLeaderEpoch(), batch.isControlBatch(), values, bytes));
        }
    }

    @Override
    public void truncateTo(long offset) {
        if (offset < logStartOffset) {
            throw new IllegalArgumentException("truncation to " + offset + " below the log start " + logStartOffset);
        }
        while (!batches.isEmpty() && batches.get(batches.size() - 1).baseOffset() >= offset) {
            batches.remove(batches.size() - 1);
        }
        if (!batches.isEmpty() && batches.get(batches.size() - 1).nextOffset() > offset) {
            throw new IllegalArgumentException("truncation to " + offset + " inside a batch ending at " + batches.get(batches.size() - 1).nextOffset());
        }
        flushedOffset = Math.min(flushedOffset, endOffset().offset());
    }

    @Override
    public void flush() {
        flushedOffset = endOffset().offset();
    }

    @Override
    public Records read(long startOffset, int maxBytes) {
        List<ByteBuffer> parts = new ArrayList<>();
        int size = 0;
        boolean started = false;
        for (Batch batch : batches) {
            if (batch.baseOffset() == startOffset || (startOffset == logStartOffset && batch.nextOffset() > startOffset)) {
                started = true;
            }
            if (!started) {
                continue;
            }
            if (!parts.isEmpty() && size + batch.bytes().remaining() > maxBytes) {
                break;
            }
            parts.add(batch.bytes().duplicate());
            size += batch.bytes().remaining();
        }
        if (!started && startOffset < endOffset().offset()) {
            throw new IllegalArgumentException("read from " + startOffset + ", which is not a batch boundary");
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        parts.forEach(out::put);
        out.flip();
        return MemoryRecords.readableRecords(out);
    }

    @Override
    public long logStartOffset() {
        return logStartOffset;
    }

    @Override
    public Optional<OffsetAndEpoch> latestSnapshotId() {
        return snapshots.isEmpty() ? Optional.empty() : Optional.of(snapshots.lastEntry().getValue().snapshotId());
    }

    @Override
    public SnapshotWriter createSnapshot(OffsetAndEpoch snapshotId) {
        if (readSnapshot(snapshotId).isPresent()) {
            throw new IllegalArgumentException("snapshot " + snapshotId + " exists already");
        }
        return new MemorySnapshot(snapshotId, frozen -> snapshots.put(snapshotId.offset(), frozen));
    }

    @Override
    public Optional<SnapshotReader> readSnapshot(OffsetAndEpoch snapshotId) {
        MemorySnapshot snapshot = snapshots.get(snapshotId.offset());
        return snapshot != null && snapshot.snapshotId().equals(snapshotId) ? Optional.of(snapshot) : Optional.empty();
    }

    @Override
    public boolean deleteBeforeSnapshot(long highWatermark) {
        Optional<OffsetAndEpoch> latest = latestSnapshotId();
        if (latest.isEmpty() || latest.get().offset() > highWatermark || latest.get().offset() <= logStartOffset) {
            return false;
        }
        long newStart = latest.get().offset();
        if (newStart > endOffset().offset()) {
            throw new IllegalStateException("snapshot " + latest.get() + " ends past the log end " + endOffset());
        }
        // A batch that straddles the new start stays whole; reads from the log start begin with it.
        batches.removeIf(batch -> batch.nextOffset() <= newStart);
        logStartOffset = newStart;
        flushedOffset = Math.max(flushedOffset, newStart);
        snapshots.headMap(newStart, false).clear();
        return true;
    }

    @Override
    public void truncateFullyAndStartAt(OffsetAndEpoch snapshotId) {
        if (readSnapshot(snapshotId).isEmpty()) {
            throw new IllegalArgumentException("no frozen snapshot " + snapshotId + " to start the log at");
        }
        batches.clear();
        logStartOffset = snapshotId.offset();
        flushedOffset = snapshotId.offset();
        snapshots.headMap(snapshotId.offset(), false).clear();
    }

    /** Every frozen snapshot, by end offset. */
    Map<Long, MemorySnapshot> snapshots() {
        return snapshots;
    }

    /** A crash: what was not flushed is gone. */
    void crash() {
        truncateTo(flushedOffset);
    }

    /** Every entry, in offset order. */
    List<Entry> entries() {
        List<Entry> entries = new ArrayList<>();
        for (Batch batch : batches) {
            for (int i = 0; i < batch.values().size(); i++) {
                entries.add(new Entry(batch.baseOffset() + i, batch.epoch(), batch.control(), batch.values().get(i)));
            }
        }
        return entries;
    }

    /** The entry at {@code offset}, or null. */
    Entry entry(long offset) {
        for (Batch batch : batches) {
            if (offset >= batch.baseOffset() && offset < batch.nextOffset()) {
                return new Entry(offset, batch.epoch(), batch.control(), batch.values().get((int) (offset - batch.baseOffset())));
            }
        }
        return null;
    }
}
