package io.strata.server.replica;

import io.strata.metadata.PartitionRegistration;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The mover driven by {@link LogDirMover#poll} on one real partition and log manager with two data
 * directories: throttled chunks, the swap under the partition's lock racing leader appends (no
 * appended offset lost), a truncation restarting the copy, and an abort.
 */
class LogDirMoverTest {
    private static final TopicPartition PARTITION = new TopicPartition("moving", 0);
    @TempDir
    Path firstDir;
    @TempDir
    Path secondDir;
    private FakeReplicaContext context;
    private LogManager logManager;
    private Partition partition;
    private ReplicationQuotaManager quota;
    private LogDirMover mover;

    @BeforeEach
    void setUp() throws Exception {
        context = new FakeReplicaContext(1);
        logManager = new LogManager(new LogManager.Settings(List.of(firstDir, secondDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L,
            600_000L, false), context.time);
        logManager.startup(topic -> LogConfig.defaults());
        UnifiedLog log = logManager.getOrCreateLog(PARTITION, Optional.of(UUID.randomUUID()), LogConfig.of(Map.of(), Map.of()));
        partition = new Partition(PARTITION, log.topicId().orElseThrow(), log, context);
        partition.makeLeader(new PartitionRegistration(new int[] {1}, new int[] {1}, 1, 3, 1), context.time.milliseconds());
        quota = new ReplicationQuotaManager(ReplicationQuotaManager.Side.ALTER_LOG_DIRS, 11, 1, context.time);
        mover = new LogDirMover(logManager, tp -> tp.equals(PARTITION) ? partition : null, quota);
    }

    @AfterEach
    void tearDown() throws Exception {
        logManager.close();
    }

    private void append(int batches) throws Exception {
        for (int i = 0; i < batches; i++) {
            partition.appendRecordsToLeader(PartitionStateTest.records(5), UnifiedLog.AppendOrigin.CLIENT, (short) -1);
        }
    }

    /** Five records at {@code baseOffset} written by a leader of {@code leaderEpoch}, as a fetcher receives them. */
    private static io.strata.protocol.records.MemoryRecords followerBatch(long baseOffset, int leaderEpoch) {
        io.strata.protocol.records.RecordBatchBuilder builder = new io.strata.protocol.records.RecordBatchBuilder(
            io.strata.protocol.records.CompressionType.NONE, io.strata.protocol.records.TimestampType.CREATE_TIME, baseOffset)
            .partitionLeaderEpoch(leaderEpoch);
        for (int i = 0; i < 5; i++) {
            builder.append(2_000L + i, null, ("f" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    private Path target() {
        return partition.log().dir().getParent().equals(firstDir) ? secondDir : firstDir;
    }

    private UnifiedLog startMove() throws Exception {
        return logManager.getOrCreateFutureLog(PARTITION, target(), partition.log().topicId(), partition.log().config());
    }

    @Test
    void copiesNothingWhileTheThrottleIsExceededAndSwapsOnceCaughtUp() throws Exception {
        append(20);
        Path target = target();
        UnifiedLog future = startMove();
        quota.updateQuota(1);
        quota.record(1_000_000); // far over 1 byte/s for the whole window
        mover.poll(context.time.milliseconds());
        assertThat(future.logEndOffset()).as("throttled").isZero();
        assertThat(mover.state(PARTITION)).isEqualTo(LogDirMover.State.COPYING);

        quota.updateQuota(ReplicationQuotaManager.UNLIMITED);
        long epochStart = partition.log().leaderEpochCache().epochEntries().get(0).startOffset();
        for (int polls = 0; polls < 100 && logManager.getFutureLog(PARTITION) != null; polls++) {
            mover.poll(context.time.milliseconds());
        }
        assertThat(logManager.getFutureLog(PARTITION)).isNull();
        assertThat(partition.log().dir()).isEqualTo(target.resolve("moving-0"));
        assertThat(partition.log().logEndOffset()).isEqualTo(100L);
        assertThat(partition.log().highWatermark()).isEqualTo(100L);
        assertThat(partition.log().leaderEpochCache().epochEntries().get(0).startOffset()).isEqualTo(epochStart);
        assertThat(mover.completed()).isEqualTo(1);
        assertThat(mover.state(PARTITION)).isNull();
        assertThat(mover.bytesCopied()).isPositive();
        assertThat(quota.byteRate()).as("the copied bytes count against the throttle").isPositive();
        append(1); // the partition appends to the moved log
        assertThat(partition.log().logEndOffset()).isEqualTo(105L);
    }

    @Test
    void noAppendIsLostWhenTheSwapRacesALeaderAppending() throws Exception {
        append(50);
        Path target = target();
        startMove();
        CompletableFuture<Long> appender = CompletableFuture.supplyAsync(() -> {
            long appended = 0;
            try {
                for (int i = 0; i < 2_000; i++) {
                    partition.appendRecordsToLeader(PartitionStateTest.records(1), UnifiedLog.AppendOrigin.CLIENT, (short) -1);
                    appended++;
                }
            } catch (Exception e) {
                throw new IllegalStateException("append " + appended + " failed", e);
            }
            return appended;
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (logManager.getFutureLog(PARTITION) != null) {
            assertThat(System.nanoTime()).as("the move completes").isLessThan(deadline);
            mover.poll(context.time.milliseconds());
        }
        long appended = appender.get(30, TimeUnit.SECONDS);
        assertThat(partition.log().dir().getParent()).isEqualTo(target);
        assertThat(partition.log()).isSameAs(logManager.getLog(PARTITION));
        assertThat(partition.log().logEndOffset()).as("every append, before, during and after the swap").isEqualTo(250L + appended);
        assertThat(partition.log().highWatermark()).isEqualTo(250L + appended);
        assertThat(mover.failures()).isZero();
    }

    @Test
    void truncationOfTheCurrentLogRestartsTheCopy() throws Exception {
        append(10);
        UnifiedLog future = startMove();
        quota.updateQuota(200); // chunks of 200 bytes: one batch per poll
        mover.poll(context.time.milliseconds());
        assertThat(future.logEndOffset()).isEqualTo(5L);
        partition.changeFollowerLog(log -> {
            log.truncateTo(20L);
            return null;
        });
        quota.updateQuota(ReplicationQuotaManager.UNLIMITED);
        mover.poll(context.time.milliseconds());
        assertThat(mover.copyRestarts()).isEqualTo(1);
        for (int polls = 0; polls < 10 && logManager.getFutureLog(PARTITION) != null; polls++) {
            mover.poll(context.time.milliseconds());
        }
        assertThat(logManager.getFutureLog(PARTITION)).isNull();
        assertThat(partition.log().logEndOffset()).isEqualTo(20L);
    }

    @Test
    void abortDeletesTheFutureLogAndStopsTheMove() throws Exception {
        append(10);
        UnifiedLog future = startMove();
        quota.updateQuota(1);
        mover.poll(context.time.milliseconds());
        assertThat(mover.state(PARTITION)).isEqualTo(LogDirMover.State.COPYING);
        Path futureDir = future.dir();
        mover.abort(PARTITION);
        assertThat(mover.state(PARTITION)).isNull();
        assertThat(logManager.getFutureLog(PARTITION)).isNull();
        assertThat(Files.exists(futureDir)).isFalse();
        assertThat(mover.aborted()).isEqualTo(1);
        mover.poll(context.time.milliseconds());
        assertThat(partition.log().dir().getParent()).isNotEqualTo(futureDir.getParent());
    }

    @Test
    void aLeadershipChangeDoesNotStopTheMove() throws Exception {
        append(10);
        Path target = target();
        UnifiedLog future = startMove();
        quota.updateQuota(200); // one batch per poll
        mover.poll(context.time.milliseconds());
        assertThat(future.logEndOffset()).isEqualTo(5L);
        // This node now follows broker 2 in epoch 4, and its fetcher appends what the new leader wrote.
        partition.makeFollower(new PartitionRegistration(new int[] {1, 2}, new int[] {1, 2}, 2, 4, 2));
        partition.changeFollowerLog(log -> log.appendAsFollower(followerBatch(50L, 4), 4));
        quota.updateQuota(ReplicationQuotaManager.UNLIMITED);
        for (int polls = 0; polls < 10 && logManager.getFutureLog(PARTITION) != null; polls++) {
            mover.poll(context.time.milliseconds());
        }
        assertThat(logManager.getFutureLog(PARTITION)).isNull();
        assertThat(partition.log().dir().getParent()).isEqualTo(target);
        assertThat(partition.log().logEndOffset()).isEqualTo(55L);
        assertThat(partition.log().latestEpoch()).hasValue(4);
        assertThat(mover.copyRestarts()).isZero();
    }
}
