package io.strata.protocol.records;

import io.strata.protocol.records.compression.CompressionCodec;
import io.strata.protocol.records.compression.DecompressionBuffers;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.OptionalLong;
import java.util.zip.CRC32C;

import static io.strata.protocol.records.RecordBatchDescriptor.ATTRIBUTES_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.BASE_OFFSET_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.BASE_SEQUENCE_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.BASE_TIMESTAMP_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.COMPRESSION_CODEC_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.CONTROL_FLAG_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.CRC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.DELETE_HORIZON_FLAG_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.LAST_OFFSET_DELTA_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LOG_OVERHEAD;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V2;
import static io.strata.protocol.records.RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.NO_SEQUENCE;
import static io.strata.protocol.records.RecordBatchDescriptor.PARTITION_LEADER_EPOCH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.PRODUCER_ID_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.RECORDS_COUNT_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.RECORDS_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.RECORD_BATCH_OVERHEAD;
import static io.strata.protocol.records.RecordBatchDescriptor.TIMESTAMP_TYPE_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.TRANSACTIONAL_FLAG_MASK;

/**
 * A zero-copy view of one magic-2 record batch (layout in {@link RecordBatchDescriptor}).
 *
 * <p>Invariants established by {@link #wrap(ByteBuffer)}: the view is exactly one batch,
 * {@code sizeInBytes >= 61}, magic is 2 and {@code 12 + batchLength == sizeInBytes}. Nothing
 * else is trusted: the CRC is checked only by {@link #isValid()}/{@link #ensureValid()}, and
 * every count and length inside the records section is checked against the bytes that remain
 * when {@link #records(int)} reads it.
 *
 * <p>The setters rewrite header fields in place in the shared buffer, as the broker does when
 * it assigns offsets and leader epochs on append. baseOffset and partitionLeaderEpoch are
 * outside the CRC; {@link #setMaxTimestamp} changes covered bytes and recomputes the CRC, so a
 * batch that was valid stays valid.
 *
 * <p>Thread-safety: reads use absolute indexes and may run concurrently with each other;
 * setters must be confined to the buffer's owner (no concurrent readers).
 */
public final class DefaultRecordBatch implements RecordBatch {
    private final ByteBuffer buffer;

    private DefaultRecordBatch(ByteBuffer buffer) {
        this.buffer = buffer;
    }

    /**
     * Views the remaining bytes of {@code batch}, which must be exactly one magic-2 batch. The
     * bytes are shared, not copied.
     *
     * @throws CorruptRecordException if the bytes are shorter than the header, the magic is not
     *                                2, or batchLength disagrees with the number of bytes
     */
    public static DefaultRecordBatch wrap(ByteBuffer batch) {
        ByteBuffer view = batch.slice();
        int sizeInBytes = view.remaining();
        if (sizeInBytes < RECORD_BATCH_OVERHEAD) {
            throw new CorruptRecordException("record batch is smaller than its header: sizeInBytes=" + sizeInBytes
                + ", minimum=" + RECORD_BATCH_OVERHEAD);
        }
        byte magic = view.get(MAGIC_OFFSET);
        if (magic != MAGIC_V2) {
            throw new CorruptRecordException("not a magic-2 record batch: magic=" + magic);
        }
        int batchLength = view.getInt(LENGTH_OFFSET);
        if ((long) batchLength + LOG_OVERHEAD != sizeInBytes) {
            throw new CorruptRecordException("batchLength does not match the batch bytes: batchLength=" + batchLength
                + ", sizeInBytes=" + sizeInBytes);
        }
        return new DefaultRecordBatch(view);
    }

    @Override
    public byte magic() {
        return MAGIC_V2;
    }

    public long baseOffset() {
        return buffer.getLong(BASE_OFFSET_OFFSET);
    }

    public int lastOffsetDelta() {
        return buffer.getInt(LAST_OFFSET_DELTA_OFFSET);
    }

    @Override
    public long lastOffset() {
        return baseOffset() + lastOffsetDelta();
    }

    public long nextOffset() {
        return lastOffset() + 1;
    }

    public int batchLength() {
        return buffer.getInt(LENGTH_OFFSET);
    }

    @Override
    public int sizeInBytes() {
        return buffer.limit();
    }

