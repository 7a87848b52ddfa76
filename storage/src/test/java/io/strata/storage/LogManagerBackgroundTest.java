package io.strata.storage;

import io.strata.common.BackgroundErrors;
import io.strata.common.MockTime;
import io.strata.storage.cleaner.CleanerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The log manager's periodic tasks count each failure and keep running; a failed checkpoint takes its directory offline. */
class LogManagerBackgroundTest {
    @TempDir
    Path dataDir;

    @Test
    void aFailingCheckpointTakesItsDirectoryOfflineAndTheTaskKeepsRunningForTheOthers() throws Exception {
        BackgroundErrors errors = new BackgroundErrors();
        Path failing = dataDir.resolve("failing");
        Path healthy = dataDir.resolve("healthy");
        LogManager manager = new LogManager(new LogManager.Settings(List.of(failing, healthy), 1, TimeUnit.HOURS.toMillis(1), Long.MAX_VALUE, 5,
            TimeUnit.HOURS.toMillis(1), TimeUnit.HOURS.toMillis(1), false), CleanerConfig.defaults(), new MockTime(), errors);
        Path checkpoint = failing.resolve(LogManager.RECOVERY_POINT_CHECKPOINT);
        try {
            manager.startup(topic -> LogConfig.defaults());
            // A directory where the recovery point checkpoint goes: its write fails. (A pass may
            // write the file again between the delete and the mkdir: then try again.)
            while (!Files.isDirectory(checkpoint)) {
                try {
                    Files.deleteIfExists(checkpoint);
                    Files.createDirectory(checkpoint);
                } catch (java.nio.file.FileAlreadyExistsException raced) {
                    // written again meanwhile
                }
            }
            Files.createDirectories(checkpoint.resolve("blocker"));
            awaitTrue(() -> manager.logDirFailureChannel().hasOfflineLogDir(failing), "the directory goes offline");
            assertThat(errors.count(LogManager.CHECKPOINT_TASK)).isGreaterThanOrEqualTo(1);
            assertThat(errors.counts()).containsOnlyKeys(LogManager.CHECKPOINT_TASK);

            // The task still runs: a log created now in the healthy directory appears in its checkpoint.
            TopicPartition created = new TopicPartition("created", 0);
            manager.getOrCreateLog(created, java.util.Optional.empty(), LogConfig.defaults());
            Path healthyCheckpoint = healthy.resolve(LogManager.RECOVERY_POINT_CHECKPOINT);
            awaitTrue(() -> new io.strata.storage.checkpoint.OffsetCheckpointFile(healthyCheckpoint).read().containsKey(created),
                "the healthy directory's checkpoint lists the new log");
        } finally {
            Files.delete(checkpoint.resolve("blocker"));
            Files.delete(checkpoint);
            manager.close();
        }
    }

    private interface Check {
        boolean holds() throws Exception;
    }

    private static void awaitTrue(Check check, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!check.holds()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(5);
        }
    }
}
