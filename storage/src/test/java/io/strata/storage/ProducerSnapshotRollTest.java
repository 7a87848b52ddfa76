package io.strata.storage;

import io.strata.common.MockTime;
import io.strata.protocol.records.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The producer snapshot of a segment roll is written and fsynced off the partition lock, and
 * stays crash-safe: temp file, fsync, atomic rename, directory fsync, before the recovery point
 * moves past it. A crash at every step leaves a snapshot set the log loads from, with the
 * producer's state intact.
 */
class ProducerSnapshotRollTest {
    private static final long PRODUCER_ID = 7L;
    private static final short EPOCH = 1;
    private static final long EXPIRATION_MS = TimeUnit.DAYS.toMillis(7);

    @TempDir
    Path dataDir;

    private final MockTime time = new MockTime();
    private final TopicPartition topicPartition = new TopicPartition("snap", 0);
    private final List<ScheduledExecutorService> schedulers = new ArrayList<>();
    private final ExecutorService appender = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        schedulers.forEach(ScheduledExecutorService::shutdownNow);
        appender.shutdownNow();
    }

    private Path logDir() {
        return dataDir.resolve(topicPartition.toString());
    }

    private UnifiedLog open(long recoveryPoint, boolean clean) throws IOException {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        schedulers.add(scheduler);
        return UnifiedLog.load(logDir(), topicPartition, LogConfig.defaults(), time, scheduler,
            new UnifiedLog.LoadParams(0, recoveryPoint, clean, EXPIRATION_MS, false));
    }

    private static MemoryRecords batch(int sequence) {
        return TestRecords.idempotentBatch(PRODUCER_ID, EPOCH, sequence, 1_700_000_000_000L + sequence, "v" + sequence);
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(condition.getAsBoolean()).as(what).isTrue();
    }

    private List<String> files(String suffix) throws IOException {
        try (Stream<Path> list = Files.list(logDir())) {
            return list.map(path -> path.getFileName().toString()).filter(name -> name.endsWith(suffix)).sorted().toList();
        }
    }

    @Test
    void anAppendProceedsWhileTheRollsSnapshotFsyncIsBlockedAndTheRecoveryPointWaitsForIt() throws Exception {
        UnifiedLog log = open(0, true);
        log.appendAsLeader(batch(0), 0, UnifiedLog.AppendOrigin.CLIENT);
        CountDownLatch fsyncEntered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        log.producerState().setBeforeSnapshotFsync(() -> {
            fsyncEntered.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            CompletableFuture<LogSegment> rolled = CompletableFuture.supplyAsync(() -> {
                try {
                    return log.roll(log.logEndOffset());
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, appender);
            assertThat(fsyncEntered.await(10, TimeUnit.SECONDS)).as("the snapshot fsync started").isTrue();
            assertThat(rolled.get(10, TimeUnit.SECONDS).baseOffset()).isEqualTo(1);

            // The fsync is stuck; the partition lock is free: another append goes through at once.
            LogAppendInfo appended = CompletableFuture.supplyAsync(() -> {
                try {
                    return log.appendAsLeader(batch(1), 0, UnifiedLog.AppendOrigin.CLIENT);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).get(5, TimeUnit.SECONDS);
            assertThat(appended.firstOffset()).isEqualTo(1);
            // Not published and not relied on yet: no snapshot file, the recovery point still before the roll.
            assertThat(files(ProducerStateManager.SNAPSHOT_SUFFIX)).isEmpty();
            assertThat(log.recoveryPoint()).isLessThan(1);
        } finally {
            release.countDown();
        }
        await(() -> log.recoveryPoint() >= 1, "the rolled segment is flushed after the snapshot");
        assertThat(files(ProducerStateManager.SNAPSHOT_SUFFIX)).containsExactly("00000000000000000001.snapshot");
        assertThat(files(".tmp")).isEmpty();
        log.close();
    }

    /** Where a crash interrupts the roll's snapshot. */
    enum CrashPoint { TEMP_FILE_HALF_WRITTEN, BEFORE_FSYNC, AFTER_PUBLISH }

    /** The simulated death of the process inside the background write: nothing after it runs. */
    static final class Crash extends Error {
        Crash() {
            super("simulated crash", null, false, false);
        }
    }

    @Test
    void aCrashAtAnyStepOfTheRollSnapshotLeavesALoadableSnapshotSet() throws Exception {
        for (CrashPoint point : CrashPoint.values()) {
            try (Stream<Path> old = Files.list(dataDir)) {
                for (Path dir : old.toList()) {
                    try (Stream<Path> files = Files.list(dir)) {
                        for (Path file : files.toList()) {
                            Files.delete(file);
                        }
                    }
                    Files.delete(dir);
                }
            }
            UnifiedLog log = open(0, true);
            log.appendAsLeader(batch(0), 0, UnifiedLog.AppendOrigin.CLIENT);
            log.roll(1);   // a first roll, completed: snapshot at 1 on disk
            await(() -> log.recoveryPoint() >= 1, point + ": the first roll's flush");
            log.appendAsLeader(batch(1), 0, UnifiedLog.AppendOrigin.CLIENT);
            log.flush(log.logEndOffset());
            CountDownLatch crashed = new CountDownLatch(1);
            if (point != CrashPoint.AFTER_PUBLISH) {
                log.producerState().setBeforeSnapshotFsync(() -> {
                    if (point == CrashPoint.TEMP_FILE_HALF_WRITTEN) {
                        try {
                            Path temp = logDir().resolve(files(".tmp").get(0));
                            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                                channel.truncate(channel.size() / 2);
                            }
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }
                    crashed.countDown();
                    throw new Crash();
                });
            }
            log.roll(2);
            if (point == CrashPoint.AFTER_PUBLISH) {
                await(() -> log.recoveryPoint() >= 2, point + ": the second roll's snapshot and flush");
            } else {
                assertThat(crashed.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(files(".tmp")).as(point + ": the crash left the temp file").hasSize(1);
            }
            // The process is gone: no close. Start again from what is on disk, recovery point as last checkpointed.
            UnifiedLog reopened = open(point == CrashPoint.AFTER_PUBLISH ? 2 : 1, false);
            assertThat(files(".tmp")).as(point + ": temp files removed at load").isEmpty();
            assertThat(files(ProducerStateManager.SNAPSHOT_SUFFIX)).as(point.toString()).contains("00000000000000000001.snapshot");
            assertThat(reopened.producerState().lastEntry(PRODUCER_ID).lastSeq()).as(point.toString()).isEqualTo(1);
            assertThat(reopened.appendAsLeader(batch(1), 0, UnifiedLog.AppendOrigin.CLIENT).duplicate()).as(point + ": the retry").isTrue();
            assertThat(reopened.appendAsLeader(batch(2), 0, UnifiedLog.AppendOrigin.CLIENT).firstOffset()).isEqualTo(2);
            reopened.close();
        }
    }
}
