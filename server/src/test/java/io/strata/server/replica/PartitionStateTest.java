package io.strata.server.replica;

import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The leader's state machine: caught-up rule, ISR shrink and expand, pending changes, AlterPartition answers, the image winning. */
class PartitionStateTest {
    static final int LEADER = 1;
    static final int FOLLOWER = 2;
    static final int OTHER = 3;
    static final long LAG_MS = 30_000L;
    private static final TopicPartition TP = new TopicPartition("replicated", 0);
    private static final UUID TOPIC_ID = UUID.randomUUID();

    @TempDir
    Path dataDir;
    private LogManager logManager;
    private FakeReplicaContext context;
    private UnifiedLog log;
    private Partition partition;

    @BeforeEach
    void start() throws Exception {
        context = new FakeReplicaContext(LEADER);
        context.brokerEpochs.put(FOLLOWER, 10L);
        context.brokerEpochs.put(OTHER, 20L);
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            context.time);
        logManager.startup(topic -> LogConfig.defaults());
        log = logManager.getOrCreateLog(TP, Optional.of(TOPIC_ID), LogConfig.of(Map.of(), Map.of(LogConfig.MIN_IN_SYNC_REPLICAS, "2")));
        partition = new Partition(TP, TOPIC_ID, log, context);
    }

    @AfterEach
    void stop() throws Exception {
        logManager.close();
    }

    static PartitionRegistration registration(int[] replicas, int[] isr, int leader, int leaderEpoch, int partitionEpoch) {
        return new PartitionRegistration(replicas, isr, leader, leaderEpoch, partitionEpoch);
    }

    static MemoryRecords records(int count) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0);
        for (int i = 0; i < count; i++) {
            builder.append(1_000L + i, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    private void leadWith(int[] isr, int leaderEpoch, int partitionEpoch) {
        partition.makeLeader(registration(new int[] {LEADER, FOLLOWER, OTHER}, isr, LEADER, leaderEpoch, partitionEpoch), context.time.milliseconds());
    }

    private void fetch(int replica, long offset, long brokerEpoch) {
        partition.updateFollowerFetchState(replica, offset, 0L, context.time.milliseconds(), log.logEndOffset(), brokerEpoch);
    }

    private static AlterPartitionResponseData.PartitionData committed(List<Integer> isr, int leaderEpoch, int partitionEpoch) {
        return new AlterPartitionResponseData.PartitionData().setPartitionIndex(0).setErrorCode(ErrorCode.NONE.code()).setLeaderId(LEADER)
            .setLeaderEpoch(leaderEpoch).setIsr(isr).setPartitionEpoch(partitionEpoch);
    }

    private static AlterPartitionResponseData.PartitionData refused(ErrorCode error) {
        return new AlterPartitionResponseData.PartitionData().setPartitionIndex(0).setErrorCode(error.code());
    }

    // ---------------------------------------------------------------- caught-up rule

    @Test
    void aFollowerUnderSteadyLoadIsNeverCalledLagging() {
        RemoteReplica replica = new RemoteReplica(FOLLOWER);
        long leaderEnd = 0;
        long now = 1_000_000L;
        replica.updateFetchState(0, 0, now, leaderEnd, 10L);
        // Every fetch arrives after one more batch was appended: it always reaches the end the leader had at the previous fetch.
        for (int round = 0; round < 100; round++) {
            long fetchOffset = leaderEnd;
            leaderEnd += 5;
            now += 1_000L;
            replica.updateFetchState(fetchOffset, 0, now, leaderEnd, 10L);
            assertThat(replica.lastCaughtUpTimeMs()).isEqualTo(now - 1_000L);
            assertThat(replica.isCaughtUp(leaderEnd, now, LAG_MS)).isTrue();
        }
        assertThat(now).isGreaterThan(1_000_000L + 3 * LAG_MS);
    }

    @Test
    void aFollowerThatFallsFurtherBehindStopsBeingCaughtUp() {
        RemoteReplica replica = new RemoteReplica(FOLLOWER);
        replica.updateFetchState(10, 0, 1_000L, 10, 10L);
        assertThat(replica.lastCaughtUpTimeMs()).isEqualTo(1_000L);
        // At 10 again while the leader is at 20: it reached the end the leader had at its previous fetch, made at 1 000 ms.
        replica.updateFetchState(10, 0, 2_000L, 20, 10L);
        assertThat(replica.lastCaughtUpTimeMs()).isEqualTo(1_000L);
        // Below the end the leader had at the previous fetch (20): no progress counted.
        replica.updateFetchState(15, 0, 3_000L, 30, 10L);
        assertThat(replica.lastCaughtUpTimeMs()).isEqualTo(1_000L);
        assertThat(replica.isCaughtUp(30, 1_000L + LAG_MS, LAG_MS)).isTrue();
        assertThat(replica.isCaughtUp(30, 1_000L + LAG_MS + 1, LAG_MS)).isFalse();
    }

    @Test
    void aFetchWithAnOlderBrokerEpochIsRefused() {
        RemoteReplica replica = new RemoteReplica(FOLLOWER);
        replica.updateFetchState(0, 0, 1_000L, 0, 11L);
        assertThatThrownBy(() -> replica.updateFetchState(0, 0, 2_000L, 0, 10L))
            .isInstanceOfSatisfying(ErrorCodeException.class, e -> assertThat(e.error()).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER));
        assertThat(replica.lastFetchTimeMs()).isEqualTo(1_000L);
    }

    // ---------------------------------------------------------------- shrink

    @Test
    void anIsrMemberIsShrunkOnlyOnceItLaggedMoreThanReplicaLagTimeMaxMs() throws Exception {
        leadWith(new int[] {LEADER, FOLLOWER, OTHER}, 5, 7);
        long becameLeaderMs = context.time.milliseconds();
        partition.appendRecordsToLeader(records(3), UnifiedLog.AppendOrigin.CLIENT, (short) -1);
        fetch(OTHER, 3, 20L);

        context.time.advance(LAG_MS);
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).as("at exactly the lag bound it is still in sync").isFalse();
        assertThat(context.submitted).isEmpty();

        context.time.advance(1);
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).isTrue();
        assertThat(context.time.milliseconds() - becameLeaderMs).isEqualTo(LAG_MS + 1);
        FakeReplicaContext.Submitted shrink = context.lastSubmitted();
        assertThat(shrink.newIsr()).containsExactlyInAnyOrder(LEADER, OTHER);
        assertThat(shrink.change().leaderEpoch()).isEqualTo(5);
        assertThat(shrink.change().partitionEpoch()).isEqualTo(7);
        assertThat(partition.partitionState()).isInstanceOf(PartitionState.PendingShrink.class);
        assertThat(partition.isr()).as("committed ISR until the controller answers").containsExactlyInAnyOrder(LEADER, FOLLOWER, OTHER);
        assertThat(partition.partitionState().maximalIsr()).contains(FOLLOWER);

        partition.handleAlterPartitionResult(partition.partitionState(), committed(List.of(LEADER, OTHER), 5, 8));
        assertThat(partition.isr()).containsExactlyInAnyOrder(LEADER, OTHER);
        assertThat(partition.partitionEpoch()).isEqualTo(8);
        assertThat(partition.leaderEpoch()).as("an ISR change never bumps the leader epoch").isEqualTo(5);
        assertThat(log.highWatermark()).as("the HW no longer waits for the removed member").isEqualTo(3);
    }

    @Test
    void aMemberThatHasEverythingIsNotShrunkHoweverOldItsLastFetch() throws Exception {
        leadWith(new int[] {LEADER, FOLLOWER}, 1, 1);
        partition.appendRecordsToLeader(records(2), UnifiedLog.AppendOrigin.CLIENT, (short) 1);
        fetch(FOLLOWER, 2, 10L);
        context.time.advance(10 * LAG_MS);
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).isFalse();
    }

    // ---------------------------------------------------------------- expand

    @Test
    void aFollowerJoinsOnlyOnceItReachedTheEpochStartOffset() throws Exception {
        // Data from an earlier epoch: the new leader's epoch starts at 5 while its high watermark is still 0 (KAFKA-7128).
        log.appendAsLeader(records(5), 0, UnifiedLog.AppendOrigin.CLIENT);
        leadWith(new int[] {LEADER, OTHER}, 1, 1);
        assertThat(partition.leaderEpochStartOffset()).isEqualTo(5);
        assertThat(log.highWatermark()).isEqualTo(0);
        assertThat(partition.highWatermarkBelowEpochStart()).isTrue();

        fetch(FOLLOWER, 3, 10L);
        assertThat(context.submitted).as("at or past the HW but below the epoch start").isEmpty();

        fetch(FOLLOWER, 5, 10L);
        assertThat(context.lastSubmitted().newIsr()).containsExactlyInAnyOrder(LEADER, OTHER, FOLLOWER);
        assertThat(partition.partitionState()).isInstanceOf(PartitionState.PendingExpand.class);
        assertThat(partition.partitionState().maximalIsr()).contains(FOLLOWER);
        assertThat(partition.isr()).doesNotContain(FOLLOWER);
        assertThat(context.lastSubmitted().change().newIsrWithEpochs()).anySatisfy(state -> {
            assertThat(state.brokerId()).isEqualTo(FOLLOWER);
            assertThat(state.brokerEpoch()).isEqualTo(10L);
        });
    }

    @Test
    void aFencedBrokerOrAStaleBrokerEpochDoesNotJoin() {
        leadWith(new int[] {LEADER}, 1, 1);
        context.fenced.add(FOLLOWER);
        fetch(FOLLOWER, 0, 10L);
        assertThat(context.submitted).as("fenced").isEmpty();

        context.fenced.clear();
        context.brokerEpochs.put(FOLLOWER, 12L);
        fetch(FOLLOWER, 0, 11L);
        assertThat(context.submitted).as("the fetch's broker epoch is not the image's (KIP-903)").isEmpty();

        fetch(FOLLOWER, 0, 12L);
        assertThat(context.lastSubmitted().newIsr()).containsExactlyInAnyOrder(LEADER, FOLLOWER);
    }

    @Test
    void aPendingChangeBlocksEveryOtherChange() throws Exception {
        leadWith(new int[] {LEADER, OTHER}, 1, 1);
        fetch(FOLLOWER, 0, 10L);
        assertThat(context.submitted).hasSize(1);
        PartitionState pending = partition.partitionState();

        partition.appendRecordsToLeader(records(1), UnifiedLog.AppendOrigin.CLIENT, (short) 1);
        context.time.advance(LAG_MS + 1);
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).as("OTHER lags, but an expand is pending").isFalse();
        assertThat(context.submitted).hasSize(1);
        assertThat(partition.partitionState()).isSameAs(pending);

        partition.handleAlterPartitionResult(pending, committed(List.of(LEADER, OTHER, FOLLOWER), 1, 2));
        assertThat(partition.isr()).containsExactlyInAnyOrder(LEADER, OTHER, FOLLOWER);
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).isTrue();
        assertThat(context.lastSubmitted().newIsr()).containsExactlyInAnyOrder(LEADER);
    }

    // ---------------------------------------------------------------- answers and the image

    @Test
    void aStaleAlterPartitionAnswerIsIgnored() {
        leadWith(new int[] {LEADER}, 1, 4);
        fetch(FOLLOWER, 0, 10L);
        PartitionState pending = partition.partitionState();
        // The answer's partition epoch is not newer than ours: a duplicate or late answer.
        assertThat(partition.handleAlterPartitionResult(pending, committed(List.of(LEADER, FOLLOWER), 1, 4))).isFalse();
        assertThat(partition.isr()).containsExactly(LEADER);
        assertThat(partition.partitionEpoch()).isEqualTo(4);
        assertThat(partition.partitionState()).isInstanceOf(PartitionState.Committed.class);
    }

    @Test
    void anAnswerToAChangeThatIsNoLongerPendingIsIgnored() {
        leadWith(new int[] {LEADER}, 1, 1);
        fetch(FOLLOWER, 0, 10L);
        PartitionState pending = partition.partitionState();
        // The image wins: a newer partition epoch replaces the committed state and clears the pending change.
        leadWith(new int[] {LEADER, OTHER}, 1, 3);
        assertThat(partition.partitionState()).isInstanceOf(PartitionState.Committed.class);
        assertThat(partition.isr()).containsExactlyInAnyOrder(LEADER, OTHER);

        assertThat(partition.handleAlterPartitionResult(pending, committed(List.of(LEADER, FOLLOWER), 1, 2))).isFalse();
        assertThat(partition.isr()).containsExactlyInAnyOrder(LEADER, OTHER);
        assertThat(partition.partitionEpoch()).isEqualTo(3);
    }

    @Test
    void aRefusalThatOnlyTheImageResolvesWaitsForTheImage() throws Exception {
        leadWith(new int[] {LEADER, FOLLOWER}, 1, 1);
        partition.appendRecordsToLeader(records(1), UnifiedLog.AppendOrigin.CLIENT, (short) 1);
        context.time.advance(LAG_MS + 1);
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).isTrue();
        partition.handleAlterPartitionResult(partition.partitionState(), refused(ErrorCode.INVALID_UPDATE_VERSION));
        assertThat(partition.partitionState()).isEqualTo(new PartitionState.Committed(Set.of(LEADER, FOLLOWER), PartitionState.RECOVERED));
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).as("no retry before a newer image").isFalse();

        leadWith(new int[] {LEADER, FOLLOWER}, 1, 2);
        assertThat(partition.maybeShrinkIsr(context.time.milliseconds())).isTrue();
        assertThat(context.lastSubmitted().change().partitionEpoch()).isEqualTo(2);
    }

    @Test
    void anIneligibleReplicaRefusalIsRetriedAtTheNextCheck() {
        leadWith(new int[] {LEADER}, 1, 1);
        fetch(FOLLOWER, 0, 10L);
        partition.handleAlterPartitionResult(partition.partitionState(), refused(ErrorCode.INELIGIBLE_REPLICA));
        assertThat(partition.partitionState()).isInstanceOf(PartitionState.Committed.class);
        fetch(FOLLOWER, 0, 10L);
        assertThat(context.submitted).hasSize(2);
    }

    // ---------------------------------------------------------------- epochs and high watermark

    @Test
    void theLeaderEpochNeverGoesBack() {
        leadWith(new int[] {LEADER}, 4, 4);
        assertThatThrownBy(() -> leadWith(new int[] {LEADER}, 3, 5))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining(TP.toString()).hasMessageContaining("4").hasMessageContaining("3");
        assertThatThrownBy(() -> partition.makeFollower(registration(new int[] {LEADER, FOLLOWER}, new int[] {FOLLOWER}, FOLLOWER, 2, 6)))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining(TP.toString());
        assertThat(partition.leaderEpoch()).isEqualTo(4);
        assertThat(partition.isLeader()).isTrue();
    }

    @Test
    void theHighWatermarkIsTheMinimumOverTheIsrAndNeverGoesBack() throws Exception {
        leadWith(new int[] {LEADER, FOLLOWER, OTHER}, 1, 1);
        partition.appendRecordsToLeader(records(10), UnifiedLog.AppendOrigin.CLIENT, (short) -1);
        assertThat(log.highWatermark()).isEqualTo(0);
        fetch(FOLLOWER, 10, 10L);
        assertThat(log.highWatermark()).as("OTHER has not fetched").isEqualTo(0);
        fetch(OTHER, 4, 20L);
        assertThat(log.highWatermark()).isEqualTo(4);
        assertThat(context.highWatermarkNotifications).isPositive();
        fetch(OTHER, 2, 20L); // a follower that truncated: the high watermark stays
        assertThat(log.highWatermark()).isEqualTo(4);
        fetch(OTHER, 10, 20L);
        assertThat(log.highWatermark()).isEqualTo(10);
    }

    @Test
    void strictMinIsrHoldsTheHighWatermarkWhileTheIsrIsBelowMinIsr() throws Exception {
        context.strictMinIsr = true;
        leadWith(new int[] {LEADER}, 1, 1);
        partition.appendRecordsToLeader(records(3), UnifiedLog.AppendOrigin.CLIENT, (short) 1);
        assertThat(log.highWatermark()).as("ISR 1 < min ISR 2").isEqualTo(0);
        context.strictMinIsr = false;
        partition.appendRecordsToLeader(records(1), UnifiedLog.AppendOrigin.CLIENT, (short) 1);
        assertThat(log.highWatermark()).isEqualTo(4);
    }

    @Test
    void withFsyncOnAckTheLeaderCountsOnlyWhatItFlushed(@TempDir Path onAckDir) throws Exception {
        LogManager onAck = new LogManager(new LogManager.Settings(List.of(onAckDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, true),
            context.time);
        onAck.startup(topic -> LogConfig.defaults());
        try {
            UnifiedLog onAckLog = onAck.getOrCreateLog(TP, Optional.of(TOPIC_ID), LogConfig.defaults());
            Partition leader = new Partition(TP, TOPIC_ID, onAckLog, context);
            leader.makeLeader(registration(new int[] {LEADER, FOLLOWER}, new int[] {LEADER, FOLLOWER}, LEADER, 1, 1), context.time.milliseconds());
            leader.appendRecordsToLeader(records(3), UnifiedLog.AppendOrigin.CLIENT, (short) -1);
            leader.updateFollowerFetchState(FOLLOWER, 3, 0, context.time.milliseconds(), 3, 10L);
            assertThat(onAckLog.highWatermark()).as("the follower has it, the leader has not fsynced it").isZero();
            onAckLog.flush(2);
            assertThat(leader.onFlushed()).isTrue();
            assertThat(onAckLog.highWatermark()).isEqualTo(2);
            onAckLog.flush(3);
            leader.onFlushed();
            assertThat(onAckLog.highWatermark()).isEqualTo(3);
            assertThat(leader.checkEnoughReplicasReachOffset(3)).isEqualTo(ErrorCode.NONE);
        } finally {
            onAck.close();
        }
    }

    @Test
    void aFollowerDoesNotAppendOrAcknowledge() throws Exception {
        partition.makeFollower(registration(new int[] {LEADER, FOLLOWER}, new int[] {LEADER, FOLLOWER}, FOLLOWER, 2, 2));
        assertThat(partition.role()).isEqualTo(Partition.Role.FOLLOWER);
        assertThatThrownBy(() -> partition.appendRecordsToLeader(records(1), UnifiedLog.AppendOrigin.CLIENT, (short) 1))
            .isInstanceOfSatisfying(ErrorCodeException.class, e -> assertThat(e.error()).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER));
        assertThat(partition.checkEnoughReplicasReachOffset(0)).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        assertThat(partition.leaderEpochStartOffset()).isEqualTo(-1L);
        assertThat(partition.highWatermarkBelowEpochStart()).isFalse();
    }

    @Test
    void aReplicaOutsideTheAssignmentIsNotRecorded() {
        leadWith(new int[] {LEADER}, 1, 1);
        assertThat(partition.updateFollowerFetchState(7, 0, 0, context.time.milliseconds(), 0, 70L)).isFalse();
        assertThat(partition.remoteReplica(7)).isNull();
        assertThat(context.submitted).isEmpty();
    }
}
