package io.strata.protocol.records;

import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Magic-0/1 message sets are recognised and validated (never built or converted): the entries
 * here are checked against kafka-clients' own legacy reader first, so the format under test is
 * Kafka's.
 */
class LegacyRecordBatchTest {
    @Test
    void magicZeroAndOneEntriesAreRecognisedWithTheirFields() {
        ByteBuffer v0 = legacyEntry((byte) 0, 5L, (byte) 0, -1L, bytes("k0"), bytes("v0"));
        ByteBuffer v1 = legacyEntry((byte) 1, 6L, (byte) 0x08, 1_600_000_000_000L, null, bytes("v1"));
        ByteBuffer set = concat(v0, v1);
        assertKafkaAcceptsLegacy(set);

        List<RecordBatch> batches = batches(set);
        assertThat(batches).hasSize(2).allSatisfy(batch -> assertThat(batch).isInstanceOf(LegacyRecordBatch.class));
        LegacyRecordBatch first = (LegacyRecordBatch) batches.get(0);
        LegacyRecordBatch second = (LegacyRecordBatch) batches.get(1);
        assertThat(first.magic()).isEqualTo((byte) 0);
        assertThat(first.offset()).isEqualTo(5L);
        assertThat(first.isValid()).isTrue();
        assertThat(first.timestampType()).isEqualTo(TimestampType.NO_TIMESTAMP_TYPE);
        assertThat(first.timestamp()).isEqualTo(-1L);
        assertThat(first.key()).isEqualTo(ByteBuffer.wrap(bytes("k0")));
        assertThat(first.value()).isEqualTo(ByteBuffer.wrap(bytes("v0")));
        assertThat(second.magic()).isEqualTo((byte) 1);
        assertThat(second.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThat(second.timestamp()).isEqualTo(1_600_000_000_000L);
        assertThat(second.key()).isNull();
        assertThat(second.value()).isEqualTo(ByteBuffer.wrap(bytes("v1")));
        assertThat(second.compressionType()).isEqualTo(CompressionType.NONE);
        assertThat(MemoryRecords.readableRecords(set).validBytes()).isEqualTo(set.remaining());
    }

    @Test
    void aCompressedLegacyWrapperIsRecognisedWithoutDecompressing() throws IOException {
        ByteBuffer inner = concat(legacyEntry((byte) 1, 0L, (byte) 0, 10L, null, bytes("a")),
            legacyEntry((byte) 1, 1L, (byte) 0, 11L, null, bytes("b")));
        ByteArrayOutputStream compressed = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(compressed)) {
            gzip.write(KafkaRecordsComparison.bytes(inner));
        }
        ByteBuffer wrapper = legacyEntry((byte) 1, 1L, (byte) CompressionType.GZIP.id(), 11L, null, compressed.toByteArray());
        assertKafkaAcceptsLegacy(wrapper);

        LegacyRecordBatch batch = (LegacyRecordBatch) batches(wrapper).get(0);
        assertThat(batch.compressionType()).isEqualTo(CompressionType.GZIP);
        assertThat(batch.lastOffset()).isEqualTo(1L);
        assertThat(batch.value().remaining()).isEqualTo(compressed.size());
        batch.ensureValid();
    }

    @Test
    void aLegacyEntryAmongMagicTwoBatchesIsReportedByMagic() {
        ByteBuffer set = concat(TestBatches.valid(CompressionType.NONE, 2), legacyEntry((byte) 1, 2L, (byte) 0, 1L, bytes("k"), bytes("v")));
        List<Byte> magics = new ArrayList<>();
        batches(set).forEach(batch -> magics.add(batch.magic()));
        assertThat(magics).containsExactly((byte) 2, (byte) 1);
        assertThat(RecordBatch.peekMagic(set)).isEqualTo((byte) 2);
    }

    @Test
    void aBadLegacyCrcIsDetected() {
        ByteBuffer entry = legacyEntry((byte) 1, 0L, (byte) 0, 1L, bytes("k"), bytes("value"));
        entry.put(entry.limit() - 1, (byte) 'X');
        LegacyRecordBatch batch = (LegacyRecordBatch) batches(entry).get(0);
        assertThat(batch.isValid()).isFalse();
        assertThatThrownBy(batch::ensureValid).isInstanceOf(CorruptRecordException.class).hasMessageContaining("CRC");
    }

