package io.strata.storage;

import io.strata.common.Time;
import io.strata.protocol.records.CompressionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LogManagerFutureLogTest {
    private static final TopicPartition PARTITION = new TopicPartition("moves", 0);
    @TempDir
    Path firstDir;
    @TempDir
    Path secondDir;

    private LogManager manager() throws Exception {
        LogManager manager = new LogManager(new LogManager.Settings(List.of(firstDir, secondDir), 1, 300_000L, Long.MAX_VALUE, 0L,
            86_400_000L, 600_000L, false), Time.SYSTEM);
        manager.startup(topic -> LogConfig.defaults());
        return manager;
    }

    private static Path otherDir(UnifiedLog log, Path a, Path b) {
        return log.dir().getParent().equals(a) ? b : a;
    }

    private static void appendBatches(UnifiedLog log, int batches) throws Exception {
        for (int i = 0; i < batches; i++) {
            log.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, 0, 10, false), 0, UnifiedLog.AppendOrigin.CLIENT);
        }
    }

    @Test
    void futureLogIsFilledBySmallCopiesAndSwappedIn() throws Exception {
        LogManager manager = manager();
        UnifiedLog current = manager.getOrCreateLog(PARTITION, Optional.empty(), LogConfig.defaults());
        appendBatches(current, 5);
        current.updateHighWatermark(40L);
        Path target = otherDir(current, firstDir, secondDir);
        UnifiedLog future = manager.getOrCreateFutureLog(PARTITION, target, Optional.empty(), LogConfig.defaults());
        assertThat(future.dir().getParent()).isEqualTo(target);
        assertThat(future.dir().getFileName().toString()).startsWith("moves-0.").endsWith(LogManager.FUTURE_DIR_SUFFIX);
        assertThat(manager.getOrCreateFutureLog(PARTITION, target, Optional.empty(), LogConfig.defaults())).isSameAs(future);

        FutureLogCopier copier = new FutureLogCopier(current, future, 1);
        assertThat(copier.offsetLag()).isEqualTo(50L);
        int copies = 0;
        while (copier.copyOnce() > 0) {
            copies++;
            appendBatches(current, copies == 2 ? 1 : 0); // a write while moving is copied too
        }
        assertThat(copies).as("one batch per copy with a 1-byte budget").isEqualTo(6);
        assertThat(copier.isCaughtUp()).isTrue();
        assertThat(copier.offsetLag()).isZero();

        Path oldDir = current.dir();
        UnifiedLog swapped = manager.replaceCurrentWithFutureLog(PARTITION);
        assertThat(manager.getLog(PARTITION)).isSameAs(swapped);
        assertThat(manager.getFutureLog(PARTITION)).isNull();
        assertThat(swapped.dir()).isEqualTo(target.resolve("moves-0"));
        assertThat(swapped.logEndOffset()).isEqualTo(60L);
        assertThat(swapped.highWatermark()).isEqualTo(40L);
        assertThat(Files.exists(oldDir)).as("the old directory was renamed for deletion").isFalse();
        manager.close();

        LogManager reopened = manager();
        assertThat(reopened.getLog(PARTITION).dir()).isEqualTo(target.resolve("moves-0"));
        assertThat(reopened.getLog(PARTITION).logEndOffset()).isEqualTo(60L);
        assertThat(reopened.getFutureLog(PARTITION)).isNull();
        reopened.close();
    }

    @Test
    void swapRefusedWhileTheFutureLogLags() throws Exception {
        LogManager manager = manager();
        UnifiedLog current = manager.getOrCreateLog(PARTITION, Optional.empty(), LogConfig.defaults());
        appendBatches(current, 2);
        manager.getOrCreateFutureLog(PARTITION, otherDir(current, firstDir, secondDir), Optional.empty(), LogConfig.defaults());
        assertThatThrownBy(() -> manager.replaceCurrentWithFutureLog(PARTITION)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("futureLogEndOffset=0").hasMessageContaining("currentLogEndOffset=20");
        assertThat(manager.getLog(PARTITION)).isSameAs(current);
        manager.close();
    }

    @Test
    void refusesTheCurrentDirectoryAndUnknownDirectories(@TempDir Path elsewhere) throws Exception {
        LogManager manager = manager();
        UnifiedLog current = manager.getOrCreateLog(PARTITION, Optional.empty(), LogConfig.defaults());
        assertThatThrownBy(() -> manager.getOrCreateFutureLog(PARTITION, current.dir().getParent(), Optional.empty(), LogConfig.defaults()))
            .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> manager.getOrCreateFutureLog(PARTITION, elsewhere, Optional.empty(), LogConfig.defaults()))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a configured log directory");
        manager.close();
    }

    @Test
    void leftoverFutureLogIsResumedAfterRestart() throws Exception {
        LogManager manager = manager();
        UnifiedLog current = manager.getOrCreateLog(PARTITION, Optional.empty(), LogConfig.defaults());
        appendBatches(current, 3);
        Path target = otherDir(current, firstDir, secondDir);
        UnifiedLog future = manager.getOrCreateFutureLog(PARTITION, target, Optional.empty(), LogConfig.defaults());
        new FutureLogCopier(current, future, 1).copyOnce();
        Path futureDir = future.dir();
        manager.close();

        LogManager reopened = manager();
        UnifiedLog resumed = reopened.getFutureLog(PARTITION);
        assertThat(resumed).isNotNull();
        assertThat(resumed.dir()).isEqualTo(futureDir);
        assertThat(resumed.logEndOffset()).isEqualTo(10L);
        FutureLogCopier copier = new FutureLogCopier(reopened.getLog(PARTITION), resumed, Integer.MAX_VALUE);
        while (copier.copyOnce() > 0) {
            // copy the rest
        }
        assertThat(reopened.replaceCurrentWithFutureLog(PARTITION).logEndOffset()).isEqualTo(30L);
        reopened.close();
    }

    @Test
    void futureLogWithoutCurrentLogIsPromotedAtStart() throws Exception {
        LogManager manager = manager();
        UnifiedLog current = manager.getOrCreateLog(PARTITION, Optional.empty(), LogConfig.defaults());
        appendBatches(current, 2);
        Path target = otherDir(current, firstDir, secondDir);
        UnifiedLog future = manager.getOrCreateFutureLog(PARTITION, target, Optional.empty(), LogConfig.defaults());
        FutureLogCopier copier = new FutureLogCopier(current, future, Integer.MAX_VALUE);
        while (copier.copyOnce() > 0) {
            // copy all
        }
        Path currentDir = current.dir();
        manager.close();
        // A crash inside the swap after the current directory was renamed for deletion.
        Files.move(currentDir, currentDir.resolveSibling("moves-0.0123456789abcdef0123456789abcdef-delete"));

        LogManager reopened = manager();
        assertThat(reopened.getFutureLog(PARTITION)).isNull();
        assertThat(reopened.getLog(PARTITION).dir()).isEqualTo(target.resolve("moves-0"));
        assertThat(reopened.getLog(PARTITION).logEndOffset()).isEqualTo(20L);
        reopened.close();
    }

    @Test
    void swapKeepsAnEpochWithoutRecordsAndTheCurrentLogStart() throws Exception {
        LogManager manager = manager();
        UnifiedLog current = manager.getOrCreateLog(PARTITION, Optional.empty(), LogConfig.defaults());
        appendBatches(current, 3);
        // A leader elected at epoch 4 with nothing written yet: the epoch is only in the current log's cache (KAFKA-15608).
        current.maybeAssignEpochStartOffset(4, current.logEndOffset());
        current.updateHighWatermark(30L);
        UnifiedLog future = manager.getOrCreateFutureLog(PARTITION, otherDir(current, firstDir, secondDir), Optional.empty(),
            LogConfig.defaults());
        FutureLogCopier copier = new FutureLogCopier(current, future, Integer.MAX_VALUE);
        while (copier.copyOnce() > 0) {
            // copy everything
        }
        current.maybeIncrementLogStartOffset(10L); // DeleteRecords after the copy
        List<EpochEntry> history = current.leaderEpochCache().epochEntries();
        assertThat(history).extracting(EpochEntry::epoch).contains(4);

        UnifiedLog swapped = manager.replaceCurrentWithFutureLog(PARTITION);
        assertThat(swapped.leaderEpochCache().epochEntries()).isEqualTo(history);
        assertThat(swapped.logStartOffset()).isEqualTo(10L);
        assertThat(swapped.highWatermark()).isEqualTo(30L);
        manager.close();
    }

    @Test
    void preferredDirectoryPlacesTheNextCreatedLog() throws Exception {
        LogManager manager = manager();
        assertThat(manager.maybeUpdatePreferredLogDir(PARTITION, secondDir)).isTrue();
        assertThat(manager.maybeUpdatePreferredLogDir(PARTITION, firstDir)).as("a later preference replaces the earlier one").isTrue();
        assertThat(manager.preferredLogDir(PARTITION)).isEqualTo(firstDir);
        UnifiedLog created = manager.getOrCreateLog(PARTITION, Optional.empty(), LogConfig.defaults());
        assertThat(created.dir().getParent()).isEqualTo(firstDir);
        assertThat(manager.preferredLogDir(PARTITION)).as("consumed by the creation").isNull();
        assertThat(manager.maybeUpdatePreferredLogDir(PARTITION, firstDir)).as("the log already lives there").isFalse();
        assertThatThrownBy(() -> manager.maybeUpdatePreferredLogDir(PARTITION, firstDir.resolve("nested")))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(manager.isConfiguredLogDir(firstDir.resolve("x").resolve(".."))).as("normalised").isTrue();
        assertThat(manager.isConfiguredLogDir(Path.of("relative"))).isFalse();
        assertThat(manager.isLogDirOnline(secondDir)).isTrue();
        manager.close();
    }
}
