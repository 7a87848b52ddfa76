package io.strata.storage.cleaner;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.FileRecords;
import io.strata.storage.LogConfig;
import io.strata.storage.LogSegment;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;

/** Logs, records and checks shared by the cleaner tests. */
final class CleanerTestSupport {
    static final TopicPartition TP = new TopicPartition("compacted", 0);

    private CleanerTestSupport() {
    }

    /** One record as stored: its offset, key and value (null for a tombstone). */
    record KeyValue(long offset, String key, String value) {
    }

    /** A compacted topic's config with small segments, plus {@code overrides}. */
    static LogConfig compactConfig(Map<String, String> overrides) {
        Map<String, String> topic = new HashMap<>();
        topic.put(LogConfig.CLEANUP_POLICY, "compact");
        topic.put(LogConfig.SEGMENT_BYTES, "2048");
        topic.put(LogConfig.INDEX_INTERVAL_BYTES, "256");
        topic.put(LogConfig.FILE_DELETE_DELAY_MS, "3600000");
        topic.put(LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0.01");
        topic.putAll(overrides);
        return LogConfig.of(Map.of(), topic);
    }

    static UnifiedLog open(Path dir, LogConfig config, MockTime time, ScheduledExecutorService scheduler, boolean cleanShutdown)
        throws IOException {
        return UnifiedLog.load(dir, TP, config, time, scheduler, new UnifiedLog.LoadParams(0, 0, cleanShutdown, 86_400_000L, false));
    }

    static ByteBuffer bytes(String text) {
        return text == null ? null : ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    static String string(ByteBuffer buffer) {
        return buffer == null ? null : StandardCharsets.UTF_8.decode(buffer).toString();
    }

    /** A batch of plain (non-idempotent) records; {@code keyValues} alternates key, value (null value: tombstone). */
    static MemoryRecords batch(CompressionType compression, long timestampMs, String... keyValues) {
        RecordBatchBuilder builder = new RecordBatchBuilder(compression, TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < keyValues.length; i += 2) {
            builder.append(timestampMs, bytes(keyValues[i]), bytes(keyValues[i + 1]), List.of());
        }
        return builder.build();
    }

    /** Appends as the leader and moves the high watermark to the log end (one replica). */
    static long append(UnifiedLog log, MemoryRecords records) throws IOException {
        long first = log.appendAsLeader(records, 0, UnifiedLog.AppendOrigin.CLIENT).firstOffset();
        log.updateHighWatermark(log.logEndOffset());
        return first;
    }

    /** Every record stored in the log, read segment by segment straight from the files. */
    static List<KeyValue> storedRecords(UnifiedLog log) {
        List<KeyValue> records = new ArrayList<>();
        for (LogSegment segment : log.logSegments()) {
            for (FileRecords.FileBatch header : segment.log().batchesFrom(0)) {
                DefaultRecordBatch batch = header.load();
                batch.ensureValid();
                if (batch.isControlBatch()) {
                    continue;
                }
                for (Record record : batch.records()) {
                    records.add(new KeyValue(record.offset(), string(record.key()), string(record.value())));
                }
            }
        }
        return records;
    }

    /** Every batch stored in the log, in order. */
    static List<DefaultRecordBatch> storedBatches(UnifiedLog log) {
        List<DefaultRecordBatch> batches = new ArrayList<>();
        for (LogSegment segment : log.logSegments()) {
            for (FileRecords.FileBatch header : segment.log().batchesFrom(0)) {
                batches.add(header.load());
            }
        }
        return batches;
    }

    /** Every record, read through {@link UnifiedLog#read} from the log start to the log end, as a consumer would. */
    static List<KeyValue> fetchAll(UnifiedLog log, FetchIsolation isolation) {
        List<KeyValue> records = new ArrayList<>();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            FetchDataInfo info = log.read(offset, 1 << 16, isolation, true);
            if (!(info.records() instanceof FileRecords slice)) {
                break; // nothing readable at or after offset below the bound
            }
            ByteBuffer fetched = slice.readAll();
            long next = offset;
            for (RecordBatch entry : MemoryRecords.readableRecords(fetched).batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                next = batch.lastOffset() + 1;
                if (batch.isControlBatch()) {
                    continue;
                }
                for (Record record : batch.records()) {
                    if (record.offset() >= offset) {
                        records.add(new KeyValue(record.offset(), string(record.key()), string(record.value())));
                    }
                }
            }
            if (next == offset) {
                break; // nothing readable at or after offset below the bound
            }
            offset = next;
        }
        return records;
    }

    /** The latest value of every key (tombstoned keys map to null). */
    static Map<String, String> latestValues(List<KeyValue> records) {
        Map<String, String> latest = new LinkedHashMap<>();
        for (KeyValue record : records) {
            latest.put(record.key(), record.value());
        }
        return latest;
    }

    /** Every offset strictly increases across the whole log: no offset is stored twice. */
    static void assertOffsetsStrictlyIncrease(UnifiedLog log) {
        long previous = -1;
        for (DefaultRecordBatch batch : storedBatches(log)) {
            assertThat(batch.baseOffset()).as("batch %s follows offset %d", batch, previous).isGreaterThan(previous);
            assertThat(batch.lastOffset()).isGreaterThanOrEqualTo(batch.baseOffset());
            previous = batch.lastOffset();
        }
    }

    /** Makes every segment cleanable: the active one is rolled away. */
    static void rollAndCommit(UnifiedLog log) throws IOException {
        log.roll(log.logEndOffset());
        log.updateHighWatermark(log.logEndOffset());
    }

    /** A cleaner with a map of {@code mapBytes} that never aborts. */
    static Cleaner cleaner(MockTime time, int mapBytes) {
        return cleaner(time, mapBytes, UnifiedLog.SwapObserver.NONE);
    }

    static Cleaner cleaner(MockTime time, int mapBytes, UnifiedLog.SwapObserver observer) {
        return new Cleaner(new OffsetMap(mapBytes), 0.9, 64 * 1024, time, Cleaner.AbortCheck.NEVER, observer);
    }

    /** Cleans the whole cleanable range of {@code log} once, as the cleaner thread would, starting at {@code firstDirtyOffset}. */
    static Cleaner.Result cleanOnce(Cleaner cleaner, UnifiedLog log, long firstDirtyOffset, MockTime time) throws IOException {
        LogCleanerManager.OffsetsToClean offsets = LogCleanerManager.cleanableOffsets(log, firstDirtyOffset, time.milliseconds());
        LogToClean cleanable = LogToClean.of(log, offsets.firstDirtyOffset(), offsets.firstUncleanableDirtyOffset(), false);
        return cleaner.clean(cleanable, time.milliseconds());
    }
}