    @Test
    void legacyKeyAndValueLengthsMustFillTheEntryExactly() {
        ByteBuffer valid = legacyEntry((byte) 0, 0L, (byte) 0, -1L, bytes("key"), bytes("value"));
        int keyLengthOffset = RecordBatchDescriptor.LEGACY_KEY_LENGTH_OFFSET_V0;
        int valueLengthOffset = keyLengthOffset + 4 + 3;
        int[][] cases = {{keyLengthOffset, -2}, {keyLengthOffset, 1_000}, {keyLengthOffset, Integer.MAX_VALUE},
            {valueLengthOffset, 4}, {valueLengthOffset, 6}, {valueLengthOffset, -1}, {valueLengthOffset, Integer.MIN_VALUE}};
        for (int[] c : cases) {
            ByteBuffer bad = TestBatches.copy(valid);
            bad.putInt(c[0], c[1]);
            assertThatThrownBy(() -> batches(bad)).as("field at %d = %d", c[0], c[1]).isInstanceOf(CorruptRecordException.class);
        }
    }

    @Test
    void legacySizesBelowTheMagicsOverheadAreCorrupt() {
        ByteBuffer v1 = legacyEntry((byte) 1, 0L, (byte) 0, 1L, null, null);
        assertThat(v1.remaining()).isEqualTo(RecordBatchDescriptor.LOG_OVERHEAD + RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V1);
        ByteBuffer claimsV1ButSizedForV0 = TestBatches.copy(v1).limit(RecordBatchDescriptor.LOG_OVERHEAD + RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V0);
        claimsV1ButSizedForV0.putInt(RecordBatchDescriptor.LENGTH_OFFSET, RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V0);
        assertThatThrownBy(() -> batches(claimsV1ButSizedForV0)).isInstanceOf(CorruptRecordException.class)
            .hasMessageContaining("minimum=" + RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V1);
    }

    /** Kafka's own reader validates our hand-made legacy bytes, so the test format is Kafka's. */
    private static void assertKafkaAcceptsLegacy(ByteBuffer set) {
        int count = 0;
        for (MutableRecordBatch batch : org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(set.duplicate()).batches()) {
            assertThat(batch.magic()).isLessThan((byte) 2);
            batch.ensureValid();
            count++;
        }
        assertThat(count).isPositive();
    }

    /** One legacy entry: offset, size, CRC32 over magic..end, magic, attributes, [timestamp], key, value. */
    static ByteBuffer legacyEntry(byte magic, long offset, byte attributes, long timestampMs, byte[] key, byte[] value) {
        int overhead = magic == 0 ? RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V0 : RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V1;
        int messageSize = overhead + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        ByteBuffer entry = ByteBuffer.allocate(RecordBatchDescriptor.LOG_OVERHEAD + messageSize);
        entry.putLong(offset).putInt(messageSize).putInt(0).put(magic).put(attributes);
        if (magic == 1) {
            entry.putLong(timestampMs);
        }
        putNullableBytes(entry, key);
        putNullableBytes(entry, value);
        entry.flip();
        CRC32 crc = new CRC32();
        crc.update(entry.duplicate().position(RecordBatchDescriptor.MAGIC_OFFSET));
        entry.putInt(RecordBatchDescriptor.LEGACY_CRC_OFFSET, (int) crc.getValue());
        return entry;
    }

    private static void putNullableBytes(ByteBuffer buffer, byte[] bytes) {
        if (bytes == null) {
            buffer.putInt(-1);
        } else {
            buffer.putInt(bytes.length).put(bytes);
        }
    }

    private static List<RecordBatch> batches(ByteBuffer set) {
        List<RecordBatch> batches = new ArrayList<>();
        MemoryRecords.readableRecords(set).batches().forEach(batches::add);
        return batches;
    }

    private static ByteBuffer concat(ByteBuffer a, ByteBuffer b) {
        return ByteBuffer.allocate(a.remaining() + b.remaining()).put(a.duplicate()).put(b.duplicate()).flip();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
