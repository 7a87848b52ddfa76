package io.strata.protocol.records;

import io.strata.protocol.ByteUtils;
import io.strata.protocol.Sizes;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import static io.strata.protocol.records.RecordBatchDescriptor.ATTRIBUTES_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.CONTROL_FLAG_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.CRC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.DELETE_HORIZON_FLAG_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.LOG_OVERHEAD;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V2;
import static io.strata.protocol.records.RecordBatchDescriptor.NO_PARTITION_LEADER_EPOCH;
import static io.strata.protocol.records.RecordBatchDescriptor.NO_PRODUCER_EPOCH;
import static io.strata.protocol.records.RecordBatchDescriptor.NO_PRODUCER_ID;
import static io.strata.protocol.records.RecordBatchDescriptor.NO_SEQUENCE;
import static io.strata.protocol.records.RecordBatchDescriptor.NO_TIMESTAMP;
import static io.strata.protocol.records.RecordBatchDescriptor.RECORD_BATCH_OVERHEAD;
import static io.strata.protocol.records.RecordBatchDescriptor.TIMESTAMP_TYPE_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.TRANSACTIONAL_FLAG_MASK;

/**
 * Writes one magic-2 record batch (layout in {@link RecordBatchDescriptor}).
 *
 * <p>Use: construct with compression, timestamp type and base offset; set optional header
 * fields (producer state, leader epoch, control flag, ...); append records; {@link #build()}.
 * Header setters are refused once a record is appended, and the builder is single-use.
 *
 * <p>Records are encoded uncompressed into a growing buffer as they arrive; {@code build()}
 * compresses that section as a whole, writes the header and the CRC32C, and reads the batch
 * back to check the header before returning it.
 *
 * <p>Rules (Kafka's): offsets strictly increase and are at least the base offset, with
 * {@code offset - baseOffset} fitting an int; timestamps are non-negative or -1; baseTimestamp
 * is the first record's timestamp (or the delete horizon if set); maxTimestamp is the largest
 * record timestamp, or the log-append time for LogAppendTime batches; transactional batches
 * need a producer id; control batches hold only control records. Violations are programming
 * errors: {@link IllegalArgumentException} or {@link IllegalStateException}.
 *
 * <p>Not thread-safe.
 */
public final class RecordBatchBuilder {
    private static final int INITIAL_RECORDS_CAPACITY_BYTES = 1024;

    private final CompressionType compressionType;
    private final TimestampType timestampType;
    private final long baseOffset;

    private long producerId = NO_PRODUCER_ID;
    private short producerEpoch = NO_PRODUCER_EPOCH;
    private int baseSequence = NO_SEQUENCE;
    private boolean transactional;
    private boolean controlBatch;
    private int partitionLeaderEpoch = NO_PARTITION_LEADER_EPOCH;
    private long logAppendTimeMs = NO_TIMESTAMP;
    private boolean hasDeleteHorizon;
    private long deleteHorizonMs = NO_TIMESTAMP;

    private ByteBuffer records = ByteBuffer.allocate(INITIAL_RECORDS_CAPACITY_BYTES);
    private int recordCount;
    private long lastOffset;
    private long baseTimestampMs;
    private long maxTimestampMs = NO_TIMESTAMP;
    private boolean built;

    public RecordBatchBuilder(CompressionType compressionType, TimestampType timestampType, long baseOffset) {
        if (timestampType != TimestampType.CREATE_TIME && timestampType != TimestampType.LOG_APPEND_TIME) {
            throw new IllegalArgumentException("magic-2 batches need CreateTime or LogAppendTime: timestampType=" + timestampType);
        }
        if (baseOffset < 0) {
            throw new IllegalArgumentException("base offset must not be negative: baseOffset=" + baseOffset);
        }
        this.compressionType = compressionType;
        this.timestampType = timestampType;
        this.baseOffset = baseOffset;
    }

