package io.strata.raft;

import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.Records;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.EpochOffset;
import io.strata.storage.FetchIsolation;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
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
 * <p>Not thread-safe beyond what {@link UnifiedLog} guarantees: driven by the quorum's thread.
 */
public final class FileRaftLog implements RaftLog {
    private final UnifiedLog log;

    public FileRaftLog(UnifiedLog log) {
        this.log = log;
    }

    public UnifiedLog log() {
        return log;
    }

    @Override
    public OffsetAndEpoch endOffset() {
        OptionalInt latest = log.leaderEpochCache().latestEpoch();
        return new OffsetAndEpoch(log.logEndOffset(), latest.isPresent() ? latest.getAsInt() : 0);
    }

    @Override
    public long flushedOffset() {
        return log.recoveryPoint();
    }

    @Override
    public OffsetAndEpoch endOffsetForEpoch(int epoch) {
        OffsetAndEpoch end = endOffset();
        if (log.leaderEpochCache().latestEpoch().isEmpty()) {
            return OffsetAndEpoch.ZERO;
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
}
