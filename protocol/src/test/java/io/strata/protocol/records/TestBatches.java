package io.strata.protocol.records;

import io.strata.protocol.ByteUtils;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.zip.CRC32C;

/** Builders of valid and deliberately malformed batches for tests. */
final class TestBatches {
    private TestBatches() {
    }

    /** A valid batch of {@code count} small records with a header each. */
    static ByteBuffer valid(CompressionType compression, int count) {
        RecordBatchBuilder builder = new RecordBatchBuilder(compression, TimestampType.CREATE_TIME, 100L)
            .producerState(9L, (short) 1, 0, false);
        for (int i = 0; i < count; i++) {
            builder.append(1_700_000_000_000L + i, ("key-" + i).getBytes(), ("value-" + i).repeat(5).getBytes(),
                List.of(Header.of("h" + i, new byte[] {(byte) i})));
        }
        return builder.build().buffer();
    }

    /**
     * A batch whose header is well formed (magic 2, matching batchLength, valid CRC) around an
     * arbitrary records section: whatever the parser then finds is in the records themselves.
     */
    static ByteBuffer withRecordsSection(int attributes, int recordCount, ByteBuffer recordsSection) {
        ByteBuffer batch = ByteBuffer.allocate(RecordBatchDescriptor.RECORD_BATCH_OVERHEAD + recordsSection.remaining());
        batch.putLong(0L)
            .putInt(batch.capacity() - RecordBatchDescriptor.LOG_OVERHEAD)
            .putInt(0)
            .put(RecordBatchDescriptor.MAGIC_V2)
            .putInt(0)
            .putShort((short) attributes)
            .putInt(Math.max(0, recordCount - 1))
            .putLong(1_700_000_000_000L)
            .putLong(1_700_000_000_000L)
            .putLong(-1L)
            .putShort((short) -1)
            .putInt(-1)
            .putInt(recordCount)
            .put(recordsSection.duplicate());
        return resign(batch.flip());
    }

    /** Recomputes the CRC, so a test can corrupt covered bytes and still reach the record parser. */
    static ByteBuffer resign(ByteBuffer batch) {
        CRC32C crc = new CRC32C();
        crc.update(batch.duplicate().position(RecordBatchDescriptor.ATTRIBUTES_OFFSET));
        batch.putInt(RecordBatchDescriptor.CRC_OFFSET, (int) crc.getValue());
        return batch;
    }

    static ByteBuffer copy(ByteBuffer source) {
        ByteBuffer copy = ByteBuffer.allocate(source.remaining());
        copy.put(source.duplicate());
        return copy.flip();
    }

    /** The records section of one record with the given raw fields, for building malformed records. */
    static ByteBuffer rawRecord(int declaredBodyBytes, int keyLength, byte[] keyBytes, int valueLength, byte[] valueBytes,
                                int headerCount) {
        ByteBuffer buffer = ByteBuffer.allocate(64 + keyBytes.length + valueBytes.length);
        ByteUtils.writeVarint(declaredBodyBytes, buffer);
        buffer.put((byte) 0);
        ByteUtils.writeVarlong(0L, buffer);
        ByteUtils.writeVarint(0, buffer);
        ByteUtils.writeVarint(keyLength, buffer);
        buffer.put(keyBytes);
        ByteUtils.writeVarint(valueLength, buffer);
        buffer.put(valueBytes);
        ByteUtils.writeVarint(headerCount, buffer);
        return buffer.flip();
    }

    /** Body bytes of {@link #rawRecord} when its declared length is honest. */
    static int honestBodyBytes(ByteBuffer rawRecordWithPlaceholderLength) {
        ByteBuffer copy = rawRecordWithPlaceholderLength.duplicate();
        ByteUtils.readVarint(copy);
        return copy.remaining();
    }
}