    /** An end-transaction marker batch as the transaction coordinator's WriteTxnMarkers writes it. */
    public static MemoryRecords endTransactionMarker(long baseOffset, long timestampMs, int partitionLeaderEpoch,
                                                     long producerId, short producerEpoch, EndTransactionMarker marker) {
        return new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, baseOffset)
            .producerState(producerId, producerEpoch, NO_SEQUENCE, true)
            .controlBatch(true)
            .partitionLeaderEpoch(partitionLeaderEpoch)
            .appendEndTransactionMarker(timestampMs, marker)
            .build();
    }

    public RecordBatchBuilder producerState(long producerId, short producerEpoch, int baseSequence, boolean transactional) {
        checkNoRecordsYet("producer state");
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.baseSequence = baseSequence;
        this.transactional = transactional;
        return this;
    }

    public RecordBatchBuilder controlBatch(boolean controlBatch) {
        checkNoRecordsYet("control flag");
        this.controlBatch = controlBatch;
        return this;
    }

    public RecordBatchBuilder partitionLeaderEpoch(int partitionLeaderEpoch) {
        checkNoRecordsYet("partition leader epoch");
        this.partitionLeaderEpoch = partitionLeaderEpoch;
        return this;
    }

    /** Required for LogAppendTime batches: becomes maxTimestamp, which every record then reports. */
    public RecordBatchBuilder logAppendTimeMs(long logAppendTimeMs) {
        checkNoRecordsYet("log append time");
        this.logAppendTimeMs = logAppendTimeMs;
        return this;
    }

    /** Sets attribute bit 6 and stores {@code deleteHorizonMs} as baseTimestamp (compaction, KIP-534). */
    public RecordBatchBuilder deleteHorizonMs(long deleteHorizonMs) {
        checkNoRecordsYet("delete horizon");
        this.hasDeleteHorizon = true;
        this.deleteHorizonMs = deleteHorizonMs;
        return this;
    }

    public RecordBatchBuilder append(long timestampMs, byte[] key, byte[] value) {
        return append(timestampMs, wrap(key), wrap(value), List.of());
    }

    public RecordBatchBuilder append(long timestampMs, byte[] key, byte[] value, List<Header> headers) {
        return append(timestampMs, wrap(key), wrap(value), headers);
    }

    /** Appends at the next offset: the base offset first, then the last offset + 1. */
    public RecordBatchBuilder append(long timestampMs, ByteBuffer key, ByteBuffer value, List<Header> headers) {
        return appendWithOffset(nextOffset(), timestampMs, key, value, headers);
    }

    /** Appends at {@code offset}, which must be above the last one (gaps are allowed, as after compaction). */
    public RecordBatchBuilder appendWithOffset(long offset, long timestampMs, ByteBuffer key, ByteBuffer value, List<Header> headers) {
        if (controlBatch) {
            throw new IllegalStateException("a control batch takes only control records: offset=" + offset);
        }
        appendRecord(offset, timestampMs, key, value, headers);
        return this;
    }

    public RecordBatchBuilder appendEndTransactionMarker(long timestampMs, EndTransactionMarker marker) {
        if (!transactional || producerId == NO_PRODUCER_ID) {
            throw new IllegalStateException("end transaction markers need a transactional batch with a producer id: producerId="
                + producerId + ", transactional=" + transactional);
        }
        return appendControlRecord(timestampMs, marker.type(), marker.serializeValue());
    }

    public RecordBatchBuilder appendControlRecord(long timestampMs, ControlRecordType type, ByteBuffer value) {
        if (!controlBatch) {
            throw new IllegalStateException("control records need a control batch: type=" + type);
        }
        appendRecord(nextOffset(), timestampMs, type.serializeKey(), value, List.of());
        return this;
    }

    public int recordCount() {
        return recordCount;
    }

    /**
     * Writes the batch. With no records appended this returns {@link MemoryRecords#EMPTY}, as
     * Kafka's builder does.
     */
    public MemoryRecords build() {
        if (built) {
            throw new IllegalStateException("builder already built: baseOffset=" + baseOffset);
        }
        built = true;
        if (recordCount == 0) {
            return MemoryRecords.EMPTY;
        }
        if (timestampType == TimestampType.LOG_APPEND_TIME && logAppendTimeMs == NO_TIMESTAMP) {
            throw new IllegalStateException("LogAppendTime batches need logAppendTimeMs");
        }
        ByteBuffer payload = compressionType.codec().compress(records.flip());
        ByteBuffer batch = ByteBuffer.allocate(Math.addExact(RECORD_BATCH_OVERHEAD, payload.remaining()));
        writeHeader(batch);
        batch.put(payload);
        batch.flip();
        writeCrc(batch);
        verifyWritten(batch);
        return MemoryRecords.readableRecords(batch);
    }

    private void writeHeader(ByteBuffer batch) {
        long maxTimestamp = timestampType == TimestampType.LOG_APPEND_TIME ? logAppendTimeMs : maxTimestampMs;
        batch.putLong(baseOffset)
            .putInt(batch.capacity() - LOG_OVERHEAD)
            .putInt(partitionLeaderEpoch)
            .put(MAGIC_V2)
            .putInt(0) // CRC, written once the rest is in place
            .putShort(attributes())
            .putInt((int) (lastOffset - baseOffset))
            .putLong(baseTimestampMs)
            .putLong(maxTimestamp)
            .putLong(producerId)
            .putShort(producerEpoch)
            .putInt(baseSequence)
            .putInt(recordCount);
        assert batch.position() == RECORD_BATCH_OVERHEAD : "header size: position=" + batch.position();
    }

    private short attributes() {
        int attributes = compressionType.id();
        if (timestampType == TimestampType.LOG_APPEND_TIME) {
            attributes |= TIMESTAMP_TYPE_MASK;
        }
        if (transactional) {
            attributes |= TRANSACTIONAL_FLAG_MASK;
        }
        if (controlBatch) {
            attributes |= CONTROL_FLAG_MASK;
        }
        if (hasDeleteHorizon) {
            attributes |= DELETE_HORIZON_FLAG_MASK;
        }
        return (short) attributes;
    }

    private static void writeCrc(ByteBuffer batch) {
        CRC32C crc = new CRC32C();
        crc.update(batch.duplicate().position(ATTRIBUTES_OFFSET));
        batch.putInt(CRC_OFFSET, (int) crc.getValue());
    }

    /** Reads the written header back; a mismatch is a bug in this class. */
    private void verifyWritten(ByteBuffer batch) {
        DefaultRecordBatch written = DefaultRecordBatch.wrap(batch);
        if (!written.isValid() || written.recordCount() != recordCount || written.lastOffset() != lastOffset
            || written.compressionType() != compressionType) {
            throw new IllegalStateException("written batch does not read back: " + written);
        }
    }

    private void appendRecord(long offset, long timestampMs, ByteBuffer key, ByteBuffer value, List<Header> headers) {
        checkAppend(offset, timestampMs);
        if (recordCount == 0) {
            baseTimestampMs = hasDeleteHorizon ? deleteHorizonMs : timestampMs;
        }
        List<byte[]> headerKeys = encodeHeaderKeys(headers);
        int offsetDelta = (int) (offset - baseOffset);
        long timestampDelta = timestampMs - baseTimestampMs;
        int bodyBytes = bodySize(offsetDelta, timestampDelta, key, value, headers, headerKeys);
        ensureRecordsCapacity(Sizes.varintSize(bodyBytes) + bodyBytes);
        int start = records.position();
        ByteUtils.writeVarint(bodyBytes, records);
        records.put((byte) 0); // record attributes: unused
        ByteUtils.writeVarlong(timestampDelta, records);
        ByteUtils.writeVarint(offsetDelta, records);
        writeNullableBytes(key);
        writeNullableBytes(value);
        ByteUtils.writeVarint(headers.size(), records);
        for (int i = 0; i < headers.size(); i++) {
            byte[] headerKey = headerKeys.get(i);
            ByteUtils.writeVarint(headerKey.length, records);
            records.put(headerKey);
            writeNullableBytes(headers.get(i).value());
        }
        assert records.position() - start == Sizes.varintSize(bodyBytes) + bodyBytes : "record size: start=" + start;
        recordCount++;
        lastOffset = offset;
        maxTimestampMs = Math.max(maxTimestampMs, timestampMs);
    }

    private void checkAppend(long offset, long timestampMs) {
        if (built) {
            throw new IllegalStateException("builder already built: baseOffset=" + baseOffset);
        }
        if (transactional && producerId == NO_PRODUCER_ID) {
            throw new IllegalStateException("a transactional batch needs a producer id");
        }
        if (offset < baseOffset || (recordCount > 0 && offset <= lastOffset) || offset - baseOffset > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("offsets must increase from the base offset within an int delta: offset=" + offset
                + ", lastOffset=" + (recordCount > 0 ? lastOffset : "none") + ", baseOffset=" + baseOffset);
        }
        if (timestampMs < 0 && timestampMs != NO_TIMESTAMP) {
            throw new IllegalArgumentException("timestamp must be non-negative or -1: timestampMs=" + timestampMs);
        }
    }

    private static List<byte[]> encodeHeaderKeys(List<Header> headers) {
        List<byte[]> keys = new ArrayList<>(headers.size());
        for (Header header : headers) {
            keys.add(header.key().getBytes(StandardCharsets.UTF_8));
        }
        return keys;
    }

    private static int bodySize(int offsetDelta, long timestampDelta, ByteBuffer key, ByteBuffer value,
                                List<Header> headers, List<byte[]> headerKeys) {
        long size = 1L + Sizes.varlongSize(timestampDelta) + Sizes.varintSize(offsetDelta)
            + nullableBytesSize(key) + nullableBytesSize(value) + Sizes.varintSize(headers.size());
        for (int i = 0; i < headers.size(); i++) {
            int keyLength = headerKeys.get(i).length;
            size += Sizes.varintSize(keyLength) + keyLength + nullableBytesSize(headers.get(i).value());
        }
        return Math.toIntExact(size);
    }

    private static int nullableBytesSize(ByteBuffer bytes) {
        return bytes == null ? Sizes.varintSize(-1) : Sizes.varintSize(bytes.remaining()) + bytes.remaining();
    }

    private void writeNullableBytes(ByteBuffer bytes) {
        if (bytes == null) {
            ByteUtils.writeVarint(-1, records);
        } else {
            ByteUtils.writeVarint(bytes.remaining(), records);
            records.put(bytes.duplicate());
        }
    }

    private void ensureRecordsCapacity(int additionalBytes) {
        if (records.remaining() >= additionalBytes) {
            return;
        }
        int requiredBytes = Math.addExact(records.position(), additionalBytes);
        int newCapacity = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(requiredBytes, 2L * records.capacity()));
        ByteBuffer grown = ByteBuffer.allocate(newCapacity);
        grown.put(records.flip());
        records = grown;
    }

    private long nextOffset() {
        return recordCount == 0 ? baseOffset : lastOffset + 1;
    }

    private void checkNoRecordsYet(String field) {
        if (recordCount > 0 || built) {
            throw new IllegalStateException("cannot change the " + field + " after records were appended");
        }
    }

    private static ByteBuffer wrap(byte[] bytes) {
        return bytes == null ? null : ByteBuffer.wrap(bytes);
    }
}
