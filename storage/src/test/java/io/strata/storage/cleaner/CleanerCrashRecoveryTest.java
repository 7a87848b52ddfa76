package io.strata.storage.cleaner;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.storage.FetchIsolation;
import io.strata.storage.LogConfig;
import io.strata.storage.LogSegment;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import io.strata.storage.cleaner.CleanerTestSupport.KeyValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.UncheckedIOException;
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
import static io.strata.storage.cleaner.CleanerTestSupport.cleanOnce;
import static io.strata.storage.cleaner.CleanerTestSupport.cleaner;
import static io.strata.storage.cleaner.CleanerTestSupport.compactConfig;
import static io.strata.storage.cleaner.CleanerTestSupport.fetchAll;
import static io.strata.storage.cleaner.CleanerTestSupport.latestValues;
import static io.strata.storage.cleaner.CleanerTestSupport.rollAndCommit;
import static io.strata.storage.cleaner.CleanerTestSupport.storedRecords;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A crash at every point of a compaction's swap leaves a directory that loads into a consistent
 * log: no offset stored twice, no leftover temporary files, every key's latest value present,
 * the same log end, and a log that can be cleaned again. Crashes are simulated by stopping the
 * swap after a step (the {@link UnifiedLog.SwapObserver} throws) and abandoning the log without
 * closing it; some cases then rename files back to model a crash in the middle of a step.
 * Each crashed directory is loaded twice: with the recovery point at the log end (only the
 * segments whose indexes were dropped are rebuilt) and at 0 (everything is recovered).
 */
class CleanerCrashRecoveryTest {
    private static final int MAP_BYTES = 1 << 20;

    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<UnifiedLog> reopened = new ArrayList<>();

    /** Where the crash happens; {@code occurrence} counts swaps (groups), from 1. */
    enum Crash {
        BEFORE_RENAME_TO_SWAP(UnifiedLog.SwapStep.CLEANED_WRITTEN, 1, false),
        AFTER_RENAME_TO_SWAP(UnifiedLog.SwapStep.RENAMED_TO_SWAP, 1, true),
        AFTER_ONLY_THE_LOG_FILE_WAS_RENAMED_TO_SWAP(UnifiedLog.SwapStep.RENAMED_TO_SWAP, 1, true),
        AFTER_OLD_SEGMENTS_WERE_DELETED(UnifiedLog.SwapStep.OLD_SEGMENTS_DELETED, 1, true),
        AFTER_SOME_OLD_SEGMENTS_WERE_DELETED(UnifiedLog.SwapStep.OLD_SEGMENTS_DELETED, 1, true),
        AFTER_ONLY_THE_LOG_FILE_WAS_RENAMED_FROM_SWAP(UnifiedLog.SwapStep.OLD_SEGMENTS_DELETED, 1, true),
        IN_THE_SECOND_GROUP_AFTER_RENAME_TO_SWAP(UnifiedLog.SwapStep.RENAMED_TO_SWAP, 2, true);

        final UnifiedLog.SwapStep step;
        final int occurrence;
        final boolean committed;

        Crash(UnifiedLog.SwapStep step, int occurrence, boolean committed) {
            this.step = step;
            this.occurrence = occurrence;
            this.committed = committed;
        }
    }

