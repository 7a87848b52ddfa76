package io.strata.storage.cleaner;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.FileRecords;
import io.strata.storage.LogAppendInfo;
import io.strata.storage.LogConfig;
import io.strata.storage.LogSegment;
import io.strata.storage.ProducerStateEntry;
import io.strata.storage.UnifiedLog;
import io.strata.storage.cleaner.CleanerTestSupport.KeyValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Stream;

import static io.strata.storage.cleaner.CleanerTestSupport.append;
import static io.strata.storage.cleaner.CleanerTestSupport.assertOffsetsStrictlyIncrease;
import static io.strata.storage.cleaner.CleanerTestSupport.batch;
import static io.strata.storage.cleaner.CleanerTestSupport.bytes;
import static io.strata.storage.cleaner.CleanerTestSupport.cleanOnce;
import static io.strata.storage.cleaner.CleanerTestSupport.cleaner;
import static io.strata.storage.cleaner.CleanerTestSupport.compactConfig;
import static io.strata.storage.cleaner.CleanerTestSupport.fetchAll;
import static io.strata.storage.cleaner.CleanerTestSupport.latestValues;
import static io.strata.storage.cleaner.CleanerTestSupport.rollAndCommit;
import static io.strata.storage.cleaner.CleanerTestSupport.storedBatches;
import static io.strata.storage.cleaner.CleanerTestSupport.storedRecords;
import static io.strata.storage.cleaner.CleanerTestSupport.string;
import static org.assertj.core.api.Assertions.assertThat;

class CleanerTest {
    private static final int MAP_BYTES = 1 << 20;

    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<UnifiedLog> opened = new ArrayList<>();

    @AfterEach
    void closeLogs() throws IOException {
        for (UnifiedLog log : opened) {
            if (!log.isClosed()) {
                log.close();
            }
        }
        scheduler.shutdownNow();
    }

    private UnifiedLog open(String name, LogConfig config) throws IOException {
        UnifiedLog log = CleanerTestSupport.open(dataDir.resolve(name), config, time, scheduler, true);
        opened.add(log);
        return log;
    }

    /**
     * Writes {@code batches} random batches of 1-4 records over {@code keys} keys, about one value
     * in ten a tombstone, in a mix of compression types; returns what was written.
     */
    private List<KeyValue> writeRandom(UnifiedLog log, Random random, int batches, int keys) throws IOException {
        CompressionType[] compressions = {CompressionType.NONE, CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4};
        List<KeyValue> written = new ArrayList<>();
        for (int i = 0; i < batches; i++) {
            int records = 1 + random.nextInt(4);
            String[] keyValues = new String[records * 2];
            for (int j = 0; j < records; j++) {
                keyValues[2 * j] = "key-" + random.nextInt(keys);
                keyValues[2 * j + 1] = random.nextInt(10) == 0 ? null : "value-" + i + "-" + j;
            }
            long first = append(log, batch(compressions[random.nextInt(compressions.length)], time.milliseconds(), keyValues));
            for (int j = 0; j < records; j++) {
                written.add(new KeyValue(first + j, keyValues[2 * j], keyValues[2 * j + 1]));
            }
            time.advance(1);
        }
        return written;
    }

    /** What one pass over [0, endOffset) keeps: each key's last record there (tombstones too, on a first pass), and everything after. */
    private static List<KeyValue> expectedAfterFirstPass(List<KeyValue> written, long endOffset) {
        Map<String, Long> lastOffset = new HashMap<>();
        for (KeyValue record : written) {
            if (record.offset() < endOffset) {
                lastOffset.put(record.key(), record.offset());
            }
        }
        return written.stream().filter(record -> record.offset() >= endOffset || lastOffset.get(record.key()) == record.offset()).toList();
    }

