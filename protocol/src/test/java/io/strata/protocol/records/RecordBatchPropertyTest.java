package io.strata.protocol.records;

import io.strata.protocol.ByteUtils;
import io.strata.protocol.Sizes;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Properties: varints round-trip and match Kafka's encoding byte for byte; any batch the
 * builder accepts reads back with the same records in Strata and in kafka-clients.
 */
class RecordBatchPropertyTest {
    @Property(tries = 2000)
    void varintRoundTripsAndMatchesKafkasEncoding(@ForAll int value) {
        ByteBuffer ours = ByteBuffer.allocate(5);
        ByteUtils.writeVarint(value, ours);
        assertThat(ours.position()).isEqualTo(Sizes.varintSize(value));
        ByteBuffer theirs = ByteBuffer.allocate(5);
        org.apache.kafka.common.utils.internals.ByteUtils.writeVarint(value, theirs);
        assertThat(ours.flip()).isEqualTo(theirs.flip());
        assertThat(ByteUtils.readVarint(ours.duplicate())).isEqualTo(value);
    }

    @Property(tries = 2000)
    void varlongRoundTripsAndMatchesKafkasEncoding(@ForAll long value) {
        ByteBuffer ours = ByteBuffer.allocate(10);
        ByteUtils.writeVarlong(value, ours);
        assertThat(ours.position()).isEqualTo(Sizes.varlongSize(value));
        ByteBuffer theirs = ByteBuffer.allocate(10);
        org.apache.kafka.common.utils.internals.ByteUtils.writeVarlong(value, theirs);
        assertThat(ours.flip()).isEqualTo(theirs.flip());
        assertThat(ByteUtils.readVarlong(ours.duplicate())).isEqualTo(value);
    }

    @Property(tries = 300)
    void builtBatchesReadBackIdenticallyInStrataAndKafka(@ForAll("batches") BatchSpec spec) {
        RecordBatchBuilder builder = new RecordBatchBuilder(spec.compression(), spec.timestampType(), spec.baseOffset())
            .producerState(spec.producerId(), spec.producerEpoch(), spec.baseSequence(), spec.transactional())
            .partitionLeaderEpoch(spec.partitionLeaderEpoch())
            .logAppendTimeMs(spec.logAppendTimeMs());
        long offset = spec.baseOffset() - 1;
        for (RecordSpec record : spec.records()) {
            offset += 1 + record.offsetGap();
            builder.appendWithOffset(offset, record.timestampMs(), wrap(record.key()), wrap(record.value()), record.headers());
        }
        MemoryRecords built = builder.build();

        DefaultRecordBatch batch = (DefaultRecordBatch) built.batches().iterator().next();
        batch.ensureValid();
        assertThat(batch.compressionType()).isEqualTo(spec.compression());
        assertThat(batch.isTransactional()).isEqualTo(spec.transactional());
        assertThat(batch.partitionLeaderEpoch()).isEqualTo(spec.partitionLeaderEpoch());
        List<Record> records = batch.records();
        assertThat(records).hasSameSizeAs(spec.records());
        long expectedOffset = spec.baseOffset() - 1;
        for (int i = 0; i < records.size(); i++) {
            RecordSpec expected = spec.records().get(i);
            Record actual = records.get(i);
            expectedOffset += 1 + expected.offsetGap();
            assertThat(actual.offset()).isEqualTo(expectedOffset);
            assertThat(actual.timestamp()).isEqualTo(spec.timestampType() == TimestampType.LOG_APPEND_TIME
                ? spec.logAppendTimeMs() : expected.timestampMs());
            assertThat(KafkaRecordsComparison.bytes(actual.key())).isEqualTo(expected.key());
            assertThat(KafkaRecordsComparison.bytes(actual.value())).isEqualTo(expected.value());
            assertThat(actual.headers()).isEqualTo(expected.headers());
        }
        KafkaRecordsComparison.assertSameBatches(built.buffer());
    }

    /** {@code offsetGap}: offsets skipped before this record (compaction leaves such gaps). */
    record RecordSpec(int offsetGap, long timestampMs, byte[] key, byte[] value, List<Header> headers) {
    }

    record BatchSpec(CompressionType compression, TimestampType timestampType, long baseOffset, long producerId,
                     short producerEpoch, int baseSequence, boolean transactional, int partitionLeaderEpoch,
                     long logAppendTimeMs, List<RecordSpec> records) {
    }

    @Provide
    Arbitrary<BatchSpec> batches() {
        Arbitrary<Long> producerIds = Arbitraries.longs().between(0, Long.MAX_VALUE);
        return Combinators.combine(
                Arbitraries.of(CompressionType.class),
                Arbitraries.of(TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME),
                Arbitraries.longs().between(0, Long.MAX_VALUE / 2),
                producerIds,
                Arbitraries.shorts().between((short) 0, Short.MAX_VALUE),
                Arbitraries.integers().between(0, Integer.MAX_VALUE),
                Arbitraries.of(true, false),
                Arbitraries.integers().between(-1, Integer.MAX_VALUE))
            .flatAs((compression, timestampType, baseOffset, producerId, epoch, sequence, transactional, leaderEpoch) ->
                Combinators.combine(Arbitraries.longs().between(0, Long.MAX_VALUE / 4), records().list().ofMinSize(1).ofMaxSize(25))
                    .as((logAppendTime, records) -> new BatchSpec(compression, timestampType, baseOffset, producerId, epoch, sequence,
                        transactional, leaderEpoch, logAppendTime, records)));
    }

    private static Arbitrary<RecordSpec> records() {
        Arbitrary<byte[]> nullableBytes = Arbitraries.bytes().array(byte[].class).ofMaxSize(300).injectNull(0.15);
        Arbitrary<Header> headers = Combinators.combine(Arbitraries.strings().ofMaxLength(12), nullableBytes)
            .as((key, value) -> Header.of(key, value));
        return Combinators.combine(
                Arbitraries.integers().between(0, 1000).edgeCases(edges -> edges.includeOnly(0, 1)),
                timestamps(),
                nullableBytes,
                nullableBytes,
                headers.list().ofMaxSize(4))
            .as(RecordSpec::new);
    }

    private static Arbitrary<Long> timestamps() {
        return Arbitraries.longs().between(-1, Long.MAX_VALUE / 4);
    }

    private static ByteBuffer wrap(byte[] bytes) {
        return bytes == null ? null : ByteBuffer.wrap(bytes);
    }
}
