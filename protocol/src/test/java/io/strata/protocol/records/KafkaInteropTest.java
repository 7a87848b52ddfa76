package io.strata.protocol.records;

import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static io.strata.protocol.records.KafkaRecordsComparison.assertSameBatches;
import static io.strata.protocol.records.KafkaRecordsComparison.bytes;
import static io.strata.protocol.records.KafkaRecordsComparison.kafkaCompression;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Byte-level compatibility with kafka-clients 4.4 in both directions: batches Kafka writes
 * (every compression type; headers, null keys and values, idempotent, transactional,
 * LogAppendTime, delete horizon, control markers) read identically in Strata, and batches
 * Strata writes pass Kafka's validation and read back identically.
 */
class KafkaInteropTest {
    private static final byte KAFKA_MAGIC_V2 = org.apache.kafka.common.record.internal.RecordBatch.MAGIC_VALUE_V2;
    private static final long PRODUCER_ID = 4_000_000_123L;
    private static final short PRODUCER_EPOCH = 7;

    // ---- Kafka writes, Strata reads ----

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void kafkaBatchWithHeadersAndNullsReadsTheSameInStrata(CompressionType type) {
        MemoryRecordsBuilder builder = org.apache.kafka.common.record.internal.MemoryRecords.builder(
            ByteBuffer.allocate(64), KAFKA_MAGIC_V2, kafkaCompression(type), org.apache.kafka.common.record.TimestampType.CREATE_TIME,
            1_000L, org.apache.kafka.common.record.internal.RecordBatch.NO_TIMESTAMP, PRODUCER_ID, PRODUCER_EPOCH, 40, false, 12);
        kafkaSampleRecords().forEach(builder::append);
        assertSameBatches(builder.build().buffer());
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void kafkaTransactionalBatchWithSequenceWrapReadsTheSameInStrata(CompressionType type) {
        org.apache.kafka.common.record.internal.MemoryRecords kafka =
            org.apache.kafka.common.record.internal.MemoryRecords.withTransactionalRecords(KAFKA_MAGIC_V2, 77L, kafkaCompression(type),
                PRODUCER_ID, PRODUCER_EPOCH, Integer.MAX_VALUE - 1, 3, kafkaSampleRecords().toArray(new SimpleRecord[0]));
        assertSameBatches(kafka.buffer());
        DefaultRecordBatch batch = onlyBatch(MemoryRecords.readableRecords(kafka.buffer()));
        assertThat(batch.isTransactional()).isTrue();
        assertThat(batch.records().get(2).sequence()).isZero(); // MAX-1, MAX, then wraps to 0
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void kafkaLogAppendTimeBatchReportsTheAppendTimeForEveryRecord(CompressionType type) {
        MemoryRecordsBuilder builder = org.apache.kafka.common.record.internal.MemoryRecords.builder(
            ByteBuffer.allocate(64), KAFKA_MAGIC_V2, kafkaCompression(type), org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME,
            0L, 1_700_000_000_999L, org.apache.kafka.common.record.internal.RecordBatch.NO_PRODUCER_ID,
            org.apache.kafka.common.record.internal.RecordBatch.NO_PRODUCER_EPOCH,
            org.apache.kafka.common.record.internal.RecordBatch.NO_SEQUENCE, false, 0);
        kafkaSampleRecords().forEach(builder::append);
        ByteBuffer bytes = builder.build().buffer();
        assertSameBatches(bytes);
        assertThat(onlyBatch(MemoryRecords.readableRecords(bytes)).records())
            .allSatisfy(record -> assertThat(record.timestamp()).isEqualTo(1_700_000_000_999L));
    }

    @Test
    void kafkaBatchWithDeleteHorizonReadsTheSameInStrata() {
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(new ByteBufferOutputStream(64), KAFKA_MAGIC_V2,
            kafkaCompression(CompressionType.ZSTD), org.apache.kafka.common.record.TimestampType.CREATE_TIME, 10L,
            org.apache.kafka.common.record.internal.RecordBatch.NO_TIMESTAMP, PRODUCER_ID, PRODUCER_EPOCH, 0, false, false, 5,
            Integer.MAX_VALUE, 1_700_000_500_000L);
        kafkaSampleRecords().forEach(builder::append);
        ByteBuffer bytes = builder.build().buffer();
        assertSameBatches(bytes);
        assertThat(onlyBatch(MemoryRecords.readableRecords(bytes)).deleteHorizonMs()).hasValue(1_700_000_500_000L);
    }

    @Test
    void kafkaEndTransactionMarkersReadAsControlRecords() {
        for (org.apache.kafka.common.record.internal.ControlRecordType kafkaType : List.of(
            org.apache.kafka.common.record.internal.ControlRecordType.COMMIT, org.apache.kafka.common.record.internal.ControlRecordType.ABORT)) {
            org.apache.kafka.common.record.internal.MemoryRecords kafka =
                org.apache.kafka.common.record.internal.MemoryRecords.withEndTransactionMarker(900L, 1_700_000_000_000L, 21,
                    PRODUCER_ID, PRODUCER_EPOCH, new org.apache.kafka.common.record.internal.EndTransactionMarker(kafkaType, 33));
            assertSameBatches(kafka.buffer());
            DefaultRecordBatch batch = onlyBatch(MemoryRecords.readableRecords(kafka.buffer()));
            assertThat(batch.isControlBatch()).isTrue();
            assertThat(batch.isTransactional()).isTrue();
            Record marker = batch.records().get(0);
            assertThat(ControlRecordType.parseKey(marker.key()).typeId()).isEqualTo(kafkaType.type());
            assertThat(EndTransactionMarker.fromRecord(marker))
                .isEqualTo(new EndTransactionMarker(ControlRecordType.fromTypeId(kafkaType.type()), 33));
        }
    }

    @Test
    void aRecordSetOfManyKafkaBatchesReadsBatchByBatch() {
        List<ByteBuffer> parts = new ArrayList<>();
        long offset = 0;
        for (CompressionType type : CompressionType.values()) {
            org.apache.kafka.common.record.internal.MemoryRecords part =
                org.apache.kafka.common.record.internal.MemoryRecords.withIdempotentRecords(KAFKA_MAGIC_V2, offset, kafkaCompression(type),
                    PRODUCER_ID, PRODUCER_EPOCH, (int) offset, 2, kafkaSampleRecords().toArray(new SimpleRecord[0]));
            parts.add(part.buffer());
            offset += kafkaSampleRecords().size();
        }
        parts.add(org.apache.kafka.common.record.internal.MemoryRecords.withEndTransactionMarker(offset, 5L, 2, PRODUCER_ID, PRODUCER_EPOCH,
            new org.apache.kafka.common.record.internal.EndTransactionMarker(
                org.apache.kafka.common.record.internal.ControlRecordType.ABORT, 1)).buffer());
        ByteBuffer all = concat(parts);
        assertSameBatches(all);
        assertThat(MemoryRecords.readableRecords(all).batches()).hasSize(CompressionType.values().length + 1);
    }

    // ---- Strata writes, Kafka reads ----

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void strataBatchPassesKafkaValidationAndReadsTheSame(CompressionType type) {
        RecordBatchBuilder builder = new RecordBatchBuilder(type, TimestampType.CREATE_TIME, 5_000L)
            .producerState(PRODUCER_ID, PRODUCER_EPOCH, 100, false)
            .partitionLeaderEpoch(3);
        appendSampleRecords(builder);
        assertSameBatches(builder.build().buffer());
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void strataTransactionalLogAppendTimeBatchReadsTheSameInKafka(CompressionType type) {
        RecordBatchBuilder builder = new RecordBatchBuilder(type, TimestampType.LOG_APPEND_TIME, 0L)
            .producerState(PRODUCER_ID, PRODUCER_EPOCH, 0, true)
            .logAppendTimeMs(1_700_000_123_456L);
        appendSampleRecords(builder);
        ByteBuffer bytes = builder.build().buffer();
        assertSameBatches(bytes);
        MutableRecordBatch kafka = org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(bytes).batches().iterator().next();
        assertThat(kafka.isTransactional()).isTrue();
        kafka.forEach(record -> assertThat(record.timestamp()).isEqualTo(1_700_000_123_456L));
    }

    @Test
    void strataDeleteHorizonBatchReadsTheSameInKafka() {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.LZ4, TimestampType.CREATE_TIME, 0L).deleteHorizonMs(1_700_000_900_000L);
        appendSampleRecords(builder);
        ByteBuffer bytes = builder.build().buffer();
        assertSameBatches(bytes);
        assertThat(org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(bytes).batches().iterator().next().deleteHorizonMs())
            .hasValue(1_700_000_900_000L);
    }

    @Test
    void strataEndTransactionMarkerIsAKafkaControlBatch() {
        for (ControlRecordType type : List.of(ControlRecordType.COMMIT, ControlRecordType.ABORT)) {
            MemoryRecords marker = RecordBatchBuilder.endTransactionMarker(321L, 1_700_000_000_000L, 8, PRODUCER_ID, PRODUCER_EPOCH,
                new EndTransactionMarker(type, 44));
            assertSameBatches(marker.buffer());
            MutableRecordBatch kafka = org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(marker.buffer())
                .batches().iterator().next();
            assertThat(kafka.isControlBatch()).isTrue();
            org.apache.kafka.common.record.internal.EndTransactionMarker kafkaMarker =
                org.apache.kafka.common.record.internal.EndTransactionMarker.deserialize(kafka.iterator().next());
            assertThat(kafkaMarker.controlType().type()).isEqualTo(type.typeId());
            assertThat(kafkaMarker.coordinatorEpoch()).isEqualTo(44);
        }
    }

    @Test
    void strataBatchesAreByteIdenticalToKafkasForUncompressedInput() {
        // Same inputs, no compression: the encodings must match byte for byte, CRC included.
        org.apache.kafka.common.record.internal.MemoryRecords kafka =
            org.apache.kafka.common.record.internal.MemoryRecords.withIdempotentRecords(KAFKA_MAGIC_V2, 50L,
                kafkaCompression(CompressionType.NONE), PRODUCER_ID, PRODUCER_EPOCH, 9, 4,
                kafkaSampleRecords().toArray(new SimpleRecord[0]));
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 50L)
            .producerState(PRODUCER_ID, PRODUCER_EPOCH, 9, false).partitionLeaderEpoch(4);
        appendSampleRecords(builder);
        assertThat(builder.build().buffer()).isEqualTo(kafka.buffer());
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void inPlaceSettersMatchKafkasAndKeepTheCrcValid(CompressionType type) {
        RecordBatchBuilder builder = new RecordBatchBuilder(type, TimestampType.CREATE_TIME, 0L).producerState(PRODUCER_ID, PRODUCER_EPOCH, 0, false);
        appendSampleRecords(builder);
        ByteBuffer original = builder.build().buffer();
        ByteBuffer ours = copy(original);
        ByteBuffer theirs = copy(original);

        DefaultRecordBatch strata = DefaultRecordBatch.wrap(ours);
        strata.setLastOffset(10_000L);
        strata.setPartitionLeaderEpoch(42);
        strata.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, 1_800_000_000_000L);
        MutableRecordBatch kafka = org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(theirs).batches().iterator().next();
        kafka.setLastOffset(10_000L);
        kafka.setPartitionLeaderEpoch(42);
        kafka.setMaxTimestamp(org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME, 1_800_000_000_000L);

        assertThat(ours).isEqualTo(theirs);
        assertSameBatches(ours);
        assertThat(strata.lastOffset()).isEqualTo(10_000L);
        assertThat(strata.records()).allSatisfy(record -> assertThat(record.timestamp()).isEqualTo(1_800_000_000_000L));
    }

    // ---- sample data ----

    /** Varied records: null and empty keys and values, headers with null values and non-ASCII keys, out-of-order timestamps, a large value. */
    private static List<SampleRecord> sampleRecords() {
        byte[] large = new byte[200_000];
        for (int i = 0; i < large.length; i++) {
            large[i] = (byte) (i % 251 < 200 ? 'a' + i % 7 : i * 31);
        }
        return List.of(
            new SampleRecord(1_700_000_000_000L, utf8("key-0"), utf8("value-0"), List.of()),
            new SampleRecord(1_700_000_000_005L, null, utf8("no key"), List.of(Header.of("trace", utf8("abc")))),
            new SampleRecord(1_699_999_999_000L, utf8("tombstone"), null, List.of(Header.of("null-value", null), Header.of("ключ", utf8("значение")))),
            new SampleRecord(1_700_000_000_010L, new byte[0], new byte[0], List.of(Header.of("", new byte[0]))),
            new SampleRecord(1_700_000_000_011L, null, null, List.of()),
            new SampleRecord(1_700_000_000_020L, utf8("large"), large, List.of(Header.of("a", utf8("1")), Header.of("a", utf8("2")))));
    }

    private record SampleRecord(long timestampMs, byte[] key, byte[] value, List<Header> headers) {
    }

    private static List<SimpleRecord> kafkaSampleRecords() {
        List<SimpleRecord> records = new ArrayList<>();
        for (SampleRecord sample : sampleRecords()) {
            org.apache.kafka.common.header.Header[] headers = sample.headers().stream()
                .map(header -> new RecordHeader(header.key(), bytes(header.value())))
                .toArray(org.apache.kafka.common.header.Header[]::new);
            records.add(new SimpleRecord(sample.timestampMs(), sample.key(), sample.value(), headers));
        }
        return records;
    }

    private static void appendSampleRecords(RecordBatchBuilder builder) {
        for (SampleRecord sample : sampleRecords()) {
            builder.append(sample.timestampMs(), sample.key(), sample.value(), sample.headers());
        }
    }

    private static DefaultRecordBatch onlyBatch(MemoryRecords records) {
        List<RecordBatch> batches = new ArrayList<>();
        records.batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        return (DefaultRecordBatch) batches.get(0);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static ByteBuffer copy(ByteBuffer source) {
        ByteBuffer copy = ByteBuffer.allocate(source.remaining());
        copy.put(source.duplicate());
        return copy.flip();
    }

    private static ByteBuffer concat(List<ByteBuffer> parts) {
        ByteBuffer all = ByteBuffer.allocate(parts.stream().mapToInt(ByteBuffer::remaining).sum());
        parts.forEach(part -> all.put(part.duplicate()));
        return all.flip();
    }
}