    public int partitionLeaderEpoch() {
        return buffer.getInt(PARTITION_LEADER_EPOCH_OFFSET);
    }

    /** The stored CRC32C as an unsigned value. */
    public long checksum() {
        return Integer.toUnsignedLong(buffer.getInt(CRC_OFFSET));
    }

    /** CRC32C over attributes through the end of the batch. */
    public long computeChecksum() {
        CRC32C crc = new CRC32C();
        crc.update(buffer.duplicate().position(ATTRIBUTES_OFFSET));
        return crc.getValue();
    }

    @Override
    public boolean isValid() {
        return checksum() == computeChecksum();
    }

    @Override
    public void ensureValid() {
        long stored = checksum();
        long computed = computeChecksum();
        if (stored != computed) {
            throw new CorruptRecordException("record batch CRC mismatch: storedCrc=" + stored + ", computedCrc=" + computed
                + ", baseOffset=" + baseOffset() + ", sizeInBytes=" + sizeInBytes());
        }
    }

    public short attributes() {
        return buffer.getShort(ATTRIBUTES_OFFSET);
    }

    /** @throws CorruptRecordException if attribute bits 0-2 hold 5, 6 or 7 */
    @Override
    public CompressionType compressionType() {
        return CompressionType.forId(attributes() & COMPRESSION_CODEC_MASK);
    }

    public TimestampType timestampType() {
        return (attributes() & TIMESTAMP_TYPE_MASK) == 0 ? TimestampType.CREATE_TIME : TimestampType.LOG_APPEND_TIME;
    }

    public boolean isTransactional() {
        return (attributes() & TRANSACTIONAL_FLAG_MASK) != 0;
    }

    public boolean isControlBatch() {
        return (attributes() & CONTROL_FLAG_MASK) != 0;
    }

    public boolean hasDeleteHorizon() {
        return (attributes() & DELETE_HORIZON_FLAG_MASK) != 0;
    }

    /** The compaction delete horizon, stored in baseTimestamp when attribute bit 6 is set. */
    public OptionalLong deleteHorizonMs() {
        return hasDeleteHorizon() ? OptionalLong.of(baseTimestamp()) : OptionalLong.empty();
    }

    public long baseTimestamp() {
        return buffer.getLong(BASE_TIMESTAMP_OFFSET);
    }

    public long maxTimestamp() {
        return buffer.getLong(MAX_TIMESTAMP_OFFSET);
    }

    public long producerId() {
        return buffer.getLong(PRODUCER_ID_OFFSET);
    }

    public boolean hasProducerId() {
        return producerId() != RecordBatchDescriptor.NO_PRODUCER_ID;
    }

    public short producerEpoch() {
        return buffer.getShort(PRODUCER_EPOCH_OFFSET);
    }

    public int baseSequence() {
        return buffer.getInt(BASE_SEQUENCE_OFFSET);
    }

    /** The sequence of the last record, wrapping like Kafka's; -1 without a producer sequence. */
    public int lastSequence() {
        return incrementSequence(baseSequence(), lastOffsetDelta());
    }

    /** The record count the header declares; {@link #records(int)} checks it against the records. */
    public int recordCount() {
        return buffer.getInt(RECORDS_COUNT_OFFSET);
    }

    /** The bytes of the records section as stored (compressed if the batch is). */
    public int recordsSizeInBytes() {
        return sizeInBytes() - RECORDS_OFFSET;
    }

    @Override
    public ByteBuffer buffer() {
        return buffer.asReadOnlyBuffer();
    }

    /** Reads all records, decompressing with {@link RecordLimits#DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES}. */
    public List<Record> records() {
        return records(RecordLimits.DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES);
    }

    /**
     * Decompresses (if needed) and parses every record. The declared record count must match
     * the records exactly, with no bytes left over. The CRC is not checked here; call
     * {@link #ensureValid()} first for untrusted input.
     *
     * @param maxDecompressedBytes the most bytes decompression may produce; uncompressed
     *                             batches are not limited by it (their size is already known)
     * @throws io.strata.protocol.ProtocolException ({@link CorruptRecordException}, or a
     *         compression exception) for any malformed content or a limit being exceeded
     */
    public List<Record> records(int maxDecompressedBytes) {
        return RecordReader.readAll(this, recordsPayload(maxDecompressedBytes, null));
    }