    private static final class SimulatedCrash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SimulatedCrash(UnifiedLog.SwapStep step) {
            super("simulated crash after " + step, null, false, false);
        }
    }

    @AfterEach
    void closeLogs() throws IOException {
        for (UnifiedLog log : reopened) {
            if (!log.isClosed()) {
                log.close();
            }
        }
        scheduler.shutdownNow();
    }

    /** Segments of about five batches, grouped about six to a cleaned segment. */
    private static LogConfig config() {
        return compactConfig(Map.of(LogConfig.SEGMENT_BYTES, "3000"));
    }

    private List<KeyValue> writeLog(UnifiedLog log, Random random) throws IOException {
        List<KeyValue> written = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String key = "key-" + random.nextInt(30);
            String value = random.nextInt(12) == 0 ? null : "value-" + i;
            // Keys written once keep something in every segment, so a cleaned group spans the segments it replaces.
            String other = i % 3 == 0 ? "unique-" + i : "filler-" + (i % 7);
            long offset = append(log, batch(CompressionType.NONE, time.milliseconds(), key, value, other, "f" + i));
            written.add(new KeyValue(offset, key, value));
            written.add(new KeyValue(offset + 1, other, "f" + i));
            if (i % 5 == 4) {
                log.roll(log.logEndOffset());
            }
        }
        rollAndCommit(log);
        return written;
    }

    @ParameterizedTest
    @EnumSource(Crash.class)
    void aCrashDuringTheSwapRecoversToAConsistentLog(Crash crash) throws IOException {
        Path crashedDir = dataDir.resolve("crashed").resolve(CleanerTestSupport.TP.toString());
        UnifiedLog log = CleanerTestSupport.open(crashedDir, config(), time, scheduler, true);
        List<KeyValue> written = writeLog(log, new Random(crash.ordinal() + 11));
        long logEnd = log.logEndOffset();
        long sizeBefore = log.size();
        int[] swaps = {0};
        Cleaner crashing = cleaner(time, MAP_BYTES, step -> {
            if (step == UnifiedLog.SwapStep.CLEANED_WRITTEN) {
                swaps[0]++;
            }
            if (step == crash.step && swaps[0] == crash.occurrence) {
                throw new SimulatedCrash(step);
            }
        });

        assertThatThrownBy(() -> cleanOnce(crashing, log, 0, time)).isInstanceOf(SimulatedCrash.class);
        // The process "dies" here: the log is abandoned, not closed.
        modelAMidStepCrash(crash, crashedDir);

        for (long recoveryPoint : new long[] {logEnd, 0}) {
            Path copy = copyOf(crashedDir, "recovered-from-" + recoveryPoint);
            UnifiedLog recovered = load(copy, recoveryPoint);
            assertThat(fileNames(recovered.dir())).as("no leftovers of the interrupted swap").noneMatch(name ->
                name.endsWith(LogSegment.CLEANED_SUFFIX) || name.endsWith(LogSegment.SWAP_SUFFIX) || name.endsWith(LogSegment.DELETED_SUFFIX));
            assertConsistent(recovered, written, logEnd);
            if (crash.committed) {
                assertThat(recovered.size()).as("the committed group stays compacted").isLessThan(sizeBefore);
            } else {
                assertThat(storedRecords(recovered)).containsExactlyElementsOf(written);
            }
            // The recovered log cleans like any other.
            cleanOnce(cleaner(time, MAP_BYTES), recovered, 0, time);
            assertConsistent(recovered, written, logEnd);
            Map<String, Long> lastOffsets = new HashMap<>();
            for (KeyValue record : storedRecords(recovered)) {
                assertThat(lastOffsets.put(record.key(), record.offset())).as("key %s is stored once after a clean", record.key()).isNull();
            }
        }
    }

    /** Renames files back to where a crash inside the step (rather than after it) would have left them. */
    private static void modelAMidStepCrash(Crash crash, Path dir) throws IOException {
        switch (crash) {
            case AFTER_ONLY_THE_LOG_FILE_WAS_RENAMED_TO_SWAP -> {
                for (Path file : filesEndingWith(dir, LogSegment.SWAP_SUFFIX)) {
                    if (!file.toString().endsWith(LogSegment.LOG_SUFFIX + LogSegment.SWAP_SUFFIX)) {
                        rename(file, LogSegment.SWAP_SUFFIX, LogSegment.CLEANED_SUFFIX);
                    }
                }
            }
            case AFTER_SOME_OLD_SEGMENTS_WERE_DELETED -> {
                // Every other replaced segment (the first one, sharing the swap's base offset, among them) was not renamed yet.
                List<Long> deletedBases = filesEndingWith(dir, LogSegment.LOG_SUFFIX + LogSegment.DELETED_SUFFIX).stream()
                    .map(CleanerCrashRecoveryTest::baseOffsetOf).sorted().toList();
                assertThat(deletedBases).hasSizeGreaterThan(2);
                for (int i = 0; i < deletedBases.size(); i += 2) {
                    for (Path file : filesEndingWith(dir, LogSegment.DELETED_SUFFIX)) {
                        if (baseOffsetOf(file) == deletedBases.get(i)) {
                            rename(file, LogSegment.DELETED_SUFFIX, "");
                        }
                    }
                }
            }
            case AFTER_ONLY_THE_LOG_FILE_WAS_RENAMED_FROM_SWAP -> {
                for (Path file : filesEndingWith(dir, LogSegment.LOG_SUFFIX + LogSegment.SWAP_SUFFIX)) {
                    rename(file, LogSegment.SWAP_SUFFIX, "");
                }
            }
            default -> {
            }
        }
    }

    private UnifiedLog load(Path dir, long recoveryPoint) throws IOException {
        UnifiedLog log = UnifiedLog.load(dir, new TopicPartition("compacted", 0), config(), time, scheduler,
            new UnifiedLog.LoadParams(0, recoveryPoint, false, 86_400_000L, false));
        reopened.add(log);
        log.updateHighWatermark(log.logEndOffset());
        return log;
    }

    private static void assertConsistent(UnifiedLog log, List<KeyValue> written, long logEnd) throws IOException {
        assertOffsetsStrictlyIncrease(log);
        assertThat(log.logEndOffset()).isEqualTo(logEnd);
        List<KeyValue> stored = storedRecords(log);
        Map<Long, KeyValue> byOffset = new HashMap<>();
        written.forEach(record -> byOffset.put(record.offset(), record));
        assertThat(stored).as("only records that were written, at their offsets").allMatch(record -> record.equals(byOffset.get(record.offset())));
        assertThat(latestValues(stored)).isEqualTo(latestValues(written));
        assertThat(fetchAll(log, FetchIsolation.HIGH_WATERMARK)).containsExactlyElementsOf(stored);
    }

    private static Path copyOf(Path dir, String name) throws IOException {
        Path copy = dir.getParent().getParent().resolve(name).resolve(dir.getFileName());
        Files.createDirectories(copy);
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) {
                try {
                    Files.copy(file, copy.resolve(file.getFileName()));
                } catch (java.nio.file.NoSuchFileException renamedMeanwhile) {
                    // A producer snapshot's temp file, renamed or removed by the log's background write
                    // while the directory is copied: a crash at that moment leaves either state.
                }
            }
        }
        return copy;
    }

    private static List<Path> filesEndingWith(Path dir, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(suffix)).toList();
        }
    }

    private static List<String> fileNames(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(file -> file.getFileName().toString()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long baseOffsetOf(Path file) {
        String name = file.getFileName().toString();
        return Long.parseLong(name.substring(0, name.indexOf('.')));
    }

    private static void rename(Path file, String oldSuffix, String newSuffix) throws IOException {
        String name = file.getFileName().toString();
        Files.move(file, file.resolveSibling(name.substring(0, name.length() - oldSuffix.length()) + newSuffix));
    }
}
