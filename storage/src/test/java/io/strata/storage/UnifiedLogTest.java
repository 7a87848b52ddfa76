package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchDescriptor;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class UnifiedLogTest {
    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final TopicPartition tp = new TopicPartition("orders", 0);
    private UnifiedLog log;

    @BeforeEach
    void open() throws IOException {
        log = open(LogConfig.defaults(), false);
    }

    @AfterEach
    void close() throws IOException {
        if (log != null && !log.isClosed()) {
            log.close();
        }
        scheduler.shutdownNow();
    }

    private UnifiedLog open(LogConfig config, boolean cleanShutdown) throws IOException {
        return UnifiedLog.load(dataDir.resolve(tp.toString()), tp, config, time, scheduler,
            new UnifiedLog.LoadParams(0, 0, cleanShutdown, 86_400_000L, false));
    }

    private UnifiedLog reopen(LogConfig config, boolean cleanShutdown) throws IOException {
        if (!log.isClosed()) {
            log.close();
        }
        log = open(config, cleanShutdown);
        return log;
    }

    private static List<String> values(FetchDataInfo info) {
        ByteBuffer bytes = info.records() instanceof FileRecords file ? file.readAll() : ((MemoryRecords) info.records()).buffer();
        List<String> values = new ArrayList<>();
        for (RecordBatch batch : MemoryRecords.readableRecords(bytes).batches()) {
            for (Record record : ((DefaultRecordBatch) batch).records()) {
                values.add(StandardCharsets.UTF_8.decode(record.value()).toString());
            }
        }
        return values;
    }

    private List<String> readAll(UnifiedLog log) {
        List<String> all = new ArrayList<>();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            FetchDataInfo info = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true);
            List<String> batchValues = values(info);
            all.addAll(batchValues);
            ByteBuffer bytes = ((FileRecords) info.records()).readAll();
            long last = offset;
            for (RecordBatch batch : MemoryRecords.readableRecords(bytes).batches()) {
                last = batch.lastOffset();
            }
            offset = last + 1;
        }
        return all;
    }

    @Test
    void appendAssignsOffsetsAndReadsBackTheRecords() throws IOException {
        LogAppendInfo first = log.appendAsLeader(TestRecords.batch(time.milliseconds(), "a", "b", "c"), 0, UnifiedLog.AppendOrigin.CLIENT);
        LogAppendInfo second = log.appendAsLeader(TestRecords.batch(time.milliseconds(), "d"), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThat(first.firstOffset()).isZero();
        assertThat(first.lastOffset()).isEqualTo(2);
        assertThat(second.firstOffset()).isEqualTo(3);
        assertThat(log.logEndOffset()).isEqualTo(4);
        assertThat(values(log.read(0, 1 << 20, FetchIsolation.LOG_END, false))).containsExactly("a", "b", "c", "d");
        // Reading from the middle of a batch returns the whole batch, as Kafka does.
        assertThat(values(log.read(1, 1 << 20, FetchIsolation.LOG_END, false))).containsExactly("a", "b", "c", "d");
        assertThat(values(log.read(3, 1 << 20, FetchIsolation.LOG_END, false))).containsExactly("d");
    }

    @Test
    void readsStopAtTheHighWatermark() throws IOException {
        log.appendAsLeader(TestRecords.batch(time.milliseconds(), "a"), 0, UnifiedLog.AppendOrigin.CLIENT);
        log.appendAsLeader(TestRecords.batch(time.milliseconds(), "b"), 0, UnifiedLog.AppendOrigin.CLIENT);
        log.updateHighWatermark(1);
        assertThat(values(log.read(0, 1 << 20, FetchIsolation.HIGH_WATERMARK, false))).containsExactly("a");
        assertThat(log.read(1, 1 << 20, FetchIsolation.HIGH_WATERMARK, false).records().sizeInBytes()).isZero();
        log.updateHighWatermark(2);
        assertThat(values(log.read(0, 1 << 20, FetchIsolation.HIGH_WATERMARK, false))).containsExactly("a", "b");
    }

    @Test
    void outOfRangeOffsetsAreRefused() throws IOException {
        log.appendAsLeader(TestRecords.batch(time.milliseconds(), "a"), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThatThrownBy(() -> log.read(5, 100, FetchIsolation.LOG_END, false))
            .isInstanceOf(ErrorCodeException.class).extracting(e -> ((ErrorCodeException) e).error()).isEqualTo(ErrorCode.OFFSET_OUT_OF_RANGE);
        assertThat(log.read(1, 100, FetchIsolation.LOG_END, false).records().sizeInBytes()).isZero();
    }

    @Test
    void segmentsRollBySizeAndEveryRecordStaysReadable() throws IOException {
        reopen(LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, "1024", LogConfig.INDEX_INTERVAL_BYTES, "100")), true);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String value = "value-" + i + "-" + "x".repeat(i % 50);
            expected.add(value);
            log.appendAsLeader(TestRecords.batch(time.milliseconds(), value), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        assertThat(log.numberOfSegments()).isGreaterThan(10);
        assertThat(readAll(log)).isEqualTo(expected);
        reopen(log.config(), true);
        assertThat(log.logEndOffset()).isEqualTo(200);
        assertThat(readAll(log)).isEqualTo(expected);
        // Every offset resolves to the batch holding it.
        for (int offset = 0; offset < 200; offset++) {
            assertThat(values(log.read(offset, 1, FetchIsolation.LOG_END, true))).first().isEqualTo(expected.get(offset));
        }
    }

    @Test
    void compressedBatchesAreStoredAsTheyArrive() throws IOException {
        for (CompressionType compression : CompressionType.values()) {
            log.appendAsLeader(TestRecords.batch(compression, time.milliseconds(), "x-" + compression, "y-" + compression),
                0, UnifiedLog.AppendOrigin.CLIENT);
        }
        List<String> all = readAll(log);
        assertThat(all).hasSize(CompressionType.values().length * 2);
        assertThat(all).contains("x-ZSTD", "y-LZ4", "x-GZIP", "y-SNAPPY");
    }

    @Test
    void timestampLookupsFindTheFirstRecordAtOrAfterTheTime() throws IOException {
        reopen(LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, "500", LogConfig.INDEX_INTERVAL_BYTES, "1")), true);
        long base = time.milliseconds() - 100_000;
        for (int i = 0; i < 50; i++) {
            log.appendAsLeader(TestRecords.batch(base + i * 10L, "v" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        assertThat(log.fetchOffsetByTimestamp(base).offset()).isZero();
        assertThat(log.fetchOffsetByTimestamp(base + 15).offset()).isEqualTo(2);
        assertThat(log.fetchOffsetByTimestamp(base + 490).offset()).isEqualTo(49);
        assertThat(log.fetchOffsetByTimestamp(base + 491)).isNull();
        assertThat(log.maxTimestampOffset().offset()).isEqualTo(49);
    }

    /**
     * A batch whose CRC is right but whose records are garbage (a buggy or hostile client
     * computed the CRC over them) is refused, compressed or not, as Kafka does by reading every
     * record it accepts; otherwise consumers would get a batch they cannot read.
     */
    @Test
    void wellChecksummedBatchesWithMalformedRecordsAreRefused() throws IOException {
        for (CompressionType compression : CompressionType.values()) {
            MemoryRecords good = TestRecords.batch(time.milliseconds(), "first", "second");
            ByteBuffer batch = good.buffer();
            ByteBuffer section = batch.slice(RecordBatchDescriptor.RECORDS_OFFSET, batch.limit() - RecordBatchDescriptor.RECORDS_OFFSET);
            byte[] records = new byte[section.remaining()];
            section.get(records);
            records[0] = (byte) (records[0] + 2); // the first record claims 1 more byte than it has (zigzag varint)
            ByteBuffer payload = compression == CompressionType.NONE ? ByteBuffer.wrap(records)
                : compression.codec().compress(ByteBuffer.wrap(records));
            ByteBuffer bad = ByteBuffer.allocate(RecordBatchDescriptor.RECORDS_OFFSET + payload.remaining());
            bad.put(batch.duplicate().position(0).limit(RecordBatchDescriptor.RECORDS_OFFSET)).put(payload).flip();
            bad.putInt(RecordBatchDescriptor.LENGTH_OFFSET, bad.limit() - RecordBatchDescriptor.LENGTH_OFFSET - 4);
            short attributes = (short) ((bad.getShort(RecordBatchDescriptor.ATTRIBUTES_OFFSET) & ~0x07) | compression.id());
            bad.putShort(RecordBatchDescriptor.ATTRIBUTES_OFFSET, attributes);
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(bad.duplicate().position(RecordBatchDescriptor.ATTRIBUTES_OFFSET));
            bad.putInt(RecordBatchDescriptor.CRC_OFFSET, (int) crc.getValue());
            MemoryRecords malformed = MemoryRecords.readableRecords(bad);
            assertThat(malformed.batches().iterator().next()).satisfies(b -> assertThat(((DefaultRecordBatch) b).isValid()).isTrue());

            assertError(() -> log.appendAsLeader(malformed, 0, UnifiedLog.AppendOrigin.CLIENT), ErrorCode.CORRUPT_MESSAGE);
        }
        assertThat(log.logEndOffset()).isZero();
        log.appendAsLeader(TestRecords.batch(CompressionType.LZ4, time.milliseconds(), "fine"), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThat(log.logEndOffset()).isEqualTo(1);
    }

    @Test
    void invalidBatchesGetKafkasErrorCodes() throws IOException {
        MemoryRecords corrupt = TestRecords.batch(time.milliseconds(), "a");
        ByteBuffer bytes = corrupt.buffer();
        bytes.put(bytes.limit() - 1, (byte) (bytes.get(bytes.limit() - 1) ^ 0x7f));
        assertError(() -> log.appendAsLeader(MemoryRecords.readableRecords(bytes), 0, UnifiedLog.AppendOrigin.CLIENT), ErrorCode.CORRUPT_MESSAGE);

        UnifiedLog small = reopen(LogConfig.of(Map.of(), Map.of(LogConfig.MAX_MESSAGE_BYTES, "100")), true);
        assertError(() -> small.appendAsLeader(TestRecords.batch(time.milliseconds(), "x".repeat(200)), 0, UnifiedLog.AppendOrigin.CLIENT),
            ErrorCode.MESSAGE_TOO_LARGE);

        UnifiedLog compacted = reopen(LogConfig.of(Map.of(), Map.of(LogConfig.CLEANUP_POLICY, "compact")), true);
        MemoryRecords noKey = new RecordBatchBuilder(CompressionType.LZ4, io.strata.protocol.records.TimestampType.CREATE_TIME, 0)
            .append(time.milliseconds(), null, "v".getBytes(StandardCharsets.UTF_8)).build();
        assertError(() -> compacted.appendAsLeader(noKey, 0, UnifiedLog.AppendOrigin.CLIENT), ErrorCode.INVALID_RECORD);

        UnifiedLog future = reopen(LogConfig.defaults(), true);
        assertError(() -> future.appendAsLeader(TestRecords.batch(time.milliseconds() + 7_200_000L, "late"), 0, UnifiedLog.AppendOrigin.CLIENT),
            ErrorCode.INVALID_TIMESTAMP);
        assertThat(future.logEndOffset()).isZero();
    }

    @Test
    void retriedIdempotentBatchesAreNotAppendedTwice() throws IOException {
        MemoryRecords first = TestRecords.idempotentBatch(42L, (short) 0, 0, time.milliseconds(), "a", "b");
        MemoryRecords retry = TestRecords.copy(first);
        LogAppendInfo appended = log.appendAsLeader(first, 0, UnifiedLog.AppendOrigin.CLIENT);
        log.appendAsLeader(TestRecords.idempotentBatch(42L, (short) 0, 2, time.milliseconds(), "c"), 0, UnifiedLog.AppendOrigin.CLIENT);
        LogAppendInfo duplicate = log.appendAsLeader(retry, 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThat(duplicate.duplicate()).isTrue();
        assertThat(duplicate.firstOffset()).isEqualTo(appended.firstOffset());
        assertThat(duplicate.lastOffset()).isEqualTo(appended.lastOffset());
        assertThat(log.logEndOffset()).isEqualTo(3);
        assertThat(readAll(log)).containsExactly("a", "b", "c");
    }

    @Test
    void sequenceGapsAndStaleEpochsAreRefused() throws IOException {
        log.appendAsLeader(TestRecords.idempotentBatch(7L, (short) 3, 0, time.milliseconds(), "a"), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertError(() -> log.appendAsLeader(TestRecords.idempotentBatch(7L, (short) 3, 5, time.milliseconds(), "gap"), 0,
            UnifiedLog.AppendOrigin.CLIENT), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
        assertError(() -> log.appendAsLeader(TestRecords.idempotentBatch(7L, (short) 2, 1, time.milliseconds(), "old"), 0,
            UnifiedLog.AppendOrigin.CLIENT), ErrorCode.INVALID_PRODUCER_EPOCH);
        assertError(() -> log.appendAsLeader(TestRecords.idempotentBatch(7L, (short) 4, 1, time.milliseconds(), "new-epoch"), 0,
            UnifiedLog.AppendOrigin.CLIENT), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
        log.appendAsLeader(TestRecords.idempotentBatch(7L, (short) 4, 0, time.milliseconds(), "b"), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThat(readAll(log)).containsExactly("a", "b");
    }

    @Test
    void producerStateSurvivesRestartSoDuplicatesAreStillDetected() throws IOException {
        MemoryRecords batch = TestRecords.idempotentBatch(42L, (short) 1, 0, time.milliseconds(), "a");
        MemoryRecords retry = TestRecords.copy(batch);
        log.appendAsLeader(batch, 0, UnifiedLog.AppendOrigin.CLIENT);
        reopen(log.config(), true);
        assertThat(log.appendAsLeader(retry, 0, UnifiedLog.AppendOrigin.CLIENT).duplicate()).isTrue();
        reopen(log.config(), false);
        assertThat(log.appendAsLeader(TestRecords.idempotentBatch(42L, (short) 1, 1, time.milliseconds(), "b"), 0,
            UnifiedLog.AppendOrigin.CLIENT).firstOffset()).isEqualTo(1);
    }

    @Test
    void abortedTransactionsAreIndexedAndBoundTheLastStableOffset() throws IOException {
        log.appendAsLeader(TestRecords.transactionalBatch(5L, (short) 0, 0, time.milliseconds(), "t1"), 0, UnifiedLog.AppendOrigin.CLIENT);
        log.appendAsLeader(TestRecords.batch(time.milliseconds(), "plain"), 0, UnifiedLog.AppendOrigin.CLIENT);
        log.updateHighWatermark(log.logEndOffset());
        assertThat(log.lastStableOffset()).isZero();
        log.appendMarker(RecordBatchBuilder.endTransactionMarker(0, time.milliseconds(), 0, 5L, (short) 0,
            new EndTransactionMarker(ControlRecordType.ABORT, 1)), 0);
        log.updateHighWatermark(log.logEndOffset());
        assertThat(log.lastStableOffset()).isEqualTo(3);
        FetchDataInfo committed = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, false);
        assertThat(committed.abortedTransactions()).containsExactly(new AbortedTxn(5L, 0, 2, 3));
        reopen(log.config(), false);
        assertThat(log.collectAbortedTransactions(0, 10)).containsExactly(new AbortedTxn(5L, 0, 2, 3));
    }

    private void abort(long producerId) throws IOException {
        log.appendMarker(RecordBatchBuilder.endTransactionMarker(0, time.milliseconds(), 0, producerId, (short) 0,
            new EndTransactionMarker(ControlRecordType.ABORT, 1)), 0);
    }

    /**
     * Offset 0: producer 999's transaction, open until the end (offset 203). Offsets 1-2: producer
     * 1's aborted transaction. Offsets 3-202: 100 more aborted transactions, one after the other.
     */
    private void appendAbortedTransactionsAfterALongOne() throws IOException {
        log.appendAsLeader(TestRecords.transactionalBatch(999L, (short) 0, 0, time.milliseconds(), "long"), 0, UnifiedLog.AppendOrigin.CLIENT);
        for (long producerId = 1; producerId <= 101; producerId++) {
            log.appendAsLeader(TestRecords.transactionalBatch(producerId, (short) 0, 0, time.milliseconds(), "p" + producerId), 0,
                UnifiedLog.AppendOrigin.CLIENT);
            abort(producerId);
        }
        abort(999L);
        log.updateHighWatermark(log.logEndOffset());
        assertThat(log.lastStableOffset()).isEqualTo(204);
    }

    @Test
    void aReadCommittedFetchReturnsOnlyTheAbortedTransactionsOverlappingTheRangeItReturns() throws IOException {
        appendAbortedTransactionsAfterALongOne();
        // One batch (offset 1): producer 1's transaction and the long one overlap it, the 100 after it do not.
        FetchDataInfo one = log.read(1, 1, FetchIsolation.TXN_COMMITTED, true);
        assertThat(values(one)).containsExactly("p1");
        assertThat(one.abortedTransactions()).extracting(AbortedTxn::producerId).containsExactlyInAnyOrder(1L, 999L);
        // From offset 3, room for about two transactions: those two and the long one.
        FetchDataInfo two = log.read(3, TestRecords.transactionalBatch(2L, (short) 0, 0, time.milliseconds(), "p2").sizeInBytes() * 3,
            FetchIsolation.TXN_COMMITTED, false);
        assertThat(two.abortedTransactions()).extracting(AbortedTxn::producerId).containsExactlyInAnyOrder(2L, 3L, 999L);
        // Everything: every aborted transaction.
        assertThat(log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, false).abortedTransactions()).hasSize(102);
    }

    @Test
    void truncationRemovesTheSuffixAndAppendsContinue() throws IOException {
        reopen(LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, "300")), true);
        for (int i = 0; i < 30; i++) {
            log.appendAsLeader(TestRecords.batch(time.milliseconds(), "v" + i), i / 10, UnifiedLog.AppendOrigin.CLIENT);
        }
        log.truncateTo(15);
        assertThat(log.logEndOffset()).isEqualTo(15);
        assertThat(log.leaderEpochCache().latestEpoch()).hasValue(1);
        log.appendAsLeader(TestRecords.batch(time.milliseconds(), "after"), 3, UnifiedLog.AppendOrigin.CLIENT);
        List<String> all = readAll(log);
        assertThat(all).hasSize(16).endsWith("v14", "after");
        reopen(log.config(), false);
        assertThat(readAll(log)).isEqualTo(all);
    }

    @Test
    void retentionDeletesWholeOldSegmentsOnly() throws IOException {
        reopen(LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, "300", LogConfig.RETENTION_MS, "60000",
            LogConfig.FILE_DELETE_DELAY_MS, "0")), true);
        for (int i = 0; i < 20; i++) {
            log.appendAsLeader(TestRecords.batch(time.milliseconds(), "old" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        time.advance(120_000);
        for (int i = 0; i < 3; i++) {
            log.appendAsLeader(TestRecords.batch(time.milliseconds(), "new" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        log.updateHighWatermark(log.logEndOffset());
        int segmentsBefore = log.numberOfSegments();
        assertThat(log.deleteOldSegments()).isPositive();
        assertThat(log.numberOfSegments()).isLessThan(segmentsBefore);
        List<String> remaining = readAll(log);
        assertThat(remaining).endsWith("new0", "new1", "new2").noneMatch(v -> v.equals("old0"));
        assertThat(log.logStartOffset()).isEqualTo(20 - remaining.size() + 3);
    }

    @Test
    void retentionBySizeKeepsTheNewestData() throws IOException {
        reopen(LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, "300", LogConfig.RETENTION_BYTES, "700",
            LogConfig.FILE_DELETE_DELAY_MS, "0")), true);
        for (int i = 0; i < 40; i++) {
            log.appendAsLeader(TestRecords.batch(time.milliseconds(), "v" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        log.updateHighWatermark(log.logEndOffset());
        log.deleteOldSegments();
        assertThat(log.size()).isLessThanOrEqualTo(700 + 300);
        assertThat(readAll(log)).endsWith("v39");
    }

    @Test
    void deleteRecordsMovesTheLogStartOffset() throws IOException {
        for (int i = 0; i < 5; i++) {
            log.appendAsLeader(TestRecords.batch(time.milliseconds(), "v" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        log.updateHighWatermark(5);
        assertThat(log.maybeIncrementLogStartOffset(3)).isTrue();
        assertThat(log.logStartOffset()).isEqualTo(3);
        assertError(() -> log.read(2, 100, FetchIsolation.HIGH_WATERMARK, false), ErrorCode.OFFSET_OUT_OF_RANGE);
        assertError(() -> log.maybeIncrementLogStartOffset(9), ErrorCode.OFFSET_OUT_OF_RANGE);
    }

    @Test
    void recoveryTruncatesATornTailAndKeepsEveryCompleteBatch() throws IOException {
        for (int i = 0; i < 10; i++) {
            log.appendAsLeader(TestRecords.batch(time.milliseconds(), "v" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        Path segmentFile = log.activeSegment().log().file();
        // Simulate a crash: no clean close, and garbage after the last complete batch.
        log = null;
        Files.write(segmentFile, new byte[] {0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0, 2, 7, 7},
            java.nio.file.StandardOpenOption.APPEND);
        log = open(LogConfig.defaults(), false);
        assertThat(log.logEndOffset()).isEqualTo(10);
        assertThat(readAll(log)).hasSize(10).endsWith("v9");
        assertThat(log.appendAsLeader(TestRecords.batch(time.milliseconds(), "v10"), 0, UnifiedLog.AppendOrigin.CLIENT).firstOffset())
            .isEqualTo(10);
    }

    @Test
    void missingAndCorruptIndexesAreRebuilt() throws IOException {
        reopen(LogConfig.of(Map.of(), Map.of(LogConfig.SEGMENT_BYTES, "400", LogConfig.INDEX_INTERVAL_BYTES, "1")), true);
        for (int i = 0; i < 30; i++) {
            log.appendAsLeader(TestRecords.batch(time.milliseconds() + i, "v" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
        LogSegment first = log.logSegments().iterator().next();
        Path index = first.offsetIndex().file();
        Path timeIndex = first.timeIndex().file();
        log.close();
        Files.delete(index);
        Files.write(timeIndex, new byte[Files.readAllBytes(timeIndex).length]);
        log = open(log.config(), true);
        assertThat(readAll(log)).hasSize(30);
        for (int offset = 0; offset < 30; offset++) {
            assertThat(values(log.read(offset, 1, FetchIsolation.LOG_END, true))).first().isEqualTo("v" + offset);
        }
        assertThat(log.fetchOffsetByTimestamp(time.milliseconds() + 5).offset()).isEqualTo(5);
    }

    private static void assertError(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, ErrorCode expected) {
        assertThatThrownBy(call).isInstanceOf(ErrorCodeException.class)
            .extracting(e -> ((ErrorCodeException) e).error()).isEqualTo(expected);
    }
}
