package io.strata.storage.cleaner;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.FileRecords;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.LogSegment;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import io.strata.storage.cleaner.CleanerTestSupport.KeyValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static io.strata.storage.cleaner.CleanerTestSupport.append;
import static io.strata.storage.cleaner.CleanerTestSupport.assertOffsetsStrictlyIncrease;
import static io.strata.storage.cleaner.CleanerTestSupport.batch;
import static io.strata.storage.cleaner.CleanerTestSupport.cleanOnce;
import static io.strata.storage.cleaner.CleanerTestSupport.cleaner;
import static io.strata.storage.cleaner.CleanerTestSupport.compactConfig;
import static io.strata.storage.cleaner.CleanerTestSupport.latestValues;
import static io.strata.storage.cleaner.CleanerTestSupport.rollAndCommit;
import static io.strata.storage.cleaner.CleanerTestSupport.storedRecords;
import static io.strata.storage.cleaner.CleanerTestSupport.string;
import static org.assertj.core.api.Assertions.assertThat;

/** The cleaner threads as the log manager runs them, and readers racing the swaps. */
class LogCleanerTest {
    private static final long WAIT_MS = 30_000;

    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();

    private LogManager logManager(boolean cleanerEnabled) throws IOException {
        CleanerConfig cleanerConfig = new CleanerConfig(cleanerEnabled, 1, 1 << 20, 0.9, 64 * 1024, 5);
        LogManager manager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L,
            false), cleanerConfig, time);
        manager.startup(topic -> LogConfig.defaults());
        return manager;
    }

    private static void waitUntil(BooleanSupplier condition, String description) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting until %s", description).isLessThan(deadline);
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    @Test
    void theCleanerThreadCompactsTheCompactedLogsOfTheLogManager() throws IOException {
        try (LogManager manager = logManager(true)) {
            TopicPartition tp = new TopicPartition("compacted", 0);
            assertThat(manager.cleaner()).as("no compacted log yet").isNull();
            UnifiedLog log = manager.getOrCreateLog(tp, Optional.empty(), compactConfig(Map.of()));
            assertThat(manager.cleaner()).isNotNull();
            assertThat(manager.cleaner().isRunning()).isTrue();
            List<KeyValue> written = new ArrayList<>();
            Random random = new Random(5);
            for (int i = 0; i < 300; i++) {
                String key = "key-" + random.nextInt(25);
                long offset = append(log, batch(CompressionType.NONE, time.milliseconds(), key, "value-" + i));
                written.add(new KeyValue(offset, key, "value-" + i));
            }
            rollAndCommit(log);
            long end = log.logEndOffset();

            waitUntil(() -> manager.cleaner().manager().allCleanerCheckpoints().getOrDefault(tp, 0L) >= end, "the log is cleaned");

            List<KeyValue> stored = storedRecords(log);
            assertThat(stored).hasSize(25);
            assertThat(latestValues(stored)).isEqualTo(latestValues(written));
            assertOffsetsStrictlyIncrease(log);
            assertThat(Files.readString(dataDir.resolve(LogCleanerManager.CLEANER_CHECKPOINT_FILE))).contains("compacted 0 " + end);

            manager.deleteLog(tp);
            assertThat(manager.cleaner().manager().allCleanerCheckpoints()).doesNotContainKey(tp);
        }
    }

    @Test
    void noCleanerRunsWithoutACompactedLogOrWhenDisabled() throws IOException {
        try (LogManager manager = logManager(true)) {
            manager.getOrCreateLog(new TopicPartition("plain", 0), Optional.empty(), LogConfig.defaults());
            assertThat(manager.cleaner()).isNull();
        }
        try (LogManager manager = logManager(false)) {
            manager.getOrCreateLog(new TopicPartition("compacted", 0), Optional.empty(), compactConfig(Map.of()));
            assertThat(manager.cleaner()).isNull();
        }
    }

    /**
     * A writer appends, a cleaner cleans over and over, and readers fetch from random offsets
     * all the while: every fetch must succeed, find a record at or after its offset, and return
     * exactly the bytes that were written at each offset it returns.
     */
    @Test
    void readersNeverSeeAMissingOrHalfWrittenSegmentWhileSegmentsAreSwapped() throws Exception {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        UnifiedLog log = CleanerTestSupport.open(dataDir.resolve("raced"), compactConfig(Map.of()), time, scheduler, true);
        Map<Long, KeyValue> written = new ConcurrentHashMap<>();
        // Offsets of keys written once: compaction never removes them, so a fetch there must return them.
        List<Long> sentinels = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger passes = new AtomicInteger();
        AtomicInteger reads = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < 50; i++) {
            long offset = append(log, batch(CompressionType.NONE, time.milliseconds(), "key-" + i % 10, "seed-" + i));
            written.put(offset, new KeyValue(offset, "key-" + i % 10, "seed-" + i));
        }

        Thread writer = new Thread(() -> guard(failures, stop, () -> {
            Random random = new Random(1);
            for (int i = 0; !stop.get(); i++) {
                // Pace the writer to the cleaner, so that the log (and each pass) stays small.
                while (!stop.get() && i > 300 * (passes.get() + 1)) {
                    Thread.yield();
                }
                String key = i % 10 == 0 ? "unique-" + i : "key-" + random.nextInt(10);
                long offset = log.appendAsLeader(batch(CompressionType.NONE, time.milliseconds(), key, "value-" + i), 0,
                    UnifiedLog.AppendOrigin.CLIENT).firstOffset();
                // Recorded before readers may see it: they read up to the high watermark.
                written.put(offset, new KeyValue(offset, key, "value-" + i));
                log.updateHighWatermark(log.logEndOffset());
                if (key.startsWith("unique-")) {
                    sentinels.add(offset);
                }
            }
        }), "writer");
        Thread cleanerThread = new Thread(() -> guard(failures, stop, () -> {
            Cleaner cleaner = cleaner(time, 1 << 20);
            while (!stop.get()) {
                if (cleanOnce(cleaner, log, 0, time).stats().segmentGroups() > 0) {
                    passes.incrementAndGet();
                }
            }
        }), "cleaner");
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            long seed = r;
            readers.add(new Thread(() -> guard(failures, stop, () -> {
                Random random = new Random(seed);
                while (!stop.get()) {
                    long highWatermark = log.highWatermark();
                    long offset = (long) (random.nextDouble() * highWatermark);
                    verifyFetch(log, offset, written);
                    if (!sentinels.isEmpty()) {
                        long sentinel = sentinels.get(random.nextInt(sentinels.size()));
                        assertThat(verifyFetch(log, sentinel, written)).as("a fetch at a record that is never compacted away")
                            .isEqualTo(sentinel);
                    }
                    reads.incrementAndGet();
                }
            }), "reader-" + r));
        }
        writer.start();
        cleanerThread.start();
        readers.forEach(Thread::start);
        try {
            waitUntil(() -> !failures.isEmpty() || (passes.get() >= 20 && reads.get() >= 1000),
                "20 swaps and 1000 reads (now " + passes.get() + " and " + reads.get() + ")");
        } finally {
            stop.set(true);
            writer.join();
            cleanerThread.join();
            for (Thread reader : readers) {
                reader.join();
            }
        }
        try {
            assertThat(failures).isEmpty();
            assertOffsetsStrictlyIncrease(log);
        } finally {
            log.close();
            scheduler.shutdownNow();
        }
    }

    /**
     * Fetches from {@code offset} until a record at or after it turns up, checking everything
     * returned against what was written; returns that record's offset.
     */
    private static long verifyFetch(UnifiedLog log, long offset, Map<Long, KeyValue> written) {
        long fetchOffset = offset;
        long bound = log.highWatermark();
        while (fetchOffset < bound) {
            FetchDataInfo info = log.read(fetchOffset, 64 * 1024, FetchIsolation.HIGH_WATERMARK, true);
            assertThat(info.records()).as("a fetch at %d below the high watermark %d returns data", fetchOffset, bound)
                .isInstanceOf(FileRecords.class);
            ByteBuffer fetched = ((FileRecords) info.records()).readAll();
            MemoryRecords records = MemoryRecords.readableRecords(fetched);
            assertThat(records.validBytes()).as("the fetch at %d ends with a whole batch", fetchOffset).isEqualTo(records.sizeInBytes());
            long found = -1;
            for (RecordBatch entry : records.batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                batch.ensureValid();
                for (Record record : batch.records()) {
                    KeyValue read = new KeyValue(record.offset(), string(record.key()), string(record.value()));
                    assertThat(read).isEqualTo(written.get(record.offset()));
                    if (found < 0 && record.offset() >= offset) {
                        found = record.offset();
                    }
                }
                fetchOffset = batch.lastOffset() + 1;
            }
            if (found >= 0) {
                return found;
            }
        }
        throw new AssertionError("no record at or after offset " + offset + " below the high watermark " + bound);
    }

    private interface Body {
        void run() throws Exception;
    }

    private static void guard(ConcurrentLinkedQueue<Throwable> failures, AtomicBoolean stop, Body body) {
        try {
            body.run();
        } catch (Throwable t) {
            failures.add(t);
            stop.set(true);
        }
    }

    @Test
    void aSwapIsRefusedWhenTheLogChangedUnderTheCleaner() throws IOException {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        UnifiedLog log = CleanerTestSupport.open(dataDir.resolve("changed"), compactConfig(Map.of()), time, scheduler, true);
        try {
            for (int i = 0; i < 100; i++) {
                append(log, batch(CompressionType.NONE, time.milliseconds(), "key-" + i % 10, "value-" + i));
            }
            rollAndCommit(log);
            List<LogSegment> segments = log.nonActiveLogSegmentsFrom(0);
            long truncations = log.truncationCount();

            // Retention (after DeleteRecords) deleted the first segment while it was being cleaned.
            LogSegment cleaned = emptyCleanedSegment(log, segments.get(0).baseOffset());
            log.maybeIncrementLogStartOffset(segments.get(1).baseOffset());
            log.deleteOldSegments();
            assertThat(log.replaceSegments(cleaned, segments.subList(0, 2), truncations, UnifiedLog.SwapObserver.NONE)).isFalse();
            cleaned.deleteIfExists();

            // A truncation happened while the second segment was being cleaned.
            cleaned = emptyCleanedSegment(log, segments.get(1).baseOffset());
            log.truncateTo(log.logEndOffset() - 1);
            assertThat(log.replaceSegments(cleaned, segments.subList(1, 3), truncations, UnifiedLog.SwapObserver.NONE)).isFalse();
            cleaned.deleteIfExists();

            // Nothing was swapped; the log still reads and cleans.
            assertOffsetsStrictlyIncrease(log);
            try (var files = Files.list(log.dir())) {
                assertThat(files.map(file -> file.getFileName().toString())).noneMatch(name -> name.endsWith(LogSegment.SWAP_SUFFIX));
            }
            cleanOnce(cleaner(time, 1 << 20), log, log.logStartOffset(), time);
            assertOffsetsStrictlyIncrease(log);
        } finally {
            log.close();
            scheduler.shutdownNow();
        }
    }

    private LogSegment emptyCleanedSegment(UnifiedLog log, long baseOffset) throws IOException {
        return LogSegment.open(log.dir(), baseOffset, log.config(), time, 0L, LogSegment.CLEANED_SUFFIX);
    }
}
