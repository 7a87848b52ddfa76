package io.strata.protocol.records;

import io.strata.protocol.ProtocolException;
import io.strata.protocol.records.compression.CompressionException;
import io.strata.protocol.records.compression.DecompressionLimitException;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.strata.protocol.records.KafkaRecordsComparison.kafkaCompression;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * Bad bytes at every level: the record set (truncation, lengths, magic), the batch (CRC,
 * header fields), the records section (counts and lengths, negative or beyond the bytes),
 * and compression (garbage, bombs). The only exception that may escape is
 * {@link ProtocolException}, and memory stays bounded by the decompression limit.
 */
class HostileRecordsTest {
    private static final int SMALL_LIMIT_BYTES = 1 << 20;
    private static final long BOMB_BYTES = 100L * 1024 * 1024;

    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    // ---- record set level ----

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void aTruncatedLastBatchEndsIterationAndIsVisibleInValidBytes(CompressionType type) {
        ByteBuffer first = TestBatches.valid(type, 3);
        ByteBuffer second = TestBatches.valid(type, 4);
        for (int cut = 0; cut < second.remaining(); cut++) {
            ByteBuffer set = ByteBuffer.allocate(first.remaining() + cut);
            set.put(first.duplicate()).put(second.duplicate().limit(cut)).flip();
            MemoryRecords records = MemoryRecords.readableRecords(set);
            List<RecordBatch> batches = new ArrayList<>();
            records.batches().forEach(batches::add);
            assertThat(batches).hasSize(1);
            assertThat(records.validBytes()).isEqualTo(first.remaining());
            ((DefaultRecordBatch) batches.get(0)).ensureValid();
        }
    }

    @Test
    void lengthsNoFormatAllowsAndUnknownMagicsAreCorrupt() {
        ByteBuffer valid = TestBatches.valid(CompressionType.NONE, 2);
        for (int length : new int[] {-1, Integer.MIN_VALUE, 0, RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V0 - 1}) {
            ByteBuffer bad = TestBatches.copy(valid);
            bad.putInt(RecordBatchDescriptor.LENGTH_OFFSET, length);
            assertThatThrownBy(() -> MemoryRecords.readableRecords(bad).batches().iterator().hasNext())
                .isInstanceOf(CorruptRecordException.class).hasMessageContaining("batchLength=" + length);
        }
        ByteBuffer tooShortForMagic2 = TestBatches.copy(valid).limit(40);
        tooShortForMagic2.putInt(RecordBatchDescriptor.LENGTH_OFFSET, 40 - RecordBatchDescriptor.LOG_OVERHEAD);
        assertThatThrownBy(() -> MemoryRecords.readableRecords(tooShortForMagic2).batches().iterator().next())
            .isInstanceOf(CorruptRecordException.class);
        for (byte magic : new byte[] {3, -1, 127}) {
            ByteBuffer bad = TestBatches.copy(valid);
            bad.put(RecordBatchDescriptor.MAGIC_OFFSET, magic);
            assertThatThrownBy(() -> MemoryRecords.readableRecords(bad).validBytes())
                .isInstanceOf(CorruptRecordException.class).hasMessageContaining("magic=" + magic);
        }
    }

    @Test
    void anOversizedBatchLengthIsATruncatedTailNotAnAllocation() {
        ByteBuffer bad = TestBatches.copy(TestBatches.valid(CompressionType.NONE, 2));
        bad.putInt(RecordBatchDescriptor.LENGTH_OFFSET, Integer.MAX_VALUE);
        MemoryRecords records = MemoryRecords.readableRecords(bad);
        assertThat(records.batches()).isEmpty();
        assertThat(records.validBytes()).isZero();
    }

