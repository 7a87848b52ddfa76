package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import io.strata.storage.checkpoint.OffsetCheckpointFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code replication-offset-checkpoint} and the broker epoch in {@code .kafka_cleanshutdown}. */
class LogManagerReplicationCheckpointTest {
    private static final TopicPartition ORDERS = new TopicPartition("orders", 0);
    private static final TopicPartition PAYMENTS = new TopicPartition("payments", 3);

    @TempDir
    Path dataDir;

    private LogManager newLogManager(List<Path> dirs, long highWatermarkCheckpointIntervalMs) {
        return new LogManager(new LogManager.Settings(dirs, 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false,
            highWatermarkCheckpointIntervalMs), new MockTime(SequenceRecords.NOW_MS));
    }

    private LogManager started() throws IOException {
        LogManager manager = newLogManager(List.of(dataDir), 0L);
        manager.startup(topic -> LogConfig.defaults());
        return manager;
    }

    /** A log of ten records with its high watermark at {@code highWatermark}. */
    private static UnifiedLog tenRecords(LogManager manager, TopicPartition partition, long highWatermark) throws IOException {
        UnifiedLog log = manager.getOrCreateLog(partition, Optional.empty(), LogConfig.defaults());
        assertThat(log.highWatermark()).as("a new log starts at high watermark 0").isZero();
        log.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, 0, 10, false), 0, UnifiedLog.AppendOrigin.CLIENT);
        log.updateHighWatermark(highWatermark);
        return log;
    }

    private Map<TopicPartition, Long> checkpointed() throws IOException {
        return new OffsetCheckpointFile(dataDir.resolve(LogManager.REPLICATION_OFFSET_CHECKPOINT)).read();
    }

    @Test
    void highWatermarksAreWrittenAtShutdownAndRestoredAtStart() throws IOException {
        LogManager manager = started();
        tenRecords(manager, ORDERS, 4L);
        tenRecords(manager, PAYMENTS, 10L);
        manager.close();
        assertThat(checkpointed()).containsExactlyInAnyOrderEntriesOf(Map.of(ORDERS, 4L, PAYMENTS, 10L));

        LogManager restarted = started();

        assertThat(restarted.getLog(ORDERS).highWatermark()).isEqualTo(4L);
        assertThat(restarted.getLog(ORDERS).logEndOffset()).isEqualTo(10L);
        assertThat(restarted.getLog(PAYMENTS).highWatermark()).isEqualTo(10L);
        restarted.close();
    }

    @Test
    void checkpointedHighWatermarkIsBoundedByTheLogStartAndEnd() throws IOException {
        LogManager manager = started();
        UnifiedLog orders = tenRecords(manager, ORDERS, 10L);
        orders.maybeIncrementLogStartOffset(3L);
        tenRecords(manager, PAYMENTS, 2L);
        manager.close();
        new OffsetCheckpointFile(dataDir.resolve(LogManager.REPLICATION_OFFSET_CHECKPOINT)).write(Map.of(ORDERS, 1L, PAYMENTS, 99L));

        LogManager restarted = started();

        assertThat(restarted.getLog(ORDERS).logStartOffset()).isEqualTo(3L);
        assertThat(restarted.getLog(ORDERS).highWatermark()).isEqualTo(3L);
        assertThat(restarted.getLog(PAYMENTS).highWatermark()).isEqualTo(10L);
        restarted.close();
    }

    @Test
    void partitionMissingFromTheCheckpointStartsAtItsLogStart() throws IOException {
        LogManager manager = started();
        UnifiedLog orders = tenRecords(manager, ORDERS, 10L);
        orders.maybeIncrementLogStartOffset(6L);
        tenRecords(manager, PAYMENTS, 7L);
        manager.close();
        new OffsetCheckpointFile(dataDir.resolve(LogManager.REPLICATION_OFFSET_CHECKPOINT)).write(Map.of(PAYMENTS, 7L));

        LogManager restarted = started();

        assertThat(restarted.getLog(ORDERS).highWatermark()).isEqualTo(6L);
        assertThat(restarted.getLog(PAYMENTS).highWatermark()).isEqualTo(7L);
        restarted.close();
    }

    @Test
    void dataDirectoryWithoutTheFileKeepsTheEarlierBehaviourOfTheRecoveryPoint() throws IOException {
        LogManager manager = started();
        tenRecords(manager, ORDERS, 4L);
        manager.close();
        Files.delete(dataDir.resolve(LogManager.REPLICATION_OFFSET_CHECKPOINT));

        LogManager restarted = started();

        // A clean shutdown flushed everything: the recovery point, and so the high watermark, is the log end.
        assertThat(restarted.getLog(ORDERS).recoveryPoint()).isEqualTo(10L);
        assertThat(restarted.getLog(ORDERS).highWatermark()).isEqualTo(10L);
        restarted.close();
        assertThat(checkpointed()).containsEntry(ORDERS, 10L);
    }

    @Test
    void periodicCheckpointWritesTheCurrentHighWatermarksAndDropsDeletedLogs() throws IOException {
        LogManager manager = newLogManager(List.of(dataDir), 10L);
        manager.startup(topic -> LogConfig.defaults());
        UnifiedLog orders = tenRecords(manager, ORDERS, 5L);
        tenRecords(manager, PAYMENTS, 8L);
        awaitCheckpoint(Map.of(ORDERS, 5L, PAYMENTS, 8L));

        orders.updateHighWatermark(9L);
        manager.deleteLog(PAYMENTS);

        awaitCheckpoint(Map.of(ORDERS, 9L));
        assertThat(manager.backgroundErrors().count(LogManager.HIGH_WATERMARK_CHECKPOINT_TASK)).isZero();
        manager.close();
    }

    private void awaitCheckpoint(Map<TopicPartition, Long> expected) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Map<TopicPartition, Long> found = Map.of();
        while (System.nanoTime() < deadline) {
            if (Files.exists(dataDir.resolve(LogManager.REPLICATION_OFFSET_CHECKPOINT))) {
                found = checkpointed();
                if (found.equals(expected)) {
                    return;
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        assertThat(found).as("replication-offset-checkpoint within 30 s").isEqualTo(expected);
    }

    // ---------------------------------------------------------------- clean-shutdown marker

    @Test
    void brokerEpochOfTheCleanShutdownIsThePreviousBrokerEpochOfTheNextStart() throws IOException {
        LogManager manager = started();
        manager.setCleanShutdownBrokerEpoch(42L);
        manager.close();
        assertThat(Files.readString(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE), StandardCharsets.UTF_8))
            .isEqualTo("{\"version\":0,\"brokerEpoch\":42}");

        LogManager restarted = newLogManager(List.of(dataDir), 0L);
        restarted.lockDirectories();

        assertThat(restarted.previousBrokerEpoch()).isEqualTo(OptionalLong.of(42L));
        assertThat(restarted.hadCleanShutdown(dataDir)).isTrue();
        assertThat(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).as("taken at lock time").doesNotExist();
        restarted.close();
    }

    @Test
    void emptyMarkerOfAnOlderVersionIsCleanButNamesNoEpoch() throws IOException {
        Files.createDirectories(dataDir);
        Files.write(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE), new byte[0]);
        LogManager manager = newLogManager(List.of(dataDir), 0L);

        manager.lockDirectories();

        assertThat(manager.hadCleanShutdown(dataDir)).isTrue();
        assertThat(manager.previousBrokerEpoch()).isEmpty();
        manager.close();
    }

    @Test
    void unreadableOrOtherVersionMarkerNamesNoEpoch() throws IOException {
        Path other = dataDir.resolve("other");
        Path first = dataDir.resolve("first");
        Files.createDirectories(other);
        Files.createDirectories(first);
        Files.writeString(other.resolve(LogManager.CLEAN_SHUTDOWN_FILE), "{\"version\":1,\"brokerEpoch\":7}");
        Files.writeString(first.resolve(LogManager.CLEAN_SHUTDOWN_FILE), "brokerEpoch=7");

        LogManager manager = newLogManager(List.of(other), 0L);
        manager.lockDirectories();
        LogManager garbage = newLogManager(List.of(first), 0L);
        garbage.lockDirectories();

        assertThat(manager.previousBrokerEpoch()).isEmpty();
        assertThat(garbage.previousBrokerEpoch()).isEmpty();
        manager.close();
        garbage.close();
    }

    @Test
    void dataDirectoriesMustAgreeOnTheEpoch() throws IOException {
        Path first = dataDir.resolve("a");
        Path second = dataDir.resolve("b");
        Files.createDirectories(first);
        Files.createDirectories(second);
        CleanShutdownMarker.write(first.resolve(LogManager.CLEAN_SHUTDOWN_FILE), 5L);
        CleanShutdownMarker.write(second.resolve(LogManager.CLEAN_SHUTDOWN_FILE), 6L);
        LogManager disagreeing = newLogManager(List.of(first, second), 0L);
        disagreeing.lockDirectories();
        assertThat(disagreeing.previousBrokerEpoch()).isEmpty();
        disagreeing.close();

        CleanShutdownMarker.write(first.resolve(LogManager.CLEAN_SHUTDOWN_FILE), 6L);
        CleanShutdownMarker.write(second.resolve(LogManager.CLEAN_SHUTDOWN_FILE), 6L);
        LogManager agreeing = newLogManager(List.of(first, second), 0L);
        agreeing.lockDirectories();
        assertThat(agreeing.previousBrokerEpoch()).isEqualTo(OptionalLong.of(6L));
        agreeing.close();
    }

    @Test
    void noArgumentEpochWritesMinusOneWhichNamesNoEpoch() throws IOException {
        LogManager manager = started();
        manager.close();
        assertThat(Files.readString(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE))).isEqualTo("{\"version\":0,\"brokerEpoch\":-1}");
        LogManager restarted = newLogManager(List.of(dataDir), 0L);
        restarted.lockDirectories();
        assertThat(restarted.hadCleanShutdown(dataDir)).isTrue();
        assertThat(restarted.previousBrokerEpoch()).isEmpty();
        restarted.close();
    }
}