    /**
     * Checks, without parsing records into objects, that every record is well formed (see
     * {@link #records(int)} for what "well formed" means), decompressing first if needed. A
     * batch that passes can be read by any consumer.
     *
     * @throws io.strata.protocol.ProtocolException as {@link #records(int)} does
     */
    public void checkRecords(int maxDecompressedBytes) {
        // Read once and dropped: decompress into this thread's reusable arrays.
        RecordReader.checkAll(this, recordsPayload(maxDecompressedBytes, SCAN_BUFFERS.get()));
    }

    /** Per-thread decompression arrays for {@link #checkRecords}. */
    private static final ThreadLocal<DecompressionBuffers> SCAN_BUFFERS = ThreadLocal.withInitial(DecompressionBuffers::new);

    /**
     * The uncompressed records section, positioned at 0; decompressed into {@code reuse}'s arrays
     * (valid until their next use) when it is non-null.
     */
    private ByteBuffer recordsPayload(int maxDecompressedBytes, DecompressionBuffers reuse) {
        ByteBuffer stored = buffer.slice(RECORDS_OFFSET, recordsSizeInBytes());
        CompressionType compression = compressionType();
        if (compression == CompressionType.NONE || !stored.hasRemaining()) {
            // Compaction can leave a batch with no records; there is nothing to decompress.
            return stored;
        }
        CompressionCodec codec = compression.codec();
        return reuse == null ? codec.decompress(stored, maxDecompressedBytes) : codec.decompress(stored, maxDecompressedBytes, reuse);
    }

    /** Rewrites baseOffset (not covered by the CRC). */
    public void setBaseOffset(long baseOffset) {
        buffer.putLong(BASE_OFFSET_OFFSET, baseOffset);
    }

    /** Rewrites baseOffset so that the last record gets {@code lastOffset} (not covered by the CRC). */
    public void setLastOffset(long lastOffset) {
        setBaseOffset(lastOffset - lastOffsetDelta());
    }

    /** Rewrites partitionLeaderEpoch (not covered by the CRC). */
    public void setPartitionLeaderEpoch(int partitionLeaderEpoch) {
        buffer.putInt(PARTITION_LEADER_EPOCH_OFFSET, partitionLeaderEpoch);
    }

    /**
     * Rewrites the timestamp type bit and maxTimestamp and then the CRC, which covers both.
     * A no-op when both already hold these values, so valid batches are not rehashed.
     */
    public void setMaxTimestamp(TimestampType timestampType, long maxTimestampMs) {
        if (timestampType != TimestampType.CREATE_TIME && timestampType != TimestampType.LOG_APPEND_TIME) {
            throw new IllegalArgumentException("magic-2 batches need CreateTime or LogAppendTime: timestampType=" + timestampType);
        }
        if (timestampType() == timestampType && maxTimestamp() == maxTimestampMs) {
            return;
        }
        int attributes = attributes() & ~TIMESTAMP_TYPE_MASK;
        if (timestampType == TimestampType.LOG_APPEND_TIME) {
            attributes |= TIMESTAMP_TYPE_MASK;
        }
        buffer.putShort(ATTRIBUTES_OFFSET, (short) attributes);
        buffer.putLong(MAX_TIMESTAMP_OFFSET, maxTimestampMs);
        buffer.putInt(CRC_OFFSET, (int) computeChecksum());
    }

    /** baseSequence + increment, wrapping to 0 after Integer.MAX_VALUE as producers do. */
    static int incrementSequence(int baseSequence, int increment) {
        if (baseSequence == NO_SEQUENCE) {
            return NO_SEQUENCE;
        }
        return (int) Math.floorMod((long) baseSequence + increment, 1L << 31);
    }

    @Override
    public String toString() {
        return "DefaultRecordBatch(baseOffset=" + baseOffset() + ", lastOffset=" + lastOffset()
            + ", sizeInBytes=" + sizeInBytes() + ", recordCount=" + recordCount()
            + ", attributes=0x" + Integer.toHexString(attributes() & 0xffff)
            + ", producerId=" + producerId() + ", producerEpoch=" + producerEpoch()
            + ", baseSequence=" + baseSequence() + ", partitionLeaderEpoch=" + partitionLeaderEpoch() + ")";
    }
}
