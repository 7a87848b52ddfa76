package io.strata.protocol.records;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

import static io.strata.protocol.records.RecordBatchDescriptor.BASE_OFFSET_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_ATTRIBUTES_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_COMPRESSION_CODEC_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_CRC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_KEY_LENGTH_OFFSET_V0;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_KEY_LENGTH_OFFSET_V1;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V0;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V1;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_TIMESTAMP_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_TIMESTAMP_TYPE_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LOG_OVERHEAD;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V0;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V1;
import static io.strata.protocol.records.RecordBatchDescriptor.NO_TIMESTAMP;

/**
 * A zero-copy view of one legacy message-set entry, magic 0 or 1 (layout in
 * {@link RecordBatchDescriptor}). Strata never writes these and Kafka 4 refuses them; the view
 * exists so the broker can recognise such input and answer with Kafka's error code.
 *
 * <p>Invariants established by {@link #wrap(ByteBuffer)}: the view is exactly one entry, magic
 * is 0 or 1, the size field matches the bytes and is at least the magic's overhead, and the key
 * and value lengths (-1 or non-negative) fill the entry exactly. The CRC32 is checked only by
 * {@link #isValid()}/{@link #ensureValid()}. A compressed wrapper's value (the inner message
 * set) is not decompressed.
 *
 * <p>Immutable view; thread-safe for reading.
 */
public final class LegacyRecordBatch implements RecordBatch {
    private final ByteBuffer buffer;
    private final byte magic;
    private final int keyLengthOffset;

    private LegacyRecordBatch(ByteBuffer buffer, byte magic) {
        this.buffer = buffer;
        this.magic = magic;
        this.keyLengthOffset = magic == MAGIC_V0 ? LEGACY_KEY_LENGTH_OFFSET_V0 : LEGACY_KEY_LENGTH_OFFSET_V1;
    }

    /**
     * Views the remaining bytes of {@code entry}, which must be exactly one magic-0/1 entry.
     *
     * @throws CorruptRecordException if the entry's structure does not fit its bytes
     */
    public static LegacyRecordBatch wrap(ByteBuffer entry) {
        ByteBuffer view = entry.slice();
        byte magic = RecordBatchDescriptor.magicAt(view, 0);
        if (magic != MAGIC_V0 && magic != MAGIC_V1) {
            throw new CorruptRecordException("not a legacy message: magic=" + magic);
        }
        int overhead = magic == MAGIC_V0 ? LEGACY_RECORD_OVERHEAD_V0 : LEGACY_RECORD_OVERHEAD_V1;
        int messageSize = view.getInt(LENGTH_OFFSET);
        if (messageSize < overhead || (long) messageSize + LOG_OVERHEAD != view.remaining()) {
            throw new CorruptRecordException("legacy message size does not fit: messageSize=" + messageSize
                + ", minimum=" + overhead + ", sizeInBytes=" + view.remaining() + ", magic=" + magic);
        }
        LegacyRecordBatch batch = new LegacyRecordBatch(view, magic);
        batch.validateKeyAndValueLengths();
        return batch;
    }

    /** Key and value lengths must each be -1 or fit, and together fill the message exactly. */
    private void validateKeyAndValueLengths() {
        int keyLength = buffer.getInt(keyLengthOffset);
        int valueLengthOffset = keyLengthOffset + Integer.BYTES + Math.max(0, keyLength);
        if (keyLength < -1 || keyLength > buffer.limit() - keyLengthOffset - 2 * Integer.BYTES) {
            throw new CorruptRecordException("legacy message key length does not fit: keyLength=" + keyLength
                + ", sizeInBytes=" + sizeInBytes());
        }
        int valueLength = buffer.getInt(valueLengthOffset);
        int expectedValueLength = buffer.limit() - valueLengthOffset - Integer.BYTES;
        boolean nullValueFits = valueLength == -1 && expectedValueLength == 0;
        if (valueLength != expectedValueLength && !nullValueFits) {
            throw new CorruptRecordException("legacy message value length does not fill the message: valueLength=" + valueLength
                + ", remainingBytes=" + expectedValueLength);
        }
    }

    @Override
    public byte magic() {
        return magic;
    }

    /** The entry's offset: the record's own, or for a compressed wrapper its last inner offset. */
    public long offset() {
        return buffer.getLong(BASE_OFFSET_OFFSET);
    }

    @Override
    public long lastOffset() {
        return offset();
    }

    @Override
    public int sizeInBytes() {
        return buffer.limit();
    }

    public byte attributes() {
        return buffer.get(LEGACY_ATTRIBUTES_OFFSET);
    }

    /** @throws CorruptRecordException for compression ids 5..7 */
    @Override
    public CompressionType compressionType() {
        return CompressionType.forId(attributes() & LEGACY_COMPRESSION_CODEC_MASK);
    }

    public TimestampType timestampType() {
        if (magic == MAGIC_V0) {
            return TimestampType.NO_TIMESTAMP_TYPE;
        }
        return (attributes() & LEGACY_TIMESTAMP_TYPE_MASK) == 0 ? TimestampType.CREATE_TIME : TimestampType.LOG_APPEND_TIME;
    }

    /** The magic-1 timestamp; -1 for magic 0. */
    public long timestamp() {
        return magic == MAGIC_V0 ? NO_TIMESTAMP : buffer.getLong(LEGACY_TIMESTAMP_OFFSET);
    }

    /** The stored CRC32 as an unsigned value. */
    public long checksum() {
        return Integer.toUnsignedLong(buffer.getInt(LEGACY_CRC_OFFSET));
    }

    /** CRC32 (not CRC32C) over magic through the end of the value. */
    public long computeChecksum() {
        CRC32 crc = new CRC32();
        crc.update(buffer.duplicate().position(MAGIC_OFFSET));
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
            throw new CorruptRecordException("legacy message CRC mismatch: storedCrc=" + stored + ", computedCrc=" + computed
                + ", offset=" + offset() + ", magic=" + magic);
        }
    }

    /** The key, or null; read-only. */
    public ByteBuffer key() {
        int keyLength = buffer.getInt(keyLengthOffset);
        return keyLength < 0 ? null : buffer.slice(keyLengthOffset + Integer.BYTES, keyLength).asReadOnlyBuffer();
    }

    /** The value (for a compressed wrapper, the compressed inner messages), or null; read-only. */
    public ByteBuffer value() {
        int keyLength = buffer.getInt(keyLengthOffset);
        int valueLengthOffset = keyLengthOffset + Integer.BYTES + Math.max(0, keyLength);
        int valueLength = buffer.getInt(valueLengthOffset);
        return valueLength < 0 ? null : buffer.slice(valueLengthOffset + Integer.BYTES, valueLength).asReadOnlyBuffer();
    }

    @Override
    public ByteBuffer buffer() {
        return buffer.asReadOnlyBuffer();
    }

    @Override
    public String toString() {
        return "LegacyRecordBatch(magic=" + magic + ", offset=" + offset() + ", sizeInBytes=" + sizeInBytes()
            + ", attributes=0x" + Integer.toHexString(attributes() & 0xff) + ")";
    }
}
