package io.strata.storage.cleaner;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import io.strata.storage.checkpoint.OffsetCheckpointFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static io.strata.storage.cleaner.CleanerTestSupport.batch;
import static io.strata.storage.cleaner.CleanerTestSupport.compactConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LogCleanerManagerTest {
    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<UnifiedLog> logs = new ArrayList<>();

    @AfterEach
    void closeLogs() throws IOException {
        for (UnifiedLog log : logs) {
            log.close();
        }
        scheduler.shutdownNow();
    }

    /** A log of {@code segments} full non-active segments (each batch stamped {@code timestampMs}), all committed. */
    private UnifiedLog log(String topic, LogConfig config, int segments, long timestampMs) throws IOException {
        TopicPartition tp = new TopicPartition(topic, 0);
        UnifiedLog log = UnifiedLog.load(dataDir.resolve(tp.toString()), tp, config, time, scheduler,
            new UnifiedLog.LoadParams(0, 0, true, 86_400_000L, false));
        logs.add(log);
        for (int segment = 0; segment < segments; segment++) {
            for (int i = 0; i < 5; i++) {
                log.appendAsLeader(batch(CompressionType.NONE, timestampMs, "key-" + i, "value-" + segment), 0, UnifiedLog.AppendOrigin.CLIENT);
            }
            log.roll(log.logEndOffset());
        }
        log.updateHighWatermark(log.logEndOffset());
        return log;
    }

    private LogCleanerManager manager() {
        return new LogCleanerManager(List.of(dataDir), () -> logs);
    }

    @Test
    void theDirtiestCompactedLogAboveItsRatioIsChosenFirst() throws IOException {
        UnifiedLog allDirty = log("all-dirty", compactConfig(Map.of(LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0.5")), 4, time.milliseconds());
        UnifiedLog halfDirty = log("half-dirty", compactConfig(Map.of(LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0.1")), 4, time.milliseconds());
        log("strict", compactConfig(Map.of(LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "1.0")), 4, time.milliseconds());
        log("not-compacted", LogConfig.defaults(), 4, time.milliseconds());
        new OffsetCheckpointFile(dataDir.resolve(LogCleanerManager.CLEANER_CHECKPOINT_FILE))
            .write(Map.of(halfDirty.topicPartition(), halfDirty.logSegments().stream().toList().get(2).baseOffset()));
        LogCleanerManager manager = manager();

        LogToClean first = manager.grabFilthiestCompactedLog(time.milliseconds()).orElseThrow();
        assertThat(first.log()).isSameAs(allDirty);
        assertThat(first.cleanableRatio()).isEqualTo(1.0);
        assertThat(first.firstUncleanableOffset()).isEqualTo(allDirty.activeSegment().baseOffset());
        LogToClean second = manager.grabFilthiestCompactedLog(time.milliseconds()).orElseThrow();
        assertThat(second.log()).isSameAs(halfDirty);
        assertThat(second.cleanableRatio()).isBetween(0.4, 0.6);
        assertThat(manager.grabFilthiestCompactedLog(time.milliseconds())).isEmpty();
    }

    @Test
    void cleanOffsetsAreCheckpointedInKafkasFormat() throws IOException {
        UnifiedLog log = log("orders", compactConfig(Map.of()), 2, time.milliseconds());
        LogCleanerManager manager = manager();
        manager.grabFilthiestCompactedLog(time.milliseconds()).orElseThrow();
        manager.doneCleaning(log, 7);

        Path file = dataDir.resolve("cleaner-offset-checkpoint");
        assertThat(Files.readString(file, StandardCharsets.UTF_8)).isEqualTo("0\n1\norders 0 7\n");
        assertThat(manager().allCleanerCheckpoints()).containsExactly(Map.entry(log.topicPartition(), 7L));
        // Cleaned up to 7: the rest of the log is the dirty section.
        LogToClean next = manager.grabFilthiestCompactedLog(time.milliseconds()).orElseThrow();
        assertThat(next.firstDirtyOffset()).isEqualTo(7);
    }

    @Test
    void aCheckpointBeyondTheLogEndIsResetToTheLogStart() throws IOException {
        UnifiedLog log = log("orders", compactConfig(Map.of()), 2, time.milliseconds());
        LogCleanerManager.OffsetsToClean offsets = LogCleanerManager.cleanableOffsets(log, 1_000L, time.milliseconds());
        assertThat(offsets.firstDirtyOffset()).isZero();
        assertThat(offsets.forceUpdateCheckpoint()).isTrue();
    }

    @Test
    void uncommittedDataIsNotCleanable() throws IOException {
        UnifiedLog log = log("orders", compactConfig(Map.of()), 4, time.milliseconds());
        log.updateHighWatermark(7);
        LogCleanerManager.OffsetsToClean offsets = LogCleanerManager.cleanableOffsets(log, null, time.milliseconds());
        assertThat(offsets.firstUncleanableDirtyOffset()).isEqualTo(7);
        // Rounded down to the segment holding it.
        assertThat(LogToClean.of(log, 0, 7, false).firstUncleanableOffset()).isEqualTo(5);
    }

    @Test
    void minCompactionLagKeepsRecentSegmentsDirty() throws IOException {
        long now = time.milliseconds();
        UnifiedLog log = log("lagging", compactConfig(Map.of(LogConfig.MIN_COMPACTION_LAG_MS, "5000")), 2, now - 10_000);
        long firstRecent = log.logEndOffset();
        for (int i = 0; i < 2; i++) {
            log.appendAsLeader(batch(CompressionType.NONE, now, "key", "recent-" + i), 0, UnifiedLog.AppendOrigin.CLIENT);
            log.roll(log.logEndOffset());
        }
        log.updateHighWatermark(log.logEndOffset());
        LogCleanerManager.OffsetsToClean offsets = LogCleanerManager.cleanableOffsets(log, null, now);
        assertThat(offsets.firstUncleanableDirtyOffset()).isEqualTo(firstRecent);
    }

    @Test
    void maxCompactionLagMakesALogCleanableBelowItsRatio() throws IOException {
        long now = time.milliseconds();
        log("overdue", compactConfig(Map.of(LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "1.0", LogConfig.MAX_COMPACTION_LAG_MS, "1000")), 2,
            now - 5_000);
        log("fresh", compactConfig(Map.of(LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "1.0", LogConfig.MAX_COMPACTION_LAG_MS, "60000")), 2,
            now - 5_000);
        Optional<LogToClean> chosen = manager().grabFilthiestCompactedLog(now);
        assertThat(chosen).isPresent();
        assertThat(chosen.get().topicPartition().topic()).isEqualTo("overdue");
        assertThat(chosen.get().needCompactionNow()).isTrue();
    }

    @Test
    void abortAndPauseWaitsForTheRunningPassAndKeepsTheCleanerOffUntilResumed() throws Exception {
        UnifiedLog log = log("orders", compactConfig(Map.of()), 2, time.milliseconds());
        TopicPartition tp = log.topicPartition();
        LogCleanerManager manager = manager();
        manager.grabFilthiestCompactedLog(time.milliseconds()).orElseThrow();

        CompletableFuture<Void> pausing = CompletableFuture.runAsync(() -> manager.abortAndPauseCleaning(tp));
        // The pass learns of the abort at its next check; the caller waits for it to finish.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!abortSeen(manager, tp)) {
            assertThat(System.nanoTime()).as("the abort reaches the pass").isLessThan(deadline);
            Thread.onSpinWait();
        }
        assertThat(pausing).isNotDone();
        manager.doneCleaning(log, 0);
        pausing.get(10, TimeUnit.SECONDS);

        assertThat(manager.isPaused(tp)).isTrue();
        assertThat(manager.grabFilthiestCompactedLog(time.milliseconds())).isEmpty();
        manager.abortAndPauseCleaning(tp);
        manager.resumeCleaning(tp);
        assertThat(manager.grabFilthiestCompactedLog(time.milliseconds())).isEmpty();
        manager.resumeCleaning(tp);
        assertThat(manager.grabFilthiestCompactedLog(time.milliseconds())).isPresent();
    }

    @Test
    void illegalTransitionsThrow() throws IOException {
        UnifiedLog log = log("orders", compactConfig(Map.of()), 2, time.milliseconds());
        LogCleanerManager manager = manager();
        assertThatThrownBy(() -> manager.resumeCleaning(log.topicPartition())).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("orders-0");
        assertThatThrownBy(() -> manager.doneCleaning(log, 3)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("endOffset=3");
    }

    private static boolean abortSeen(LogCleanerManager manager, TopicPartition tp) {
        try {
            manager.checkCleaningAborted(tp);
            return false;
        } catch (LogCleaningAbortedException e) {
            return true;
        }
    }
}