    @Test
    void compactionKeepsExactlyTheLatestValueOfEveryKey() throws IOException {
        for (int seed = 1; seed <= 3; seed++) {
            Random random = new Random(seed);
            UnifiedLog log = open("seed-" + seed, compactConfig(Map.of()));
            List<KeyValue> written = writeRandom(log, random, 600, 40);
            assertThat(log.numberOfSegments()).as("the test needs several segments").isGreaterThan(5);
            long sizeBefore = log.size();

            Cleaner.Result result = cleanOnce(cleaner(time, MAP_BYTES), log, 0, time);

            assertThat(result.nextDirtyOffset()).isEqualTo(log.activeSegment().baseOffset());
            List<KeyValue> expected = expectedAfterFirstPass(written, result.nextDirtyOffset());
            assertThat(storedRecords(log)).as("seed %d", seed).containsExactlyElementsOf(expected);
            assertThat(fetchAll(log, FetchIsolation.HIGH_WATERMARK)).as("seed %d", seed).containsExactlyElementsOf(expected);
            assertThat(latestValues(storedRecords(log))).isEqualTo(latestValues(written));
            assertThat(log.size()).isLessThan(sizeBefore);
            assertOffsetsStrictlyIncrease(log);
            assertThat(log.logEndOffset()).isEqualTo(written.get(written.size() - 1).offset() + 1);
            assertThat(result.stats().recordsWritten()).isLessThan(result.stats().recordsRead());
        }
    }

    @Test
    void readsByOffsetFindTheNextSurvivingRecord() throws IOException {
        UnifiedLog log = open("reads", compactConfig(Map.of()));
        List<KeyValue> written = writeRandom(log, new Random(7), 300, 20);
        Cleaner.Result result = cleanOnce(cleaner(time, MAP_BYTES), log, 0, time);
        List<KeyValue> expected = expectedAfterFirstPass(written, result.nextDirtyOffset());

        for (KeyValue original : written) {
            long offset = original.offset();
            KeyValue ceiling = expected.stream().filter(record -> record.offset() >= offset).findFirst().orElseThrow();
            assertThat(firstRecordFrom(log, offset)).as("read at offset %d", offset).isEqualTo(ceiling);
        }
    }

    @Test
    void theActiveSegmentIsNeverCleaned() throws IOException {
        UnifiedLog log = open("active", compactConfig(Map.of()));
        writeRandom(log, new Random(3), 200, 10);
        // Duplicates only in the active segment.
        for (int i = 0; i < 5; i++) {
            append(log, batch(CompressionType.NONE, time.milliseconds(), "hot", "v" + i));
        }
        LogSegment active = log.activeSegment();
        byte[] activeBytes = Files.readAllBytes(active.log().file());

        cleanOnce(cleaner(time, MAP_BYTES), log, 0, time);

        assertThat(log.activeSegment()).isSameAs(active);
        assertThat(Files.readAllBytes(active.log().file())).isEqualTo(activeBytes);
        assertThat(storedRecords(log).stream().filter(record -> record.key().equals("hot")).map(KeyValue::value))
            .containsExactly("v0", "v1", "v2", "v3", "v4");
    }

    @Test
    void tombstonesAreRemovedOnlyDeleteRetentionAfterTheyWereFirstCleaned() throws IOException {
        UnifiedLog log = open("tombstones", compactConfig(Map.of(LogConfig.DELETE_RETENTION_MS, "1000")));
        Cleaner cleaner = cleaner(time, MAP_BYTES);
        append(log, batch(CompressionType.NONE, time.milliseconds(), "gone", "v1", "kept", "v2"));
        long tombstoneTimestamp = time.milliseconds();
        long tombstoneOffset = append(log, batch(CompressionType.NONE, tombstoneTimestamp, "gone", null));
        rollAndCommit(log);
        long firstCleanMs = time.milliseconds();

        long dirty = cleanOnce(cleaner, log, 0, time).nextDirtyOffset();
        assertThat(storedRecords(log)).containsExactly(new KeyValue(1, "kept", "v2"), new KeyValue(tombstoneOffset, "gone", null));
        DefaultRecordBatch stamped = storedBatches(log).stream().filter(batch -> batch.lastOffset() == tombstoneOffset).findFirst().orElseThrow();
        assertThat(stamped.deleteHorizonMs()).hasValue(firstCleanMs + 1000);
        assertThat(stamped.records().get(0).timestamp()).as("record timestamps survive the new base timestamp").isEqualTo(tombstoneTimestamp);

        time.advance(999);
        append(log, batch(CompressionType.NONE, time.milliseconds(), "other", "x"));
        rollAndCommit(log);
        dirty = cleanOnce(cleaner, log, dirty, time).nextDirtyOffset();
        assertThat(latestValues(storedRecords(log))).containsEntry("gone", null);

        time.advance(1);
        append(log, batch(CompressionType.NONE, time.milliseconds(), "other", "y"));
        rollAndCommit(log);
        cleanOnce(cleaner, log, dirty, time);
        assertThat(storedRecords(log)).extracting(KeyValue::key).doesNotContain("gone");
        assertThat(latestValues(storedRecords(log))).containsEntry("kept", "v2").containsEntry("other", "y");
        assertOffsetsStrictlyIncrease(log);
    }

