package io.strata.raft;

import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.Records;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.EpochEntry;
import io.strata.storage.EpochOffset;
import io.strata.storage.FetchIsolation;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.OptionalInt;

/**
 * The replicated log on disk: a {@link UnifiedLog} ({@code __cluster_metadata-0} with Kafka's
 * segment, index and leader-epoch-checkpoint files), whose leader epoch cache answers
 * {@link #endOffsetForEpoch}. Durability is the log's recovery point: {@link #flush()} fsyncs
 * and moves it, and only what is below it survives a crash.
 *
 * <p>A follower's batches keep the offsets and epochs the leader gave them: each is checked to
 * start at the log end and appended with its own epoch.
 *
 * <p>Snapshots are {@link FileSnapshots} files in the log's directory. Dropping the prefix behind
 * a snapshot moves the UnifiedLog's log start offset ({@code maybeIncrementLogStartOffset},
 * which also trims the leader epoch cache) and deletes the segments wholly below it
 * ({@code deleteOldSegments}) when the log's time and size retention are off, as they must be for
 * the metadata log (its cleanup is snapshots). With retention on, that call could also delete
 * segments above the snapshot, so then only the start moves and the files below it stay until
 * the log's own retention pass removes them (it deletes segments wholly below the start). The
 * segment holding the new start always stays, so entries just below it may remain on disk
 * but are no longer part of the log. At open, a snapshot past the log start moves the start up to
 * it, and a snapshot past the log end (a follower that crashed between freezing a fetched
 * snapshot and truncating its log) empties the log and starts it at the snapshot.
 *
 * <p>Not thread-safe beyond what {@link UnifiedLog} guarantees: driven by the quorum's thread.
 */
public final class FileRaftLog implements RaftLog {
    private final UnifiedLog log;
    /** Frozen snapshots by end offset. */
    private final TreeMap<Long, OffsetAndEpoch> snapshots;

    public FileRaftLog(UnifiedLog log) {
        this.log = log;
        try {
            this.snapshots = FileSnapshots.load(log.dir());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the snapshots of " + log, e);
        }
        latestSnapshotId().ifPresent(this::startAtSnapshotIfBehind);
    }

    private void startAtSnapshotIfBehind(OffsetAndEpoch latest) {
        if (latest.offset() > log.logEndOffset()) {
            truncateFullyAndStartAt(latest);
        } else if (latest.offset() > log.logStartOffset()) {
            log.updateHighWatermark(latest.offset()); // a snapshot covers committed entries only
            deleteBeforeSnapshot(latest.offset());
        }
    }

    public UnifiedLog log() {
        return log;
    }

    @Override
    public OffsetAndEpoch endOffset() {
        OptionalInt latest = log.leaderEpochCache().latestEpoch();
        if (latest.isEmpty() && snapshots.containsKey(log.logEndOffset())) {
            return snapshots.get(log.logEndOffset());
        }
        return new OffsetAndEpoch(log.logEndOffset(), latest.isPresent() ? latest.getAsInt() : 0);
    }

    @Override
    public long flushedOffset() {
        return log.recoveryPoint();
    }

    @Override
    public OffsetAndEpoch endOffsetForEpoch(int epoch) {
        OffsetAndEpoch end = endOffset();
        OffsetAndEpoch atStart = snapshots.get(log.logStartOffset());
        Optional<EpochEntry> earliest = log.leaderEpochCache().earliestEntry();
        if (earliest.isEmpty() || epoch < earliest.get().epoch()) {
            return atStart != null && atStart.epoch() <= epoch ? atStart : OffsetAndEpoch.ZERO;
        }
        if (epoch >= end.epoch()) {
            return end;
        }
        EpochOffset found = log.leaderEpochCache().endOffsetFor(epoch, end.offset());
        if (found.epoch() < 0 || found.endOffset() < 0) {
            return OffsetAndEpoch.ZERO;
        }
        return new OffsetAndEpoch(found.endOffset(), Math.min(found.epoch(), epoch));
    }

