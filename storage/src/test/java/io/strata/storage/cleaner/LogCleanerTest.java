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

    /** Starts at the real time: a segment without records is judged by its file time, which the file system sets. */
    private final MockTime time = new MockTime(io.strata.common.Time.SYSTEM.milliseconds());

    private LogManager logManager(boolean cleanerEnabled) throws IOException {
        return logManager(cleanerEnabled, 5);
    }

    private LogManager logManager(boolean cleanerEnabled, long backoffMs) throws IOException {
        CleanerConfig cleanerConfig = new CleanerConfig(cleanerEnabled, 1, 1 << 20, 0.9, 64 * 1024, backoffMs);
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

    private String describe(UnifiedLog log) {
        StringBuilder out = new StringBuilder("now=" + time.milliseconds() + " start=" + log.logStartOffset() + " end=" + log.logEndOffset()
            + " hw=" + log.highWatermark() + " segments=");
        for (LogSegment segment : log.logSegments()) {
            try {
                out.append('[').append(segment.baseOffset()).append(" size=").append(segment.size()).append(" largestTs=")
                    .append(segment.largestTimestamp()).append(']');
            } catch (IOException e) {
                out.append(e);
            }
        }
        return out.toString();
    }

    private static long cleanedUpTo(LogManager manager, TopicPartition topicPartition) {
        return manager.cleaner().manager().allCleanerCheckpoints().getOrDefault(topicPartition, 0L);
    }

    private List<KeyValue> fill(UnifiedLog log, int records, long seed) throws IOException {
        List<KeyValue> written = new ArrayList<>();
        Random random = new Random(seed);
        for (int i = 0; i < records; i++) {
            String key = "key-" + random.nextInt(25);
            long offset = append(log, batch(CompressionType.NONE, time.milliseconds(), key, "value-" + i));
            written.add(new KeyValue(offset, key, "value-" + i));
        }
        return written;
    }

    /**
     * The cleaner thread idles for a whole minute of backoff once it finds nothing to clean; a
     * log that then rolls its segment (and commits it) is still cleaned within the test's wait,
     * which is shorter than that backoff: the roll woke the thread.
     */
    @Test
    void aRolledSegmentWakesAnIdleCleanerBeforeItsBackoffEnds() throws IOException {
        try (LogManager manager = logManager(true, 60_000)) {
            TopicPartition tp = new TopicPartition("compacted", 0);
            UnifiedLog log = manager.getOrCreateLog(tp, Optional.empty(), compactConfig(Map.of()));
            fill(log, 200, 3);
            rollAndCommit(log);
            long end = log.logEndOffset();
            waitUntil(() -> cleanedUpTo(manager, tp) >= end, "the log is cleaned well inside the 60 s backoff");
            assertThat(storedRecords(log)).hasSize(25);
        }
    }

    /**
     * One partition's cleaning throws (an Error, the worst case: the old thread died of it with
     * the cleaner still reported running). That partition is marked uncleanable with the reason;
     * the other partitions are still compacted by the same, still living, thread; and retention
     * (retention.ms of cleanup.policy=compact,delete) still runs for all three, the uncleanable
     * one included.
     */
    @Test
    void aPartitionWhoseCleaningFailsIsMarkedUncleanableWhileTheOthersAreCompactedAndRetentionRunsForAll() throws IOException {
        try (LogManager manager = logManager(true)) {
            LogConfig config = compactConfig(Map.of(LogConfig.CLEANUP_POLICY, "compact,delete", LogConfig.RETENTION_MS, "60000"));
            TopicPartition faulty = new TopicPartition("faulty", 0);
            List<TopicPartition> healthy = List.of(new TopicPartition("healthy", 0), new TopicPartition("healthy", 1));
            UnifiedLog faultyLog = manager.getOrCreateLog(faulty, Optional.empty(), config);
            manager.cleaner().setCleaningHookForTesting(new LogCleaner.CleaningHook() {
                @Override
                public void beforeCleaning(TopicPartition topicPartition) {
                    if (topicPartition.equals(faulty)) {
                        throw new AssertionError("injected fault");
                    }
                }
            });
            List<UnifiedLog> logs = new ArrayList<>(List.of(faultyLog));
            for (TopicPartition tp : healthy) {
                logs.add(manager.getOrCreateLog(tp, Optional.empty(), config));
            }
            for (UnifiedLog log : logs) {
                fill(log, 300, log.topicPartition().hashCode());
                rollAndCommit(log);
            }
            LogCleanerManager cleanerManager = manager.cleaner().manager();
            waitUntil(() -> cleanerManager.isUncleanable(faulty), "the faulty partition is marked uncleanable");
            for (TopicPartition tp : healthy) {
                long end = manager.getLog(tp).logEndOffset();
                waitUntil(() -> cleanedUpTo(manager, tp) >= end, tp + " is cleaned");
                assertThat(storedRecords(manager.getLog(tp))).hasSize(25);
            }
            assertThat(storedRecords(faultyLog)).as("the faulty partition was not compacted").hasSize(300);
            Map<TopicPartition, String> uncleanable = cleanerManager.uncleanablePartitions(dataDir);
            assertThat(uncleanable).containsOnlyKeys(faulty);
            assertThat(uncleanable.get(faulty)).contains("injected fault").contains("thread 0");
            assertThat(cleanerManager.uncleanableBytes(dataDir, time.milliseconds())).isPositive();
            assertThat(manager.cleaner().failureCount()).isPositive();
            assertThat(manager.cleaner().aliveThreadCount()).as("the cleaner thread lives on").isEqualTo(1);
            assertThat(manager.cleaner().deadThreadCount()).isZero();

            time.advance(120_000);
            manager.cleaner().wakeUp();
            for (UnifiedLog log : logs) {
                long end = log.logEndOffset();
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
                while (log.logStartOffset() != end) {
                    assertThat(System.nanoTime()).as("retention deletes the expired segments of %s: %s", log.topicPartition(), describe(log))
                        .isLessThan(deadline);
                    Thread.yield();
                }
            }
            assertThat(manager.cleaner().deadThreadCount()).isZero();
            assertThat(manager.cleaner().aliveThreadCount()).isEqualTo(1);
        }
    }

    /**
     * Reconfiguration replaces the threads (1 → 2 → 4 → 2 → 1) while a writer keeps six logs
     * dirty: after each change exactly the new threads run under Kafka-style names, no partition
     * is ever cleaned by two threads at once (watched by the cleaning hook), nothing fails, and
     * every log ends up compacted with the latest value of each key.
     */
    @Test
    void reconfigureReplacesTheThreadsAndNoPartitionIsEverCleanedByTwoThreads() throws Exception {
        try (LogManager manager = logManager(true)) {
            List<UnifiedLog> logs = new ArrayList<>();
            logs.add(manager.getOrCreateLog(new TopicPartition("many", 0), Optional.empty(), compactConfig(Map.of())));
            java.util.Set<TopicPartition> cleaning = ConcurrentHashMap.newKeySet();
            ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
            AtomicInteger passes = new AtomicInteger();
            manager.cleaner().setCleaningHookForTesting(new LogCleaner.CleaningHook() {
                @Override
                public void beforeCleaning(TopicPartition topicPartition) {
                    if (!cleaning.add(topicPartition)) {
                        violations.add(topicPartition + " cleaned by two threads at once");
                    }
                    Thread.yield();
                }

                @Override
                public void afterCleaning(TopicPartition topicPartition) {
                    cleaning.remove(topicPartition);
                    passes.incrementAndGet();
                }
            });
            for (int i = 1; i < 6; i++) {
                logs.add(manager.getOrCreateLog(new TopicPartition("many", i), Optional.empty(), compactConfig(Map.of())));
            }
            Map<TopicPartition, List<KeyValue>> written = new ConcurrentHashMap<>();
            logs.forEach(log -> written.put(log.topicPartition(), new java.util.concurrent.CopyOnWriteArrayList<>()));
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            Thread writer = new Thread(() -> guard(failures, stop, () -> {
                Random random = new Random(11);
                for (int round = 0; !stop.get(); round++) {
                    UnifiedLog log = logs.get(round % logs.size());
                    for (int i = 0; i < 20; i++) {
                        String key = "key-" + random.nextInt(25);
                        long offset = append(log, batch(CompressionType.NONE, time.milliseconds(), key, "value-" + round + "-" + i));
                        written.get(log.topicPartition()).add(new KeyValue(offset, key, "value-" + round + "-" + i));
                    }
                    rollAndCommit(log);
                }
            }), "writer");
            writer.start();
            try {
                for (int threads : new int[] {2, 4, 2, 1}) {
                    int passesBefore = passes.get();
                    manager.reconfigureCleaner(new CleanerConfig(true, threads, 1 << 20, 0.9, 64 * 1024, 5 + threads));
                    List<String> expected = new ArrayList<>();
                    for (int i = 0; i < threads; i++) {
                        expected.add(LogCleaner.THREAD_NAME_PREFIX + i);
                    }
                    assertThat(manager.cleaner().aliveThreadNames()).containsExactlyElementsOf(expected);
                    assertThat(manager.cleaner().config().numThreads()).isEqualTo(threads);
                    assertThat(manager.cleaner().config().backoffMs()).isEqualTo(5 + threads);
                    waitUntil(() -> passes.get() >= passesBefore + 10, "the new threads clean");
                }
            } finally {
                stop.set(true);
                writer.join();
            }
            assertThat(failures).isEmpty();
            for (UnifiedLog log : logs) {
                long end = log.logEndOffset();
                waitUntil(() -> cleanedUpTo(manager, log.topicPartition()) >= end, log.topicPartition() + " is cleaned");
                assertThat(latestValues(storedRecords(log))).isEqualTo(latestValues(written.get(log.topicPartition())));
                assertOffsetsStrictlyIncrease(log);
            }
            assertThat(violations).isEmpty();
            assertThat(manager.cleaner().failureCount()).isZero();
            assertThat(manager.cleaner().deadThreadCount()).isZero();
            long liveCleanerThreads = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(LogCleaner.THREAD_NAME_PREFIX) && thread.isAlive()).count();
            assertThat(liveCleanerThreads).as("the replaced threads have ended").isEqualTo(1);
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
