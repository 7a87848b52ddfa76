package io.strata.metadata;

import io.strata.metadata.record.MetadataRecordType;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.Reader;
import io.strata.protocol.Sizes;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.FileRecords;
import io.strata.storage.LogAppendInfo;
import io.strata.storage.UnifiedLog;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code __cluster_metadata-0} log of a single-voter quorum: every metadata change is a
 * batch of records appended here, fsynced, and only then applied. A multi-voter Raft quorum
 * replaces this writer later without changing what is stored or how it is applied.
 *
 * <p>Each record's value is a frame: {@code frame version (unsigned varint, 1) | record type id
 * (unsigned varint) | record version (unsigned varint) | record body}; keys are null. One
 * controller operation is one batch, so it is applied all or nothing.
 *
 * <p>Not thread-safe: used by the controller thread (and at start-up, before it runs).
 */
public final class MetadataLog implements Closeable {
    public static final String TOPIC = "__cluster_metadata";
    static final int FRAME_VERSION = 1;
    /** Leader epoch of a single-voter quorum; Raft epochs replace it later. */
    static final int SINGLE_VOTER_EPOCH = 1;

    private final UnifiedLog log;

    public MetadataLog(UnifiedLog log) {
        this.log = log;
    }

    public UnifiedLog log() {
        return log;
    }

    /** Appends one batch of records, fsyncs it and marks it committed; returns the last offset. */
    public long append(List<ApiMessage> records, long timestampMs) throws IOException {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("a metadata batch needs at least one record");
        }
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L);
        for (ApiMessage record : records) {
            builder.append(timestampMs, null, encode(record));
        }
        LogAppendInfo info = log.appendAsLeader(builder.build(), SINGLE_VOTER_EPOCH, UnifiedLog.AppendOrigin.COORDINATOR);
        log.flush(log.logEndOffset());
        log.updateHighWatermark(log.logEndOffset());
        return info.lastOffset();
    }

    static byte[] encode(ApiMessage record) {
        MetadataRecordType type = MetadataRecordType.fromId(record.apiKey());
        short version = type.highestVersion;
        int size = Sizes.unsignedVarintSize(FRAME_VERSION) + Sizes.unsignedVarintSize(type.id)
            + Sizes.unsignedVarintSize(version) + record.size(version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        ByteBufferWriter writer = new ByteBufferWriter(buffer);
        writer.writeUnsignedVarint(FRAME_VERSION);
        writer.writeUnsignedVarint(type.id);
        writer.writeUnsignedVarint(version);
        record.write(writer, version);
        return buffer.array();
    }

    static ApiMessage decode(ByteBuffer value) {
        Reader reader = new Reader(value);
        int frameVersion = reader.readUnsignedVarint();
        if (frameVersion != FRAME_VERSION) {
            throw new ProtocolException("unknown metadata frame version " + frameVersion);
        }
        int typeId = reader.readUnsignedVarint();
        MetadataRecordType type = MetadataRecordType.fromId(typeId);
        if (type == null) {
            throw new ProtocolException("unknown metadata record type " + typeId);
        }
        short version = (short) reader.readUnsignedVarint();
        if (version > type.highestVersion) {
            throw new ProtocolException("metadata record type " + type + " version " + version + " is newer than this software");
        }
        return type.read(reader, version);
    }

    /** A batch read back from the log. */
    public record MetadataBatch(List<ApiMessage> records, long lastOffset) {
    }

    /** Reads every committed batch in order. */
    public List<MetadataBatch> readAll() {
        List<MetadataBatch> batches = new ArrayList<>();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            FetchDataInfo info = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true);
            ByteBuffer bytes = ((FileRecords) info.records()).readAll();
            long next = offset;
            for (RecordBatch entry : MemoryRecords.readableRecords(bytes).batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                if (batch.lastOffset() < offset) {
                    continue;
                }
                List<ApiMessage> records = new ArrayList<>(batch.recordCount());
                for (Record record : batch.records()) {
                    records.add(decode(record.value()));
                }
                batches.add(new MetadataBatch(records, batch.lastOffset()));
                next = batch.lastOffset() + 1;
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
        return batches;
    }

    @Override
    public void close() throws IOException {
        log.close();
    }
}
