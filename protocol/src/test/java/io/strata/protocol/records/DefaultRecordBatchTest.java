package io.strata.protocol.records;

import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.LegacyRecord;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The magic-2 view, the builder's contract, MemoryRecords iteration, and the small value types. */
class DefaultRecordBatchTest {
    @Test
    void descriptorMatchesKafkasLayoutConstants() {
        assertThat(RecordBatchDescriptor.RECORD_BATCH_OVERHEAD).isEqualTo(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        assertThat(RecordBatchDescriptor.CRC_OFFSET).isEqualTo(DefaultRecordBatch.CRC_OFFSET);
        assertThat(RecordBatchDescriptor.LAST_OFFSET_DELTA_OFFSET).isEqualTo(DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET);
        assertThat(RecordBatchDescriptor.RECORDS_COUNT_OFFSET).isEqualTo(DefaultRecordBatch.RECORDS_COUNT_OFFSET);
        assertThat(RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V0).isEqualTo(LegacyRecord.RECORD_OVERHEAD_V0);
        assertThat(RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V1).isEqualTo(LegacyRecord.RECORD_OVERHEAD_V1);
    }

    @Test
    void wrapRefusesBytesThatAreNotExactlyOneMagicTwoBatch() {
        ByteBuffer valid = TestBatches.valid(CompressionType.NONE, 2);
        assertThatThrownBy(() -> io.strata.protocol.records.DefaultRecordBatch.wrap(valid.duplicate().limit(60)))
            .isInstanceOf(CorruptRecordException.class).hasMessageContaining("sizeInBytes=60");
        ByteBuffer longer = ByteBuffer.allocate(valid.remaining() + 1).put(valid.duplicate()).rewind(); // one trailing zero byte
        assertThatThrownBy(() -> io.strata.protocol.records.DefaultRecordBatch.wrap(longer))
            .isInstanceOf(CorruptRecordException.class).hasMessageContaining("batchLength");
        ByteBuffer magic1 = TestBatches.copy(valid).put(RecordBatchDescriptor.MAGIC_OFFSET, (byte) 1);
        assertThatThrownBy(() -> io.strata.protocol.records.DefaultRecordBatch.wrap(magic1))
            .isInstanceOf(CorruptRecordException.class).hasMessageContaining("magic=1");
    }

    @Test
    void offsetAndLeaderEpochSettersLeaveTheCrcAlone() {
        ByteBuffer bytes = TestBatches.valid(CompressionType.GZIP, 3);
        io.strata.protocol.records.DefaultRecordBatch batch = io.strata.protocol.records.DefaultRecordBatch.wrap(bytes);
        long crc = batch.checksum();
        batch.setBaseOffset(1_000L);
        assertThat(batch.lastOffset()).isEqualTo(1_002L);
        batch.setLastOffset(50L);
        assertThat(batch.baseOffset()).isEqualTo(48L);
        batch.setPartitionLeaderEpoch(77);
        assertThat(batch.partitionLeaderEpoch()).isEqualTo(77);
        assertThat(batch.checksum()).isEqualTo(crc);
        assertThat(batch.isValid()).isTrue();
        assertThat(batch.records()).extracting(Record::offset).containsExactly(48L, 49L, 50L);
    }

    @Test
    void setMaxTimestampRewritesTheCrcAndIsANoOpForSameValues() {
        ByteBuffer bytes = TestBatches.valid(CompressionType.NONE, 2);
        io.strata.protocol.records.DefaultRecordBatch batch = io.strata.protocol.records.DefaultRecordBatch.wrap(bytes);
        ByteBuffer before = TestBatches.copy(bytes);
        batch.setMaxTimestamp(TimestampType.CREATE_TIME, batch.maxTimestamp());
        assertThat(bytes).isEqualTo(before);

        batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, 1_800_000_000_000L);
        assertThat(batch.isValid()).isTrue();
        assertThat(batch.checksum()).isNotEqualTo(io.strata.protocol.records.DefaultRecordBatch.wrap(before).checksum());
        assertThat(batch.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThat(batch.compressionType()).isEqualTo(CompressionType.NONE);
        assertThat(batch.records()).allSatisfy(record -> assertThat(record.timestamp()).isEqualTo(1_800_000_000_000L));
        assertThatThrownBy(() -> batch.setMaxTimestamp(TimestampType.NO_TIMESTAMP_TYPE, 1L)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void settersThroughMemoryRecordsChangeTheSharedBytes() {
        MemoryRecords records = MemoryRecords.readableRecords(TestBatches.valid(CompressionType.ZSTD, 2));
        ((io.strata.protocol.records.DefaultRecordBatch) records.batches().iterator().next()).setLastOffset(999L);
        assertThat(((io.strata.protocol.records.DefaultRecordBatch) records.batches().iterator().next()).lastOffset()).isEqualTo(999L);
    }

    @Test
    void viewsHandedOutAreReadOnly() {
        io.strata.protocol.records.DefaultRecordBatch batch = io.strata.protocol.records.DefaultRecordBatch.wrap(TestBatches.valid(CompressionType.NONE, 1));
        assertThatThrownBy(() -> batch.buffer().put(0, (byte) 1)).isInstanceOf(ReadOnlyBufferException.class);
        Record record = batch.records().get(0);
        assertThatThrownBy(() -> record.value().put(0, (byte) 1)).isInstanceOf(ReadOnlyBufferException.class);
        ByteBuffer key = record.key();
        key.get();
        assertThat(record.key().position()).isZero();
        assertThatThrownBy(() -> record.headers().add(Header.of("x", null))).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void sequencesWrapAtIntegerMaxValueLikeKafkas() {
        assertThat(io.strata.protocol.records.DefaultRecordBatch.incrementSequence(Integer.MAX_VALUE, 1)).isZero();
        assertThat(io.strata.protocol.records.DefaultRecordBatch.incrementSequence(Integer.MAX_VALUE - 2, 5)).isEqualTo(2);
        assertThat(io.strata.protocol.records.DefaultRecordBatch.incrementSequence(-1, 5)).isEqualTo(-1);
        assertThat(io.strata.protocol.records.DefaultRecordBatch.incrementSequence(10, 5)).isEqualTo(15);
    }

    @Test
    void anEmptyCompressedBatchLeftByCompactionHasNoRecords() {
        io.strata.protocol.records.DefaultRecordBatch batch = io.strata.protocol.records.DefaultRecordBatch.wrap(
            TestBatches.withRecordsSection(CompressionType.ZSTD.id(), 0, ByteBuffer.allocate(0)));
        assertThat(batch.records()).isEmpty();
        io.strata.protocol.records.DefaultRecordBatch claimsOne = io.strata.protocol.records.DefaultRecordBatch.wrap(
            TestBatches.withRecordsSection(CompressionType.ZSTD.id(), 1, ByteBuffer.allocate(0)));
        assertThatThrownBy(claimsOne::records).isInstanceOf(CorruptRecordException.class);
    }

    @Test
    void emptyRecordSetsHaveNoBatches() {
        assertThat(MemoryRecords.EMPTY.batches()).isEmpty();
        assertThat(MemoryRecords.EMPTY.validBytes()).isZero();
        assertThat(MemoryRecords.readableRecords(ByteBuffer.allocate(11)).batches()).isEmpty();
        assertThatThrownBy(() -> RecordBatch.peekMagic(ByteBuffer.allocate(16))).isInstanceOf(CorruptRecordException.class);
    }

    @Test
    void builderWithNoRecordsBuildsAnEmptySet() {
        assertThat(new RecordBatchBuilder(CompressionType.LZ4, TimestampType.CREATE_TIME, 0L).build()).isSameAs(MemoryRecords.EMPTY);
    }

    @Test
    void builderRefusesMisuseWithTheValuesInvolved() {
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 5L)
            .append(1L, null, new byte[1]).appendWithOffset(5L, 1L, null, null, List.of()))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("offset=5").hasMessageContaining("lastOffset=5");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 5L)
            .appendWithOffset(4L, 1L, null, null, List.of()))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("baseOffset=5");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .appendWithOffset(1L + Integer.MAX_VALUE, 1L, null, null, List.of()))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L).append(-2L, null, null))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timestampMs=-2");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .producerState(-1L, (short) -1, -1, true).append(1L, null, null))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("producer id");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .controlBatch(true).append(1L, null, null))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("control");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .appendControlRecord(1L, ControlRecordType.COMMIT, null))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("control batch");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .append(1L, null, null).partitionLeaderEpoch(3))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("partition leader epoch");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.LOG_APPEND_TIME, 0L)
            .append(1L, null, null).build())
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("logAppendTimeMs");
        assertThatThrownBy(() -> new RecordBatchBuilder(CompressionType.NONE, TimestampType.NO_TIMESTAMP_TYPE, 0L))
            .isInstanceOf(IllegalArgumentException.class);
        RecordBatchBuilder built = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L).append(1L, null, null);
        built.build();
        assertThatThrownBy(built::build).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> built.append(2L, null, null)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void builderKeepsOffsetGapsAndNegativeTimestampDeltas() {
        MemoryRecords records = new RecordBatchBuilder(CompressionType.SNAPPY, TimestampType.CREATE_TIME, 10L)
            .appendWithOffset(12L, 500L, null, ByteBuffer.wrap(new byte[] {1}), List.of())
            .appendWithOffset(20L, 100L, null, ByteBuffer.wrap(new byte[] {2}), List.of())
            .build();
        io.strata.protocol.records.DefaultRecordBatch batch = (io.strata.protocol.records.DefaultRecordBatch) records.batches().iterator().next();
        assertThat(batch.baseOffset()).isEqualTo(10L);
        assertThat(batch.lastOffset()).isEqualTo(20L);
        assertThat(batch.baseTimestamp()).isEqualTo(500L);
        assertThat(batch.maxTimestamp()).isEqualTo(500L);
        assertThat(batch.records()).extracting(Record::offset, Record::timestamp)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(12L, 500L), org.assertj.core.groups.Tuple.tuple(20L, 100L));
    }

    @Test
    void controlRecordKeysAndMarkersParseStrictly() {
        assertThat(ControlRecordType.parseKey(ControlRecordType.ABORT.serializeKey())).isEqualTo(ControlRecordType.ABORT);
        assertThat(ControlRecordType.parseKey(ByteBuffer.allocate(4).putShort((short) 0).putShort((short) 99).flip()))
            .isEqualTo(ControlRecordType.UNKNOWN);
        assertThat(ControlRecordType.parseKey(ByteBuffer.allocate(6).putShort((short) 3).putShort((short) 1).flip()))
            .as("a later key version is read as version 0").isEqualTo(ControlRecordType.COMMIT);
        assertThatThrownBy(() -> ControlRecordType.parseKey(ByteBuffer.allocate(3))).isInstanceOf(CorruptRecordException.class);
        assertThatThrownBy(() -> ControlRecordType.parseKey(null)).isInstanceOf(CorruptRecordException.class);
        assertThatThrownBy(() -> ControlRecordType.parseKey(ByteBuffer.allocate(4).putShort((short) -1).flip()))
            .isInstanceOf(CorruptRecordException.class);
        assertThatThrownBy(() -> new EndTransactionMarker(ControlRecordType.LEADER_CHANGE, 1)).isInstanceOf(IllegalArgumentException.class);

        MemoryRecords shortValue = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .producerState(1L, (short) 0, -1, true).controlBatch(true)
            .appendControlRecord(1L, ControlRecordType.COMMIT, ByteBuffer.allocate(5))
            .build();
        Record record = ((io.strata.protocol.records.DefaultRecordBatch) shortValue.batches().iterator().next()).records().get(0);
        assertThatThrownBy(() -> EndTransactionMarker.fromRecord(record)).isInstanceOf(CorruptRecordException.class);
    }

    @Test
    void compressionTypesMapIdsAndConfigNames() {
        for (CompressionType type : CompressionType.values()) {
            assertThat(CompressionType.forId(type.id())).isEqualTo(type);
            assertThat(CompressionType.forConfigName(type.configName().toUpperCase())).isEqualTo(type);
            assertThat(type.id()).isEqualTo(org.apache.kafka.common.record.internal.CompressionType.forName(type.configName()).id);
        }
        assertThatThrownBy(() -> CompressionType.forId(-1)).isInstanceOf(CorruptRecordException.class);
        assertThatThrownBy(() -> CompressionType.forConfigName("brotli")).isInstanceOf(IllegalArgumentException.class);
    }
}