    @Override
    public long appendAsLeader(List<byte[]> values, int epoch, long timestampMs) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L);
        for (byte[] value : values) {
            builder.append(timestampMs, null, value);
        }
        return append(builder.build(), epoch);
    }

    @Override
    public long appendControlAsLeader(ControlRecordType type, byte[] value, int epoch, long timestampMs) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L).controlBatch(true);
        builder.appendControlRecord(timestampMs, type, ByteBuffer.wrap(value));
        return append(builder.build(), epoch);
    }

    private long append(MemoryRecords batch, int epoch) {
        if (epoch < endOffset().epoch()) {
            throw new IllegalArgumentException("epoch " + epoch + " is below the last entry's epoch " + endOffset().epoch() + " in " + log);
        }
        try {
            return log.appendAsLeader(batch, epoch, UnifiedLog.AppendOrigin.COORDINATOR).lastOffset();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + log, e);
        }
    }

    @Override
    public void appendAsFollower(Records records) {
        if (!(records instanceof MemoryRecords memory)) {
            throw new IllegalArgumentException("a follower appends record bytes it received, not " + records.getClass().getSimpleName());
        }
        for (RecordBatch entry : memory.batches()) {
            if (!(entry instanceof DefaultRecordBatch batch)) {
                throw new IllegalArgumentException("the metadata log holds record batches v2 only, got magic " + entry.magic());
            }
            if (batch.baseOffset() != log.logEndOffset()) {
                throw new IllegalArgumentException("batch at offset " + batch.baseOffset() + " does not start at the log end " + log.logEndOffset()
                    + " of " + log);
            }
            int epoch = batch.partitionLeaderEpoch();
            if (epoch < endOffset().epoch()) {
                throw new IllegalArgumentException("batch of epoch " + epoch + " follows epoch " + endOffset().epoch() + " in " + log);
            }
            ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes());
            copy.put(batch.buffer().duplicate());
            copy.flip();
            try {
                log.appendAsLeader(MemoryRecords.readableRecords(copy), epoch, UnifiedLog.AppendOrigin.REPLICATION);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot append to " + log, e);
            }
        }
    }

    @Override
    public void truncateTo(long offset) {
        if (offset < log.logStartOffset()) {
            throw new IllegalArgumentException("truncation to " + offset + " below the log start " + log.logStartOffset() + " of " + log);
        }
        try {
            log.truncateTo(offset);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot truncate " + log + " to " + offset, e);
        }
    }

    @Override
    public void flush() {
        try {
            log.flush(log.logEndOffset());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot flush " + log, e);
        }
    }

    @Override
    public Records read(long startOffset, int maxBytes) {
        return log.read(startOffset, maxBytes, FetchIsolation.LOG_END, true).records();
    }

    @Override
    public long logStartOffset() {
        return log.logStartOffset();
    }

    @Override
    public Optional<OffsetAndEpoch> latestSnapshotId() {
        return snapshots.isEmpty() ? Optional.empty() : Optional.of(snapshots.lastEntry().getValue());
    }

    @Override
    public SnapshotWriter createSnapshot(OffsetAndEpoch snapshotId) {
        if (snapshotId.equals(snapshots.get(snapshotId.offset()))) {
            throw new IllegalArgumentException("snapshot " + snapshotId + " exists already in " + log.dir());
        }
        return new FileSnapshots.Writer(log.dir(), snapshotId, () -> snapshots.put(snapshotId.offset(), snapshotId));
    }

    @Override
    public Optional<SnapshotReader> readSnapshot(OffsetAndEpoch snapshotId) {
        if (!snapshotId.equals(snapshots.get(snapshotId.offset()))) {
            return Optional.empty();
        }
        return Optional.of(new FileSnapshots.Reader(log.dir(), snapshotId));
    }

    @Override
    public boolean deleteBeforeSnapshot(long highWatermark) {
        Optional<OffsetAndEpoch> latest = latestSnapshotId();
        if (latest.isEmpty() || latest.get().offset() > highWatermark || latest.get().offset() <= log.logStartOffset()) {
            return false;
        }
        long newStart = latest.get().offset();
        try {
            if (log.highWatermark() < newStart) {
                log.updateHighWatermark(newStart); // UnifiedLog moves its start only below its own high watermark
            }
            log.maybeIncrementLogStartOffset(newStart);
            if (retentionOff()) {
                log.deleteOldSegments(); // with retention off it deletes only the segments wholly below the start
            }
            deleteSnapshotsBelow(newStart);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the log of " + log + " below the snapshot " + latest.get(), e);
        }
        return true;
    }

    @Override
    public void truncateFullyAndStartAt(OffsetAndEpoch snapshotId) {
        if (!snapshotId.equals(snapshots.get(snapshotId.offset()))) {
            throw new IllegalArgumentException("no frozen snapshot " + snapshotId + " in " + log.dir() + " to start the log at");
        }
        try {
            log.truncateFullyAndStartAt(snapshotId.offset());
            deleteSnapshotsBelow(snapshotId.offset());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + log + " at the snapshot " + snapshotId, e);
        }
    }

    private boolean retentionOff() {
        return !log.config().delete || (log.config().retentionMs < 0 && log.config().retentionBytes < 0);
    }

    private void deleteSnapshotsBelow(long offset) throws IOException {
        for (OffsetAndEpoch old : List.copyOf(snapshots.headMap(offset, false).values())) {
            FileSnapshots.delete(log.dir(), old);
            snapshots.remove(old.offset());
        }
    }
}
