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

/** The log manager's periodic tasks count each failure and keep running. */
class LogManagerBackgroundTest {
    @TempDir
    Path dataDir;

    @Test
    void aFailingCheckpointIsCountedAtEveryIntervalAndTheTaskKeepsRunning() throws Exception {
        BackgroundErrors errors = new BackgroundErrors();
        LogManager manager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, TimeUnit.HOURS.toMillis(1), Long.MAX_VALUE, 5,
            TimeUnit.HOURS.toMillis(1), TimeUnit.HOURS.toMillis(1), false), CleanerConfig.defaults(), new MockTime(), errors);
        try {
            manager.startup(topic -> LogConfig.defaults());
            // A directory where the recovery point checkpoint goes: every write of it fails. (A pass may
            // write the file again between the delete and the mkdir: then try again.)
            Path checkpoint = dataDir.resolve(LogManager.RECOVERY_POINT_CHECKPOINT);
            while (!Files.isDirectory(checkpoint)) {
                try {
                    Files.deleteIfExists(checkpoint);
                    Files.createDirectory(checkpoint);
                } catch (java.nio.file.FileAlreadyExistsException raced) {
                    // written again meanwhile
                }
            }
            Files.createDirectories(checkpoint.resolve("blocker"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (errors.count(LogManager.CHECKPOINT_TASK) < 3 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(errors.count(LogManager.CHECKPOINT_TASK)).isGreaterThanOrEqualTo(3);
            assertThat(errors.counts()).containsOnlyKeys(LogManager.CHECKPOINT_TASK);
        } finally {
            Files.delete(dataDir.resolve(LogManager.RECOVERY_POINT_CHECKPOINT).resolve("blocker"));
            Files.delete(dataDir.resolve(LogManager.RECOVERY_POINT_CHECKPOINT));
            manager.close();
        }
    }
}