    // ---- batch level ----

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void everyCoveredByteFlipBreaksTheCrcAndNoUncoveredOneDoes(CompressionType type) {
        ByteBuffer valid = TestBatches.valid(type, 3);
        for (int position = 0; position < valid.remaining(); position++) {
            ByteBuffer flipped = TestBatches.copy(valid);
            flipped.put(position, (byte) (flipped.get(position) ^ 0x10));
            boolean covered = position >= RecordBatchDescriptor.CRC_OFFSET;
            boolean lengthOrMagic = position >= RecordBatchDescriptor.LENGTH_OFFSET && position < RecordBatchDescriptor.LENGTH_OFFSET + 4
                || position == RecordBatchDescriptor.MAGIC_OFFSET;
            if (lengthOrMagic) {
                assertOnlyProtocolException(() -> DefaultRecordBatch.wrap(flipped));
                continue;
            }
            DefaultRecordBatch batch = DefaultRecordBatch.wrap(flipped);
            assertThat(batch.isValid()).as("flip at %d", position).isEqualTo(!covered);
            if (covered) {
                assertThatThrownBy(batch::ensureValid).isInstanceOf(CorruptRecordException.class).hasMessageContaining("CRC");
            }
        }
    }

    @Test
    void unknownCompressionIdsAreCorrupt() {
        for (int id = 5; id <= 7; id++) {
            DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.withRecordsSection(id, 1, ByteBuffer.wrap(new byte[20])));
            assertThatThrownBy(batch::compressionType).isInstanceOf(CorruptRecordException.class).hasMessageContaining("id=" + id);
            assertThatThrownBy(batch::records).isInstanceOf(CorruptRecordException.class);
        }
    }

    // ---- records section: counts ----

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void aRecordCountAboveOrBelowTheRecordsIsCorrupt(CompressionType type) {
        ByteBuffer valid = TestBatches.valid(type, 5);
        for (int declared : new int[] {4, 6, 0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            ByteBuffer bad = TestBatches.copy(valid);
            bad.putInt(RecordBatchDescriptor.RECORDS_COUNT_OFFSET, declared);
            DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.resign(bad));
            batch.ensureValid();
            assertThatThrownBy(batch::records).as("declared %d", declared).isInstanceOf(CorruptRecordException.class)
                .hasMessageContaining("recordCount=" + declared);
        }
    }

    @Test
    void aHugeRecordCountIsRefusedBeforeAllocating() {
        DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.withRecordsSection(0, Integer.MAX_VALUE, ByteBuffer.wrap(new byte[70])));
        long allocated = allocatedBytes(() -> assertThatThrownBy(batch::records).isInstanceOf(CorruptRecordException.class));
        assertThat(allocated).isLessThan(1 << 20);
    }

    // ---- records section: lengths ----

    @Test
    void negativeAndOversizedRecordLengthsAreCorrupt() {
        for (int declaredBodyBytes : new int[] {-1, -100, Integer.MIN_VALUE, 0, 5, 1_000_000, Integer.MAX_VALUE}) {
            ByteBuffer record = TestBatches.rawRecord(declaredBodyBytes, 1, new byte[] {'k'}, 1, new byte[] {'v'}, 0);
            DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.withRecordsSection(0, 1, record));
            assertThatThrownBy(batch::records).isInstanceOf(CorruptRecordException.class)
                .hasMessageContaining("recordBodyBytes=" + declaredBodyBytes);
        }
    }

    @Test
    void keyValueAndHeaderLengthsOutsideTheRecordAreCorrupt() {
        int[][] cases = {
            // keyLength, valueLength, headerCount
            {-2, 1, 0}, {Integer.MIN_VALUE, 1, 0}, {1_000, 1, 0}, {Integer.MAX_VALUE, 1, 0},
            {1, -5, 0}, {1, 500, 0}, {1, Integer.MAX_VALUE, 0},
            {1, 1, -1}, {1, 1, Integer.MAX_VALUE}, {1, 1, 3},
        };
        for (int[] c : cases) {
            ByteBuffer placeholder = TestBatches.rawRecord(0, c[0], new byte[] {'k'}, c[1], new byte[] {'v'}, c[2]);
            int body = TestBatches.honestBodyBytes(placeholder);
            ByteBuffer record = TestBatches.rawRecord(body, c[0], new byte[] {'k'}, c[1], new byte[] {'v'}, c[2]);
            DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.withRecordsSection(0, 1, record));
            long allocated = allocatedBytes(() -> assertThatThrownBy(batch::records)
                .as("key %d value %d headers %d", c[0], c[1], c[2]).isInstanceOf(ProtocolException.class));
            assertThat(allocated).isLessThan(1 << 20);
        }
    }

    @Test
    void aNullHeaderKeyIsCorrupt() {
        ByteBuffer record = ByteBuffer.allocate(16);
        io.strata.protocol.ByteUtils.writeVarint(8, record);
        record.put((byte) 0).put((byte) 0).put((byte) 0); // attributes, timestampDelta 0, offsetDelta 0
        io.strata.protocol.ByteUtils.writeVarint(-1, record);
        io.strata.protocol.ByteUtils.writeVarint(-1, record);
        io.strata.protocol.ByteUtils.writeVarint(1, record);
        io.strata.protocol.ByteUtils.writeVarint(-1, record); // header key length -1
        io.strata.protocol.ByteUtils.writeVarint(-1, record);
        DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.withRecordsSection(0, 1, record.flip()));
        assertThatThrownBy(batch::records).isInstanceOf(CorruptRecordException.class).hasMessageContaining("keyLength=-1");
    }

    @Test
    void aRecordWithBytesAfterItsHeadersIsCorrupt() {
        ByteBuffer placeholder = TestBatches.rawRecord(0, 1, new byte[] {'k'}, 1, new byte[] {'v'}, 0);
        int honest = TestBatches.honestBodyBytes(placeholder);
        ByteBuffer record = TestBatches.rawRecord(honest + 2, 1, new byte[] {'k'}, 1, new byte[] {'v'}, 0);
        ByteBuffer section = ByteBuffer.allocate(record.remaining() + 2).put(record).put(new byte[2]).flip();
        DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.withRecordsSection(0, 1, section));
        assertThatThrownBy(batch::records).isInstanceOf(CorruptRecordException.class).hasMessageContaining("unreadBytes=2");
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void recordsTruncatedInsideAConsistentBatchAreCorrupt(CompressionType type) {
        ByteBuffer valid = TestBatches.valid(type, 6);
        for (int cut = 1; cut < valid.remaining() - RecordBatchDescriptor.RECORD_BATCH_OVERHEAD; cut++) {
            ByteBuffer shortened = TestBatches.copy(valid.duplicate().limit(valid.remaining() - cut));
            shortened.putInt(RecordBatchDescriptor.LENGTH_OFFSET, shortened.remaining() - RecordBatchDescriptor.LOG_OVERHEAD);
            DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.resign(shortened));
            assertThatThrownBy(batch::records).isInstanceOf(ProtocolException.class);
        }
    }

    // ---- fuzzing: only ProtocolException escapes ----

    @Property(tries = 3000)
    void randomBytesAsARecordSetOnlyFailWithProtocolException(@ForAll @Size(max = 400) byte[] bytes) {
        assertOnlyProtocolException(() -> readEverything(ByteBuffer.wrap(bytes)));
    }

    @Property(tries = 3000)
    void randomRecordsSectionsBehindAValidHeaderOnlyFailWithProtocolException(
        @ForAll @IntRange(min = 0, max = 127) int attributes, @ForAll @IntRange(min = -2, max = 40) int recordCount,
        @ForAll @Size(max = 400) byte[] section) {
        ByteBuffer batch = TestBatches.withRecordsSection(attributes, recordCount, ByteBuffer.wrap(section));
        assertOnlyProtocolException(() -> readEverything(batch));
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void mutatedValidBatchesWithRecomputedCrcOnlyFailWithProtocolException(CompressionType type) {
        ByteBuffer valid = TestBatches.valid(type, 8);
        Random random = new Random(type.id() * 7919L);
        for (int i = 0; i < 3_000; i++) {
            ByteBuffer mutated = TestBatches.copy(valid);
            int mutations = 1 + random.nextInt(3);
            for (int m = 0; m < mutations; m++) {
                // Skip the prefix so the batch stays one well-formed entry and the parser goes deep.
                int position = RecordBatchDescriptor.ATTRIBUTES_OFFSET + 2
                    + random.nextInt(mutated.remaining() - RecordBatchDescriptor.ATTRIBUTES_OFFSET - 2);
                mutated.put(position, (byte) random.nextInt());
            }
            assertOnlyProtocolException(() -> readEverything(TestBatches.resign(mutated)));
        }
    }

    // ---- decompression bombs ----

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aHundredMegabytesOfZerosStopsAtTheDefaultLimit(CompressionType type) throws IOException {
        DefaultRecordBatch batch = DefaultRecordBatch.wrap(bomb(type));
        batch.ensureValid();
        long allocated = allocatedBytes(() -> assertThatThrownBy(batch::records)
            .isInstanceOf(DecompressionLimitException.class)
            .hasMessageContaining("maxDecompressedBytes=" + RecordLimits.DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES));
        // Doubling growth up to the limit costs at most about twice the limit.
        assertThat(allocated).isLessThan(3L * RecordLimits.DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aBombStopsAtASmallCallerLimitWithMemoryToMatch(CompressionType type) throws IOException {
        DefaultRecordBatch batch = DefaultRecordBatch.wrap(bomb(type));
        long allocated = allocatedBytes(() -> assertThatThrownBy(() -> batch.records(SMALL_LIMIT_BYTES))
            .isInstanceOf(DecompressionLimitException.class));
        assertThat(allocated).isLessThan(8L * SMALL_LIMIT_BYTES);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void garbageInACompressedBatchIsACompressionError(CompressionType type) {
        byte[] garbage = new byte[200];
        new Random(1).nextBytes(garbage);
        DefaultRecordBatch batch = DefaultRecordBatch.wrap(TestBatches.withRecordsSection(type.id(), 3, ByteBuffer.wrap(garbage)));
        assertThatThrownBy(batch::records).isInstanceOf(ProtocolException.class)
            .satisfiesAnyOf(e -> assertThat(e).isInstanceOf(CompressionException.class),
                e -> assertThat(e).isInstanceOf(CorruptRecordException.class));
    }

    /** A batch claiming one record whose compressed records section inflates to 100 MiB of zeros. */
    private static ByteBuffer bomb(CompressionType type) throws IOException {
        ByteBufferOutputStream sink = new ByteBufferOutputStream(1 << 16);
        byte[] zeros = new byte[1 << 20];
        try (OutputStream out = kafkaCompression(type).wrapForOutput(sink, (byte) 2)) {
            for (long written = 0; written < BOMB_BYTES; written += zeros.length) {
                out.write(zeros);
            }
        }
        ByteBuffer compressed = sink.buffer().flip();
        assertThat(compressed.remaining()).isLessThan((int) (BOMB_BYTES / 10));
        return TestBatches.withRecordsSection(type.id(), 1, compressed);
    }

    /** Walks a record set as the broker would: every batch, its CRC, its records, legacy fields. */
    private static void readEverything(ByteBuffer bytes) {
        for (RecordBatch batch : MemoryRecords.readableRecords(bytes).batches()) {
            batch.isValid();
            if (batch instanceof DefaultRecordBatch v2) {
                v2.toString();
                for (Record record : v2.records(SMALL_LIMIT_BYTES)) {
                    record.key();
                    record.headers().forEach(Header::value);
                }
                if (v2.isControlBatch()) {
                    assertOnlyProtocolException(() -> v2.records(SMALL_LIMIT_BYTES).forEach(EndTransactionMarker::fromRecord));
                }
            } else if (batch instanceof LegacyRecordBatch legacy) {
                legacy.key();
                legacy.value();
                legacy.timestampType();
                legacy.compressionType();
            }
        }
    }

    static void assertOnlyProtocolException(Runnable action) {
        try {
            action.run();
        } catch (ProtocolException expected) {
            // the one acceptable failure for bad bytes
        } catch (Throwable unexpected) {
            fail("only ProtocolException may escape, got " + unexpected, unexpected);
        }
    }

    private static long allocatedBytes(Runnable action) {
        long threadId = Thread.currentThread().getId();
        long before = THREADS.getThreadAllocatedBytes(threadId);
        action.run();
        return THREADS.getThreadAllocatedBytes(threadId) - before;
    }
}
