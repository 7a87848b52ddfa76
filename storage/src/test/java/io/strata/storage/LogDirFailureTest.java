package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.storage.checkpoint.OffsetCheckpointFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The log-dir failure channel and the log manager's handling of an offline directory: an I/O
 * failure is injected by putting a non-empty directory where a checkpoint file is renamed to,
 * which fails for root too.
 */
class LogDirFailureTest {
    private static final TopicPartition ON_FAILING = new TopicPartition("orders", 0);
    private static final TopicPartition ON_HEALTHY = new TopicPartition("orders", 1);

    @TempDir
    Path root;

    @Test
    void channelTakesADirectoryOfflineOnceAndQueuesItOnce() throws InterruptedException {
        Path dir = root.resolve("a");
        LogDirFailureChannel channel = new LogDirFailureChannel(2);

        assertThat(channel.maybeAddOfflineLogDir(dir, "append failed", new IOException("No space left on device"))).isTrue();
        assertThat(channel.maybeAddOfflineLogDir(dir.resolve("x").resolve(".."), "flush failed", new IOException("again"))).isFalse();

        assertThat(channel.hasOfflineLogDir(dir.resolve("."))).isTrue();
        assertThat(channel.hasOfflineLogDir(root.resolve("b"))).isFalse();
        assertThat(channel.offlineLogDirs()).containsExactly(dir.toAbsolutePath().normalize());
        assertThat(channel.takeNextOfflineLogDir(1_000)).isEqualTo(dir.toAbsolutePath().normalize());
        assertThat(channel.takeNextOfflineLogDir(0)).as("a directory is queued once").isNull();
    }

    @Test
    void aFailedCheckpointTakesOnlyItsDirectoryOfflineAndItsDataSurvivesARestart() throws IOException {
        Path failing = root.resolve("failing");
        Path healthy = root.resolve("healthy");
        LogManager manager = started(failing, healthy);
        UnifiedLog failingLog = tenRecordsIn(manager, ON_FAILING, failing);
        UnifiedLog healthyLog = tenRecordsIn(manager, ON_HEALTHY, healthy);
        failingLog.flush(failingLog.logEndOffset());
        long failingBytes = Files.size(failingLog.activeSegment().log().file());
        // The checkpoint's atomic rename onto a non-empty directory fails: the injected I/O error.
        Path blocker = failing.resolve(LogManager.RECOVERY_POINT_CHECKPOINT);
        Files.createDirectories(blocker.resolve("blocker"));

        manager.checkpoint();

        assertThat(manager.logDirFailureChannel().offlineLogDirs()).containsExactly(failing.toAbsolutePath().normalize());
        assertThat(manager.isLogDirOnline(failing)).isFalse();
        assertThat(manager.isLogDirOnline(healthy)).isTrue();
        assertThat(manager.onlineLogDirs()).containsExactly(healthy);
        assertThat(new OffsetCheckpointFile(healthy.resolve(LogManager.RECOVERY_POINT_CHECKPOINT)).read())
            .as("the other directory's checkpoint is still written").containsKey(ON_HEALTHY);

        assertThat(manager.handleLogDirFailure(failing)).containsExactly(ON_FAILING);

        assertThat(manager.getLog(ON_FAILING)).isNull();
        assertThat(failingLog.isClosed()).isTrue();
        assertThatThrownBy(() -> failingLog.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, 10, 1, false), 0,
            UnifiedLog.AppendOrigin.CLIENT)).isInstanceOf(ErrorCodeException.class);
        assertThat(Files.size(failingLog.activeSegment().log().file())).as("nothing truncated or deleted").isEqualTo(failingBytes);
        healthyLog.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, 10, 5, false), 0, UnifiedLog.AppendOrigin.CLIENT);
        assertThat(healthyLog.logEndOffset()).isEqualTo(15L);
        // New logs go to the online directory only.
        UnifiedLog created = manager.getOrCreateLog(new TopicPartition("payments", 0), Optional.empty(), LogConfig.defaults());
        assertThat(created.dir().getParent()).isEqualTo(healthy);
        manager.close();

        assertThat(failing.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).as("the offline directory must be recovered at restart").doesNotExist();
        assertThat(healthy.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).exists();
        // The operator frees the space (here: removes the blocker) and restarts.
        Files.delete(blocker.resolve("blocker"));
        Files.delete(blocker);
        LogManager restarted = started(failing, healthy);
        assertThat(restarted.getLog(ON_FAILING).logEndOffset()).as("the records on the failed disk are recovered").isEqualTo(10L);
        assertThat(restarted.getLog(ON_HEALTHY).logEndOffset()).isEqualTo(15L);
        assertThat(restarted.onlineLogDirs()).containsExactly(failing, healthy);
        restarted.close();
    }

    @Test
    void handlingADirectoryThatDidNotFailIsABug() throws IOException {
        Path dir = root.resolve("only");
        LogManager manager = started(dir);
        assertThatThrownBy(() -> manager.handleLogDirFailure(dir)).isInstanceOf(IllegalStateException.class).hasMessageContaining("not offline");
        manager.close();
    }

    @Test
    void noLogIsCreatedOnceEveryDirectoryIsOffline() throws IOException {
        Path dir = root.resolve("only");
        LogManager manager = started(dir);
        manager.logDirFailureChannel().maybeAddOfflineLogDir(dir, "injected", new IOException("No space left on device"));

        assertThatThrownBy(() -> manager.getOrCreateLog(ON_FAILING, Optional.empty(), LogConfig.defaults()))
            .isInstanceOf(IOException.class).hasMessageContaining("No online log directory");
        manager.close();
    }

    private static LogManager started(Path... dirs) throws IOException {
        LogManager manager = new LogManager(new LogManager.Settings(List.of(dirs), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false,
            0L), new MockTime(SequenceRecords.NOW_MS));
        manager.startup(topic -> LogConfig.defaults());
        return manager;
    }

    private static UnifiedLog tenRecordsIn(LogManager manager, TopicPartition partition, Path dir) throws IOException {
        manager.maybeUpdatePreferredLogDir(partition, dir);
        UnifiedLog log = manager.getOrCreateLog(partition, Optional.empty(), LogConfig.defaults());
        assertThat(log.dir().getParent()).isEqualTo(dir);
        log.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, 0, 10, false), 0, UnifiedLog.AppendOrigin.CLIENT);
        return log;
    }
}
