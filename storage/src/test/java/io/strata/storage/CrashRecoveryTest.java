package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Crash tests with a real process: {@link CrashWriterMain} appends sequence-numbered batches
 * in a child JVM and is killed with SIGKILL at a seeded-random point of its progress; the log
 * is then opened as after an unclean shutdown and must be
 * <ul>
 *   <li>a valid prefix of what was written: records 0..n-1 at offsets 0..n-1 in CRC-valid
 *       batches, nothing after the last batch of any segment;</li>
 *   <li>at least as long as the last offset the child reported flushed, and as the last
 *       append it reported (a killed process loses nothing the kernel already has), and at
 *       most one batch longer;</li>
 *   <li>consistent: index lookups by offset and by timestamp find every record, the leader
 *       epoch cache matches the batches, an idempotent producer's last batch is recognised
 *       as a duplicate and its next sequence is accepted;</li>
 *   <li>writable: appends continue at the log end and survive a clean restart.</li>
 * </ul>
 * Each seed picks the flush policy, segment and index sizes, compression and producer
 * type, how many times to crash (a later child recovers the directory the killed one left
 * and goes on writing) and where to kill. The seed fixes the scenario; where exactly in
 * the append loop the kill lands depends on timing, so a failing seed reruns the same
 * scenario, not necessarily the same kill. A bug found here gets a deterministic regression
 * test (see {@link LogCorruptionRecoveryTest#recoveryFromTheMiddleOfTheLogKeepsTheLeaderEpochStartOffsets}).
 */
class CrashRecoveryTest {
    private static final long FIRST_SEED = 7_001L;
    private static final int ITERATIONS = 30;
    /** Generous: a cold child JVM on a busy 2-core machine; normally each run takes well under a second. */
    private static final long CHILD_PROGRESS_DEADLINE_MS = 60_000L;
    private static final long KILL_DEADLINE_MS = 10_000L;
    /**
     * The kill comes up to this long after the progress condition is seen, so that it does not
     * always land just after the child printed a line but anywhere in its append loop (one
     * loop takes some microseconds to a millisecond).
     */
    private static final int MAX_KILL_DELAY_NS = 3_000_000;
    private static final int LOOKUP_SAMPLES = 64;
    private static final int RECORDS_APPENDED_AFTER_RECOVERY = 3;

    @TempDir
    Path tempDir;

    static LongStream seeds() {
        return LongStream.range(FIRST_SEED, FIRST_SEED + ITERATIONS);
    }

    /** What one seed chooses. */
    private record Scenario(long flushMessages, int segmentBytes, int segmentIndexBytes, int indexIntervalBytes,
                            CompressionType compression, boolean idempotent, int flushEveryBatches, int lives, long killAfterRecords,
                            int killAfterFlushes, long killDelayNs, int maxRecordsPerBatch, boolean checkpointedRecoveryPointIsLastFlush) {
        static Scenario random(Random random) {
            return new Scenario(
                pick(random, List.of(1L, 10L, 100L, 1_000L, Long.MAX_VALUE)),
                pick(random, List.of(16 * 1024, 64 * 1024, 64 * 1024)),
                pick(random, List.of(4 * 1024, 10 * 1024 * 1024)),
                pick(random, List.of(1, 512, 4096)),
                pick(random, List.of(CompressionType.values())),
                random.nextBoolean(),
                pick(random, List.of(1, 10, 50, 250)),
                pick(random, List.of(1, 1, 2, 3)),
                200 + random.nextInt(8_000),
                1 + random.nextInt(4),
                random.nextInt(MAX_KILL_DELAY_NS),
                pick(random, List.of(16, 16, 128)),
                random.nextBoolean());
        }

        List<String> childArgs(Path dir, long seed) {
            return List.of(dir.toString(), Long.toString(seed), Long.toString(flushMessages), Integer.toString(segmentBytes),
                Integer.toString(segmentIndexBytes), Integer.toString(indexIntervalBytes), compression.name(),
                Boolean.toString(idempotent), Integer.toString(flushEveryBatches), Integer.toString(maxRecordsPerBatch));
        }

        LogConfig logConfig() {
            return LogConfig.of(Map.of(), Map.of(
                LogConfig.FLUSH_MESSAGES, Long.toString(flushMessages),
                LogConfig.SEGMENT_BYTES, Integer.toString(segmentBytes),
                LogConfig.SEGMENT_INDEX_BYTES, Integer.toString(segmentIndexBytes),
                LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(indexIntervalBytes)));
        }

        private static <T> T pick(Random random, List<T> choices) {
            return choices.get(random.nextInt(choices.size()));
        }
    }

    /** What one child reported on stdout; updated by the reader thread, waited on by the test. */
    private static final class Progress {
        private long recovered = -1L;
        private long lastAppended = -1L;
        private long lastFlushed = -1L;
        private int flushes;
        private boolean ended;

        synchronized void onLine(String line) {
            if (line.startsWith(CrashWriterMain.RECOVERED)) {
                recovered = Long.parseLong(line.substring(CrashWriterMain.RECOVERED.length()));
                lastAppended = recovered;
            } else if (line.startsWith(CrashWriterMain.APPENDED)) {
                lastAppended = Long.parseLong(line.substring(CrashWriterMain.APPENDED.length()));
            } else if (line.startsWith(CrashWriterMain.FLUSHED)) {
                long flushed = Long.parseLong(line.substring(CrashWriterMain.FLUSHED.length()));
                if (flushed < lastFlushed) {
                    throw new AssertionError("the recovery point went back from " + lastFlushed + " to " + flushed);
                }
                if (lastFlushed >= 0) {
                    flushes++; // the first report is the recovery point the child started with
                }
                lastFlushed = flushed;
            }
            notifyAll();
        }

        synchronized void onEnd() {
            ended = true;
            notifyAll();
        }

        private boolean reached(long recordsAfterRecovery, int flushCount) {
            return recovered >= 0 && lastAppended >= recovered + recordsAfterRecovery && flushes >= flushCount;
        }

        /**
         * Waits until the child appended {@code recordsAfterRecovery} records past the log end it
         * recovered to and reported {@code flushCount} flushes; false if it ended or the deadline passed.
         */
        synchronized boolean await(long recordsAfterRecovery, int flushCount, long timeoutMs) throws InterruptedException {
            long deadlineNs = System.nanoTime() + timeoutMs * 1_000_000L;
            while (!reached(recordsAfterRecovery, flushCount) && !ended) {
                long remainingMs = (deadlineNs - System.nanoTime()) / 1_000_000L;
                if (remainingMs <= 0) {
                    return false;
                }
                wait(remainingMs);
            }
            return reached(recordsAfterRecovery, flushCount);
        }

        synchronized long recovered() {
            return recovered;
        }

        synchronized long lastAppended() {
            return lastAppended;
        }

        synchronized long lastFlushed() {
            return Math.max(0, lastFlushed);
        }

        @Override
        public synchronized String toString() {
            return "recovered=" + recovered + ", appended=" + lastAppended + ", flushed=" + lastFlushed + ", flushes=" + flushes
                + ", ended=" + ended;
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void killedWriterRecoversToAValidPrefixHoldingEveryFlushedRecord(long seed) throws Exception {
        Random random = new Random(seed);
        Scenario scenario = Scenario.random(random);
        Path dir = tempDir.resolve("crash-0");
        Progress previous = null;
        Progress progress = null;
        for (int life = 0; life < scenario.lives(); life++) {
            progress = runUntilKilled(scenario, seed + life, dir, life);
            if (previous != null) {
                // The next child recovered what the killed one left: the same bounds as the final check.
                assertThat(progress.recovered()).as("log end recovered by life %d (%s; killed child %s)", life, scenario, previous)
                    .isGreaterThanOrEqualTo(previous.lastFlushed())
                    .isGreaterThanOrEqualTo(previous.lastAppended())
                    .isLessThanOrEqualTo(previous.lastAppended() + scenario.maxRecordsPerBatch());
            }
            previous = progress;
        }

        long checkpointedRecoveryPoint = scenario.checkpointedRecoveryPointIsLastFlush() ? progress.lastFlushed() : 0L;
        MockTime time = new MockTime(SequenceRecords.NOW_MS);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            UnifiedLog log = open(dir, scenario.logConfig(), time, scheduler, checkpointedRecoveryPoint, false);
            long recovered;
            try {
                recovered = verifyRecovered(log, scenario, progress, random);
                MemoryRecords next = SequenceRecords.batch(scenario.compression(), recovered, RECORDS_APPENDED_AFTER_RECOVERY,
                    scenario.idempotent());
                LogAppendInfo appended = log.appendAsLeader(next, lastEpoch(log) + 1, UnifiedLog.AppendOrigin.CLIENT);
                assertThat(appended.firstOffset()).as("first offset after recovery").isEqualTo(recovered);
            } finally {
                log.close();
            }
            UnifiedLog reopened = open(dir, scenario.logConfig(), time, scheduler, 0L, true);
            try {
                assertThat(SequenceRecords.verifyPrefix(reopened)).isEqualTo(recovered + RECORDS_APPENDED_AFTER_RECOVERY);
            } finally {
                reopened.close();
            }
        } finally {
            scheduler.shutdownNow();
        }
    }

    /** Starts a writer on {@code dir} (recovering what is there), lets it make the scenario's progress, and kills it. */
    private Progress runUntilKilled(Scenario scenario, long childSeed, Path dir, int life) throws Exception {
        Progress progress = new Progress();
        long recordsThisLife = Math.max(1, scenario.killAfterRecords() / scenario.lives());
        try (ChildJvm child = ChildJvm.start(CrashWriterMain.class, scenario.childArgs(dir, childSeed),
            tempDir.resolve("child-" + life + ".stderr"), progress::onLine, progress::onEnd)) {
            boolean reached = progress.await(recordsThisLife, scenario.killAfterFlushes(), CHILD_PROGRESS_DEADLINE_MS);
            LockSupport.parkNanos(scenario.killDelayNs());
            child.kill(KILL_DEADLINE_MS);
            child.awaitStdoutClosed(KILL_DEADLINE_MS);
            assertThat(reached).as("progress of child %d before the kill (%s, %s); stderr:%n%s", life, scenario, progress, child.stderr())
                .isTrue();
        }
        return progress;
    }

    private static long verifyRecovered(UnifiedLog log, Scenario scenario, Progress progress, Random random) throws IOException {
        String context = scenario + ", child " + progress;
        long recovered = SequenceRecords.verifyPrefix(log);
        assertThat(recovered).as("records recovered (%s)", context)
            .isGreaterThanOrEqualTo(progress.lastFlushed())
            .isGreaterThanOrEqualTo(progress.lastAppended())
            .isLessThanOrEqualTo(progress.lastAppended() + scenario.maxRecordsPerBatch());
        assertThat(log.recoveryPoint()).as("recovery point after recovery (%s)", context).isEqualTo(recovered);
        SequenceRecords.verifyLookups(log, random, LOOKUP_SAMPLES);
        if (scenario.idempotent() && recovered > 0) {
            verifyProducerStateRecovered(log, scenario, recovered);
        }
        return recovered;
    }

    /** The producer's last batch is a duplicate (answered with its offsets), so retries after the crash are safe. */
    private static void verifyProducerStateRecovered(UnifiedLog log, Scenario scenario, long recovered) throws IOException {
        LogSegment last = log.activeSegment().size() > 0 ? log.activeSegment()
            : log.logSegments().stream().filter(segment -> segment.size() > 0).reduce((first, second) -> second).orElseThrow();
        DefaultRecordBatch lastBatch = null;
        for (FileRecords.FileBatch header : last.log().batchesFrom(0)) {
            lastBatch = header.load();
        }
        assertThat(lastBatch).isNotNull();
        assertThat(lastBatch.lastOffset()).isEqualTo(recovered - 1);
        MemoryRecords retry = SequenceRecords.batch(scenario.compression(), lastBatch.baseOffset(), lastBatch.recordCount(), true);
        LogAppendInfo duplicate = log.appendAsLeader(retry, lastEpoch(log), UnifiedLog.AppendOrigin.CLIENT);
        assertThat(duplicate.duplicate()).as("retry of the last batch %d..%d", lastBatch.baseOffset(), lastBatch.lastOffset()).isTrue();
        assertThat(duplicate.firstOffset()).isEqualTo(lastBatch.baseOffset());
        assertThat(duplicate.lastOffset()).isEqualTo(lastBatch.lastOffset());
        assertThat(log.logEndOffset()).isEqualTo(recovered);
    }

    private static int lastEpoch(UnifiedLog log) {
        return log.leaderEpochCache().latestEpoch().orElse(0);
    }

    private static UnifiedLog open(Path dir, LogConfig config, MockTime time, ScheduledExecutorService scheduler, long recoveryPoint,
                                   boolean cleanShutdown) throws IOException {
        return UnifiedLog.load(dir, new TopicPartition("crash", 0), config, time, scheduler,
            new UnifiedLog.LoadParams(0L, recoveryPoint, cleanShutdown, 86_400_000L, false));
    }
}