    @Test
    void aFullOffsetMapCleansInSeveralPassesUntilEveryKeyIsUnique() throws IOException {
        UnifiedLog log = open("small-map", compactConfig(Map.of()));
        List<KeyValue> written = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            for (int key = 0; key < 60; key++) {
                long offset = append(log, batch(CompressionType.NONE, time.milliseconds(), "key-" + key, "round-" + round));
                written.add(new KeyValue(offset, "key-" + key, "round-" + round));
            }
        }
        rollAndCommit(log);
        // 23 slots: at most 20 keys per pass.
        Cleaner cleaner = cleaner(time, 23 * OffsetMap.ENTRY_BYTES);
        long dirty = 0;
        int passes = 0;
        while (dirty < log.activeSegment().baseOffset()) {
            long next = cleanOnce(cleaner, log, dirty, time).nextDirtyOffset();
            assertThat(next).as("every pass makes progress").isGreaterThan(dirty);
            dirty = next;
            passes++;
        }
        assertThat(passes).isGreaterThan(1);
        List<KeyValue> stored = storedRecords(log);
        assertThat(stored).hasSize(60);
        assertThat(latestValues(stored)).isEqualTo(latestValues(written));
        assertThat(stored).allMatch(record -> record.value().equals("round-2"));
    }

    @Test
    void abortedTransactionalDataIsRemovedAndCommittedDataKept() throws IOException {
        UnifiedLog log = open("txn", compactConfig(Map.of()));
        long aborting = 1000L;
        long committing = 2000L;
        appendTransactional(log, aborting, 0, "k1", "aborted-1", "k2", "aborted-2");
        appendTransactional(log, committing, 0, "k3", "committed-3");
        appendMarker(log, aborting, ControlRecordType.ABORT);
        appendMarker(log, committing, ControlRecordType.COMMIT);
        append(log, batch(CompressionType.NONE, time.milliseconds(), "k4", "plain-4"));
        rollAndCommit(log);
        assertThat(log.collectAbortedTransactions(0, log.logEndOffset())).hasSize(1);

        cleanOnce(cleaner(time, MAP_BYTES), log, 0, time);

        assertThat(fetchAll(log, FetchIsolation.TXN_COMMITTED)).extracting(KeyValue::value).containsExactly("committed-3", "plain-4");
        // The aborted producer's batch is its last data batch: it stays, emptied, for its sequence.
        DefaultRecordBatch abortedBatch = storedBatches(log).stream().filter(batch -> batch.producerId() == aborting && !batch.isControlBatch())
            .findFirst().orElseThrow();
        assertThat(abortedBatch.recordCount()).isZero();
        assertThat(abortedBatch.isTransactional()).isTrue();
        assertThat(abortedBatch.lastOffset()).isEqualTo(1);
        // Both markers stay while their transactions had batches in this pass; the abort keeps its index entry.
        assertThat(storedBatches(log).stream().filter(DefaultRecordBatch::isControlBatch).count()).isEqualTo(2);
        assertThat(log.collectAbortedTransactions(0, log.logEndOffset())).hasSize(1);
        assertThat(log.lastStableOffset()).isEqualTo(log.logEndOffset());
    }

    @Test
    void anAbortMarkerGoesOnceItsDataIsGoneAndItsDeleteHorizonHasPassed() throws IOException {
        UnifiedLog log = open("markers", compactConfig(Map.of(LogConfig.DELETE_RETENTION_MS, "1000")));
        Cleaner cleaner = cleaner(time, MAP_BYTES);
        long producerId = 3000L;
        appendTransactional(log, producerId, 0, "k1", "aborted");
        long abortMarker = appendMarker(log, producerId, ControlRecordType.ABORT);
        appendTransactional(log, producerId, 1, "k2", "committed");
        appendMarker(log, producerId, ControlRecordType.COMMIT);
        append(log, batch(CompressionType.NONE, time.milliseconds(), "filler", "0"));
        rollAndCommit(log);

        // Pass 1 removes the aborted data; the marker stays since this pass saw its data.
        long dirty = cleanOnce(cleaner, log, 0, time).nextDirtyOffset();
        assertThat(storedRecords(log)).extracting(KeyValue::value).containsExactly("committed", "0");
        assertThat(markerAt(log, abortMarker)).isNotNull();

        // Pass 2 finds no data of the aborted transaction: the marker gets a delete horizon.
        append(log, batch(CompressionType.NONE, time.milliseconds(), "filler", "1"));
        rollAndCommit(log);
        long secondPassMs = time.milliseconds();
        dirty = cleanOnce(cleaner, log, dirty, time).nextDirtyOffset();
        assertThat(markerAt(log, abortMarker).deleteHorizonMs()).hasValue(secondPassMs + 1000);

        // Pass 3, after the horizon, removes it and its transaction index entry.
        time.advance(1000);
        append(log, batch(CompressionType.NONE, time.milliseconds(), "filler", "2"));
        rollAndCommit(log);
        cleanOnce(cleaner, log, dirty, time);
        assertThat(markerAt(log, abortMarker)).isNull();
        assertThat(log.collectAbortedTransactions(0, log.logEndOffset())).isEmpty();
        assertThat(storedRecords(log)).extracting(KeyValue::value).containsExactly("committed", "2");
        assertThat(log.lastStableOffset()).isEqualTo(log.logEndOffset());
    }

    @Test
    void anIdempotentProducersLastSequenceSurvivesCompactionAndRebuildsAfterReopen() throws IOException {
        LogConfig config = compactConfig(Map.of());
        UnifiedLog log = open("idempotent", config);
        long producerId = 5000L;
        short epoch = 0;
        append(log, idempotentBatch(producerId, epoch, 0, "k1", "p0"));
        long lastOffset = append(log, idempotentBatch(producerId, epoch, 1, "k2", "p1"));
        // Another writer supersedes both of the producer's records.
        append(log, batch(CompressionType.NONE, time.milliseconds(), "k1", "n1", "k2", "n2"));
        rollAndCommit(log);

        cleanOnce(cleaner(time, MAP_BYTES), log, 0, time);

        assertThat(storedRecords(log)).extracting(KeyValue::value).containsExactly("n1", "n2");
        List<DefaultRecordBatch> producerBatches = storedBatches(log).stream().filter(batch -> batch.producerId() == producerId).toList();
        assertThat(producerBatches).hasSize(1);
        assertThat(producerBatches.get(0).recordCount()).isZero();
        assertThat(producerBatches.get(0).baseSequence()).isEqualTo(1);
        assertThat(producerBatches.get(0).lastOffset()).isEqualTo(lastOffset);

        // Rebuild producer state from the log alone.
        log.close();
        try (Stream<Path> files = Files.list(log.dir())) {
            for (Path snapshot : files.filter(file -> file.toString().endsWith(".snapshot")).toList()) {
                Files.delete(snapshot);
            }
        }
        UnifiedLog reopened = CleanerTestSupport.open(log.dir(), config, time, scheduler, false);
        opened.add(reopened);
        ProducerStateEntry entry = reopened.producerState().lastEntry(producerId);
        assertThat(entry).isNotNull();
        assertThat(entry.lastSeq()).isEqualTo(1);

        LogAppendInfo duplicate = reopened.appendAsLeader(idempotentBatch(producerId, epoch, 1, "k2", "p1"), 0,
            UnifiedLog.AppendOrigin.CLIENT);
        assertThat(duplicate.duplicate()).isTrue();
        assertThat(duplicate.firstOffset()).isEqualTo(lastOffset);
        LogAppendInfo next = reopened.appendAsLeader(idempotentBatch(producerId, epoch, 2, "k3", "p2"), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThat(next.duplicate()).isFalse();
        assertThat(next.firstOffset()).isEqualTo(reopened.logEndOffset() - 1);
    }

    @Test
    void segmentsAreGroupedSoThatEachGroupFitsOneSegment() throws IOException {
        UnifiedLog log = open("groups", compactConfig(Map.of(LogConfig.SEGMENT_BYTES, "100000")));
        for (int i = 0; i < 40; i++) {
            append(log, batch(CompressionType.NONE, time.milliseconds(), "key-" + i, "value-" + i));
            if (i % 4 == 3) {
                log.roll(log.logEndOffset());
            }
        }
        List<LogSegment> segments = log.nonActiveLogSegmentsFrom(0);
        int segmentBytes = segments.stream().mapToInt(LogSegment::size).max().orElseThrow();
        List<List<LogSegment>> groups = Cleaner.groupSegmentsBySize(segments, 3 * segmentBytes, Integer.MAX_VALUE, log.logEndOffset());
        assertThat(groups).hasSize(4);
        assertThat(groups).allSatisfy(group -> assertThat(group.stream().mapToLong(LogSegment::size).sum()).isLessThanOrEqualTo(3L * segmentBytes));
        assertThat(groups.stream().flatMap(List::stream).toList()).containsExactlyElementsOf(segments);
        // The offset range of a group must fit an int relative to its base.
        assertThat(Cleaner.groupSegmentsBySize(segments, Integer.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE)).hasSize(2);
    }

    /**
     * The first record at or after {@code offset}, fetched as a consumer does: a fetch may return
     * batches whose surviving records all lie before the offset, and the next fetch starts after
     * the last batch returned.
     */
    private static KeyValue firstRecordFrom(UnifiedLog log, long offset) {
        long fetchOffset = offset;
        while (fetchOffset < log.highWatermark()) {
            FetchDataInfo info = log.read(fetchOffset, 1 << 20, FetchIsolation.HIGH_WATERMARK, true);
            ByteBuffer fetched = ((FileRecords) info.records()).readAll();
            for (RecordBatch entry : MemoryRecords.readableRecords(fetched).batches()) {
                for (Record record : ((DefaultRecordBatch) entry).records()) {
                    if (record.offset() >= offset) {
                        return new KeyValue(record.offset(), string(record.key()), string(record.value()));
                    }
                }
                fetchOffset = entry.lastOffset() + 1;
            }
        }
        return null;
    }

    private MemoryRecords idempotentBatch(long producerId, short epoch, int sequence, String key, String value) {
        return new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .producerState(producerId, epoch, sequence, false)
            .append(time.milliseconds(), bytes(key), bytes(value), List.of())
            .build();
    }

    private void appendTransactional(UnifiedLog log, long producerId, int sequence, String... keyValues) throws IOException {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .producerState(producerId, (short) 0, sequence, true);
        for (int i = 0; i < keyValues.length; i += 2) {
            builder.append(time.milliseconds(), bytes(keyValues[i]), bytes(keyValues[i + 1]), List.of());
        }
        append(log, builder.build());
    }

    private long appendMarker(UnifiedLog log, long producerId, ControlRecordType type) throws IOException {
        MemoryRecords marker = RecordBatchBuilder.endTransactionMarker(0L, time.milliseconds(), 0, producerId, (short) 0,
            new EndTransactionMarker(type, 0));
        long offset = log.appendMarker(marker, 0).firstOffset();
        log.updateHighWatermark(log.logEndOffset());
        return offset;
    }

    private static DefaultRecordBatch markerAt(UnifiedLog log, long offset) {
        return storedBatches(log).stream().filter(batch -> batch.isControlBatch() && batch.baseOffset() == offset).findFirst().orElse(null);
    }
}
