package io.strata.raft;

import io.strata.protocol.message.SnapshotFooterRecord;
import io.strata.protocol.message.SnapshotHeaderRecord;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Writes a snapshot as Kafka lays it out (KIP-630): a control batch with one SNAPSHOT_HEADER
 * record ({@link SnapshotHeaderRecord} v0: the timestamp of the last entry the snapshot
 * contains), then data batches with the state's records, then a control batch with one
 * SNAPSHOT_FOOTER record ({@link SnapshotFooterRecord} v0), written by {@link #freeze()}.
 * Batch offsets run from 0 inside the snapshot; every batch carries the snapshot's epoch.
 *
 * <p>A dynamic quorum's snapshot (kraft.version 1, KIP-853) also holds, right after the header,
 * one control batch with a KRAFT_VERSION record ({@code KRaftVersionRecord} v0) and a KRAFT_VOTERS
 * record ({@code VotersRecord} v0): the kraft.version and voter set in effect at the snapshot's end.
 *
 * <p>Not thread-safe.
 */
public final class RecordsSnapshotWriter implements AutoCloseable {
    private final SnapshotWriter raw;
    private long nextOffset;

    public RecordsSnapshotWriter(SnapshotWriter raw, long lastContainedLogTimestampMs) {
        this.raw = raw;
        byte[] header = RaftClient.encode(new SnapshotHeaderRecord().setVersion((short) 0)
            .setLastContainedLogTimestamp(lastContainedLogTimestampMs), (short) 0);
        appendControl(ControlRecordType.SNAPSHOT_HEADER, header, lastContainedLogTimestampMs);
    }

    /** A snapshot that also records {@code kraftVersion} and, if not empty, {@code voters} (dynamic quorums). */
    public RecordsSnapshotWriter(SnapshotWriter raw, long lastContainedLogTimestampMs, short kraftVersion, VoterSet voters) {
        this(raw, lastContainedLogTimestampMs);
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, nextOffset)
            .partitionLeaderEpoch(raw.snapshotId().epoch()).controlBatch(true);
        builder.appendControlRecord(lastContainedLogTimestampMs, ControlRecordType.KRAFT_VERSION, ByteBuffer.wrap(kraftVersionRecord(kraftVersion)));
        int count = 1;
        if (!voters.isEmpty()) {
            builder.appendControlRecord(lastContainedLogTimestampMs, ControlRecordType.KRAFT_VOTERS, ByteBuffer.wrap(RaftClient.encode(voters.toRecord(), (short) 0)));
            count++;
        }
        write(builder.build(), count);
    }

    static byte[] kraftVersionRecord(short kraftVersion) {
        return RaftClient.encode(new io.strata.protocol.message.KRaftVersionRecord().setVersion((short) 0).setKRaftVersion(kraftVersion), (short) 0);
    }

    public OffsetAndEpoch snapshotId() {
        return raw.snapshotId();
    }

    /** Appends {@code values} as one data batch. */
    public void append(List<byte[]> values, long timestampMs) {
        if (values.isEmpty()) {
            return;
        }
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, nextOffset)
            .partitionLeaderEpoch(raw.snapshotId().epoch());
        for (byte[] value : values) {
            builder.append(timestampMs, null, value);
        }
        write(builder.build(), values.size());
    }

    /** Writes the footer and freezes the snapshot (durable, then visible). */
    public void freeze(long timestampMs) {
        appendControl(ControlRecordType.SNAPSHOT_FOOTER, RaftClient.encode(new SnapshotFooterRecord().setVersion((short) 0), (short) 0), timestampMs);
        raw.freeze();
    }

    private void appendControl(ControlRecordType type, byte[] value, long timestampMs) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, nextOffset)
            .partitionLeaderEpoch(raw.snapshotId().epoch()).controlBatch(true);
        builder.appendControlRecord(timestampMs, type, ByteBuffer.wrap(value));
        write(builder.build(), 1);
    }

    private void write(MemoryRecords batch, int recordCount) {
        raw.append(batch.buffer().duplicate());
        nextOffset += recordCount;
    }

    /** Abandons the snapshot unless it was frozen. */
    @Override
    public void close() {
        raw.close();
    }
}
