package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.CompressionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

class LogManagerShutdownTest {
    private static final TopicPartition TOPIC_PARTITION = new TopicPartition("shutdown", 0);

    @TempDir
    Path dataDir;

    private LogManager newLogManager() {
        return new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            new MockTime(SequenceRecords.NOW_MS));
    }

    /**
     * A segment flush (as a roll schedules one) still running when the broker shuts down must
     * be allowed to finish: interrupting a thread inside FileChannel I/O closes the channel,
     * after which the shutdown's own flush failed, no clean-shutdown marker was written and
     * the next start recovered everything. The stand-in task below does its I/O as soon as
     * shutdown begins, as a flush in progress would.
     */
    @Test
    void shutdownLetsARunningBackgroundFlushFinishInsteadOfInterruptingIt() throws Exception {
        LogManager manager = newLogManager();
        manager.startup(topic -> LogConfig.defaults());
        UnifiedLog log = manager.getOrCreateLog(TOPIC_PARTITION, Optional.empty(), LogConfig.defaults());
        log.appendAsLeader(SequenceRecords.batch(CompressionType.NONE, 0, 10, false), 0, UnifiedLog.AppendOrigin.CLIENT);
        ScheduledExecutorService scheduler = manager.scheduler();
        CountDownLatch running = new CountDownLatch(1);
        Future<?> backgroundFlush = scheduler.submit(() -> {
            running.countDown();
            while (!scheduler.isShutdown()) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            try {
                log.flush(log.logEndOffset());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();

        manager.close();

        assertThat(backgroundFlush).succeedsWithin(Duration.ofSeconds(30));
        assertThat(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).exists();
        LogManager reopened = newLogManager();
        reopened.startup(topic -> LogConfig.defaults());
        try {
            assertThat(SequenceRecords.verifyPrefix(reopened.getLog(TOPIC_PARTITION))).isEqualTo(10);
        } finally {
            reopened.close();
        }
    }

    /**
     * The marker is taken (read and deleted) as soon as the directories are locked, before
     * anything in them is written: a process that crashes at any point after that, even before
     * its partition logs load, is recovered at its next start.
     */
    @Test
    void theCleanShutdownMarkerIsGoneOnceTheDirectoriesAreLocked() throws Exception {
        LogManager first = newLogManager();
        first.startup(topic -> LogConfig.defaults());
        first.close();
        assertThat(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).exists();

        LogManager locked = newLogManager();
        locked.lockDirectories();
        assertThat(locked.hadCleanShutdown(dataDir)).isTrue();
        assertThat(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).as("taken at lock time").doesNotExist();
        // A crash now (no close): the next process finds no marker.
        locked.close();   // not loaded: close writes no marker
        assertThat(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).doesNotExist();
        LogManager next = newLogManager();
        next.lockDirectories();
        assertThat(next.hadCleanShutdown(dataDir)).isFalse();
        next.writeCleanShutdownMarker(dataDir);
        next.close();
        assertThat(dataDir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).exists();
    }

    @Test
    void shutdownDoesNotWaitForDelayedFileDeletions() throws Exception {
        LogManager manager = newLogManager();
        manager.startup(topic -> LogConfig.defaults());
        CountDownLatch ran = new CountDownLatch(1);
        manager.scheduler().schedule(ran::countDown, 1, TimeUnit.HOURS);
        long startNs = System.nanoTime();
        manager.close();
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(30));
        assertThat(ran.getCount()).isEqualTo(1);
        assertThat(manager.scheduler().isTerminated()).isTrue();
    }
}
