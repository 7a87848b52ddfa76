package io.strata.server.replica;

import io.strata.common.Time;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.RemoveTopicRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The leader's side of replication through the {@link ReplicaManager}: acks=all waits for the
 * ISR (DelayedProduce on checkEnoughReplicasReachOffset), min ISR before and after the append,
 * leadership loss, time-outs, and followers' fetches (high watermark, DivergingEpoch, unknown
 * replicas, KAFKA-9952), and the metadata image handing followers to the fetchers.
 */
class ReplicationLeaderTest {
    private static final int NODE = 1;
    private static final UUID TOPIC_ID = UUID.randomUUID();
    private static final TopicPartition TP = new TopicPartition("replicated", 0);
    private static final long LONG_WAIT_MS = 30_000L;

    @TempDir
    Path dataDir;
    private LogManager logManager;
    private DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private ReplicaManager replicaManager;
    private final RecordingFetchers fetchers = new RecordingFetchers();
    private MetadataImage image = MetadataImage.EMPTY;

    /** The fetcher hook, recording what it is told. */
    static final class RecordingFetchers implements FollowerFetching {
        final List<Partition> followed = new ArrayList<>();
        final List<TopicPartition> unfollowed = new ArrayList<>();

        @Override
        public synchronized void follow(Collection<Partition> partitions) {
            followed.addAll(partitions);
        }

        @Override
        public synchronized void unfollow(Collection<TopicPartition> partitions) {
            unfollowed.addAll(partitions);
        }
    }

    @BeforeEach
    void start() throws Exception {
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            Time.SYSTEM);
        logManager.startup(topic -> io.strata.storage.LogConfig.defaults());
        producePurgatory = new DelayedOperationPurgatory<>("produce", Time.SYSTEM, 1_000);
        fetchPurgatory = new DelayedOperationPurgatory<>("fetch", Time.SYSTEM, 1_000);
        replicaManager = new ReplicaManager(NODE, logManager, Map.of("min.insync.replicas", "2"), Time.SYSTEM, producePurgatory, fetchPurgatory);
        replicaManager.setFollowerFetching(fetchers);
    }

    @AfterEach
    void stop() throws Exception {
        replicaManager.close();
        producePurgatory.shutdown();
        fetchPurgatory.shutdown();
        logManager.close();
    }

    private void apply(ApiMessage... records) {
        MetadataImage next = image.apply(List.of(records), image.offset() + 1);
        replicaManager.publish(image, next);
        image = next;
    }

    private static RegisterBrokerRecord broker(int id, long epoch) {
        return new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(epoch).setIncarnationId(UUID.randomUUID()).setFenced(false);
    }

    private void createTopic(int leader, List<Integer> isr) {
        PartitionRecord partition = new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(0).setLeader(leader).setLeaderEpoch(0)
            .setPartitionEpoch(0);
        partition.replicas().addAll(List.of(1, 2, 3));
        partition.isr().addAll(isr);
        apply(broker(2, 10L), broker(3, 20L), new TopicRecord().setName(TP.topic()).setTopicId(TOPIC_ID), partition);
    }

    private void change(PartitionChangeRecord change) {
        apply(change.setTopicId(TOPIC_ID).setPartitionId(0));
    }

    private CompletableFuture<ProducePartitionResult> produce(short acks, long timeoutMs, int count) {
        CompletableFuture<ProducePartitionResult> result = new CompletableFuture<>();
        Map<TopicPartition, io.strata.protocol.records.MemoryRecords> entries = new LinkedHashMap<>();
        entries.put(TP, PartitionStateTest.records(count));
        replicaManager.appendRecords(timeoutMs, acks, false, UnifiedLog.AppendOrigin.CLIENT, entries, results -> result.complete(results.get(TP)));
        return result;
    }

    private CompletableFuture<FetchPartitionData> followerFetch(int replica, long brokerEpoch, long offset, int lastFetchedEpoch, long maxWaitMs) {
        CompletableFuture<FetchPartitionData> result = new CompletableFuture<>();
        LinkedHashMap<TopicPartition, PartitionFetchInfo> infos = new LinkedHashMap<>();
        infos.put(TP, new PartitionFetchInfo(offset, 1 << 20, partition().leaderEpoch(), lastFetchedEpoch, 0L));
        replicaManager.fetchMessages(FetchParams.follower(maxWaitMs, 1, 1 << 20, replica, brokerEpoch), infos,
            results -> result.complete(results.get(TP)));
        return result;
    }

    private Partition partition() {
        return replicaManager.partition(TP);
    }

    // ---------------------------------------------------------------- throttles

    @Test
    void aThrottledFollowerOutsideTheIsrReadsNothingWhileTheLeaderQuotaIsExceededAndAnInSyncOneAlwaysReads() throws Exception {
        createTopic(NODE, List.of(1, 2));
        assertThat(produce((short) 1, LONG_WAIT_MS, 3).get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NONE);
        io.strata.common.MockTime clock = new io.strata.common.MockTime();
        ReplicationQuotaManager quota = new ReplicationQuotaManager(ReplicationQuotaManager.Side.LEADER, 11, 1, clock);
        quota.updateQuota(100);
        quota.markThrottled(TP.topic());
        replicaManager.setLeaderReplicationQuota(quota);
        quota.record(10_000);
        assertThat(quota.isQuotaExceeded()).isTrue();

        FetchPartitionData outOfSync = followerFetch(3, 20L, 0, -1, 0).get(10, TimeUnit.SECONDS);
        assertThat(outOfSync.error()).isEqualTo(ErrorCode.NONE);
        assertThat(outOfSync.records().sizeInBytes()).as("replica 3 is not in the ISR: held back").isZero();
        assertThat(partition().remoteReplica(3).logEndOffset()).as("its fetch position is still recorded").isZero();

        double before = quota.byteRate();
        FetchPartitionData inSync = followerFetch(2, 10L, 0, -1, 0).get(10, TimeUnit.SECONDS);
        assertThat(inSync.records().sizeInBytes()).as("an ISR member is never throttled").isPositive();
        assertThat(quota.byteRate()).as("the bytes of a throttled partition are counted").isGreaterThan(before);

        quota.updateQuota(ReplicationQuotaManager.UNLIMITED);
        assertThat(followerFetch(3, 20L, 0, -1, 0).get(10, TimeUnit.SECONDS).records().sizeInBytes()).isPositive();

        quota.updateQuota(100);
        quota.removeThrottle(TP.topic());
        assertThat(followerFetch(3, 20L, 0, -1, 0).get(10, TimeUnit.SECONDS).records().sizeInBytes())
            .as("a partition without a throttle is not held back").isPositive();
    }

    // ---------------------------------------------------------------- produce

    @Test
    void acksAllIsAnsweredOnceEveryIsrMemberHasTheWrite() throws Exception {
        createTopic(NODE, List.of(1, 2, 3));
        CompletableFuture<ProducePartitionResult> produced = produce((short) -1, LONG_WAIT_MS, 3);
        assertThat(produced).isNotDone();

        FetchPartitionData first = followerFetch(2, 10L, 3, 0, 0).get(10, TimeUnit.SECONDS);
        assertThat(first.highWatermark()).as("replica 3 has not fetched").isZero();
        assertThat(produced).isNotDone();

        FetchPartitionData second = followerFetch(3, 20L, 3, 0, 0).get(10, TimeUnit.SECONDS);
        assertThat(second.highWatermark()).isEqualTo(3);
        assertThat(produced.get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NONE);
        assertThat(produced.get().baseOffset()).isZero();
    }

    @Test
    void acksAllIsRefusedBeforeTheAppendWhileTheIsrIsBelowMinIsr() throws Exception {
        createTopic(NODE, List.of(1));
        assertThat(produce((short) -1, LONG_WAIT_MS, 2).get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NOT_ENOUGH_REPLICAS);
        assertThat(partition().log().logEndOffset()).as("nothing appended").isZero();

        ProducePartitionResult acksOne = produce((short) 1, LONG_WAIT_MS, 2).get(10, TimeUnit.SECONDS);
        assertThat(acksOne.error()).isEqualTo(ErrorCode.NONE);
        assertThat(partition().log().highWatermark()).as("ISR = [self]: the high watermark follows the log end").isEqualTo(2);
    }

    @Test
    void anIsrThatShrankBelowMinIsrAfterTheAppendIsNotEnoughReplicasAfterAppend() throws Exception {
        createTopic(NODE, List.of(1, 2));
        CompletableFuture<ProducePartitionResult> produced = produce((short) -1, LONG_WAIT_MS, 1);
        assertThat(produced).isNotDone();
        // The controller fenced broker 2 and removed it from the ISR (a newer partition epoch, the same leader epoch). A removed
        // member that is still caught up and eligible would keep holding the high watermark, as in Kafka; a fenced one does not.
        apply(new io.strata.metadata.record.FenceBrokerRecord().setBrokerId(2).setBrokerEpoch(10L),
            new PartitionChangeRecord().setTopicId(TOPIC_ID).setPartitionId(0).setIsr(List.of(1)));
        assertThat(partition().leaderEpoch()).isZero();
        assertThat(produced.get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        assertThat(partition().log().highWatermark()).isEqualTo(1);
    }

    @Test
    void aParkedProduceIsAnsweredNotLeaderAtOnceWhenThisNodeBecomesAFollower() throws Exception {
        createTopic(NODE, List.of(1, 2, 3));
        CompletableFuture<ProducePartitionResult> produced = produce((short) -1, LONG_WAIT_MS, 1);
        change(new PartitionChangeRecord().setLeader(2));
        assertThat(produced.get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        assertThat(fetchers.followed).singleElement().satisfies(partition -> {
            assertThat(partition.leaderId()).isEqualTo(2);
            assertThat(partition.leaderEpoch()).isEqualTo(1);
            assertThat(partition.topicId()).isEqualTo(TOPIC_ID);
        });
    }

    @Test
    void acksAllThatTheIsrDoesNotReachInTimeIsRequestTimedOut() throws Exception {
        createTopic(NODE, List.of(1, 2, 3));
        CompletableFuture<ProducePartitionResult> produced = produce((short) -1, 100, 1);
        assertThat(produced.get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.REQUEST_TIMED_OUT);
    }

    // ---------------------------------------------------------------- follower fetches

    @Test
    void aFollowerWhoseLastFetchedEpochDivergedGetsDivergingEpochAndIsNotRecorded() throws Exception {
        createTopic(NODE, List.of(1, 2, 3));
        produce((short) 1, LONG_WAIT_MS, 3).get(10, TimeUnit.SECONDS);
        change(new PartitionChangeRecord().setLeader(NODE)); // a new leader epoch (1) on this node, starting at offset 3
        assertThat(partition().leaderEpoch()).isEqualTo(1);
        assertThat(partition().leaderEpochStartOffset()).isEqualTo(3);
        produce((short) 1, LONG_WAIT_MS, 2).get(10, TimeUnit.SECONDS);

        // The follower has offsets up to 4 in epoch 0, but epoch 0 ended at 3 here.
        FetchPartitionData diverged = followerFetch(2, 10L, 5, 0, LONG_WAIT_MS).get(10, TimeUnit.SECONDS);
        assertThat(diverged.error()).isEqualTo(ErrorCode.NONE);
        assertThat(diverged.divergingEpoch()).isEqualTo(new io.strata.storage.EpochOffset(0, 3));
        assertThat(diverged.records().sizeInBytes()).isZero();
        assertThat(partition().remoteReplica(2).logEndOffset()).as("no follower state update (KAFKA-13141)").isEqualTo(RemoteReplica.UNKNOWN_OFFSET);

        FetchPartitionData truncated = followerFetch(2, 10L, 3, 0, 0).get(10, TimeUnit.SECONDS);
        assertThat(truncated.divergingEpoch()).isNull();
        assertThat(truncated.records().sizeInBytes()).isPositive();
        assertThat(partition().remoteReplica(2).logEndOffset()).isEqualTo(3);
    }

    @Test
    void aReplicaOutsideTheAssignmentIsRefusedAndNotRecorded() throws Exception {
        createTopic(NODE, List.of(1, 2, 3));
        produce((short) 1, LONG_WAIT_MS, 2).get(10, TimeUnit.SECONDS);
        // Kafka 4's followerReplicaOrThrow: UNKNOWN_LEADER_EPOCH with a leader epoch in the request, NOT_LEADER_OR_FOLLOWER without.
        FetchPartitionData data = followerFetch(7, 70L, 0, -1, 0).get(10, TimeUnit.SECONDS);
        assertThat(data.error()).isEqualTo(ErrorCode.UNKNOWN_LEADER_EPOCH);
        assertThat(data.records().sizeInBytes()).as("nothing above the high watermark for a non-replica").isZero();
        assertThat(partition().remoteReplica(7)).isNull();
        assertThat(partition().log().highWatermark()).isZero();
    }

    @Test
    void aParkedFollowerFetchIsNotAnsweredByAHighWatermarkMoveOnlyByData() throws Exception {
        createTopic(NODE, List.of(1, 2, 3));
        produce((short) 1, LONG_WAIT_MS, 2).get(10, TimeUnit.SECONDS);
        CompletableFuture<FetchPartitionData> parked = followerFetch(2, 10L, 2, 0, LONG_WAIT_MS);
        assertThat(parked).isNotDone();
        followerFetch(3, 20L, 2, 0, 0).get(10, TimeUnit.SECONDS);
        assertThat(partition().log().highWatermark()).isEqualTo(2);
        assertThat(parked).as("the high watermark moved, the log end did not (KAFKA-9952)").isNotDone();

        produce((short) 1, LONG_WAIT_MS, 1).get(10, TimeUnit.SECONDS);
        FetchPartitionData woken = parked.get(10, TimeUnit.SECONDS);
        assertThat(woken.records().sizeInBytes()).isPositive();
    }

    @Test
    void aFollowerFetchWithAStaleLeaderEpochIsFenced() throws Exception {
        createTopic(NODE, List.of(1, 2, 3));
        change(new PartitionChangeRecord().setLeader(NODE));
        LinkedHashMap<TopicPartition, PartitionFetchInfo> infos = new LinkedHashMap<>();
        infos.put(TP, new PartitionFetchInfo(0, 1 << 20, 0, -1, 0L));
        CompletableFuture<FetchPartitionData> result = new CompletableFuture<>();
        replicaManager.fetchMessages(FetchParams.follower(0, 1, 1 << 20, 2, 10L), infos, results -> result.complete(results.get(TP)));
        assertThat(result.get(10, TimeUnit.SECONDS).error()).isEqualTo(ErrorCode.FENCED_LEADER_EPOCH);
        assertThat(partition().remoteReplica(2).logEndOffset()).isEqualTo(RemoteReplica.UNKNOWN_OFFSET);
    }

    // ---------------------------------------------------------------- metadata

    @Test
    void anImageWithAnOlderLeaderEpochIsNotApplied() {
        createTopic(NODE, List.of(1, 2, 3));
        MetadataImage epochZero = image;
        change(new PartitionChangeRecord().setLeader(NODE));
        MetadataImage epochOne = image;
        replicaManager.publish(epochOne, epochZero.withOffset(epochOne.offset() + 1));
        assertThat(partition().leaderEpoch()).isEqualTo(1);
        assertThat(partition().isLeader()).isTrue();
    }

    @Test
    void theImageHandsFollowersToTheFetchersAndTakesLeadersAndRemovedPartitionsBack() {
        createTopic(2, List.of(1, 2, 3));
        assertThat(partition().role()).isEqualTo(Partition.Role.FOLLOWER);
        assertThat(fetchers.followed).extracting(Partition::topicPartition).containsExactly(TP);

        change(new PartitionChangeRecord().setIsr(List.of(1, 2))); // ISR only: no new fetch
        assertThat(fetchers.followed).hasSize(1);

        change(new PartitionChangeRecord().setLeader(NODE));
        assertThat(partition().isLeader()).isTrue();
        assertThat(fetchers.unfollowed).containsExactly(TP);
        assertThat(partition().isr()).containsExactlyInAnyOrder(1, 2);

        apply(new RemoveTopicRecord().setTopicId(TOPIC_ID));
        assertThat(replicaManager.partition(TP)).isNull();
        assertThat(fetchers.unfollowed).containsExactly(TP, TP);
    }

    @Test
    void theShrinkCheckShrinksALaggingMemberThroughTheSubmitter() throws Exception {
        List<List<Integer>> sent = new ArrayList<>();
        replicaManager.setIsrChangeSubmitter((topicPartition, topicId, change) -> {
            List<Integer> isr = new ArrayList<>();
            change.newIsrWithEpochs().forEach(state -> isr.add(state.brokerId()));
            sent.add(isr);
            return new CompletableFuture<>();
        });
        replicaManager.startIsrShrinkTask(60_000L); // the periodic run is not awaited: the check is called directly
        createTopic(NODE, List.of(1, 2, 3));
        produce((short) 1, LONG_WAIT_MS, 1).get(10, TimeUnit.SECONDS);
        replicaManager.maybeShrinkIsrs();
        assertThat(sent).as("nobody lagged for 60 s yet").isEmpty();
        assertThat(partition().partitionState()).isInstanceOf(PartitionState.Committed.class);
    }

    @Test
    void committedAndRefusedIsrChangesAreCounted() throws Exception {
        List<CompletableFuture<io.strata.protocol.message.AlterPartitionResponseData.PartitionData>> answers = new ArrayList<>();
        replicaManager.setIsrChangeSubmitter((topicPartition, topicId, change) -> {
            CompletableFuture<io.strata.protocol.message.AlterPartitionResponseData.PartitionData> answer = new CompletableFuture<>();
            answers.add(answer);
            return answer;
        });
        createTopic(NODE, List.of(1, 2));
        followerFetch(3, 20L, 0, -1, 0).get(10, TimeUnit.SECONDS);
        assertThat(answers).as("replica 3 is caught up and eligible: an expand").hasSize(1);
        answers.get(0).complete(new io.strata.protocol.message.AlterPartitionResponseData.PartitionData().setPartitionIndex(0)
            .setErrorCode(ErrorCode.INELIGIBLE_REPLICA.code()));
        assertThat(replicaManager.failedIsrUpdates()).isEqualTo(1);
        followerFetch(3, 20L, 0, -1, 0).get(10, TimeUnit.SECONDS);
        answers.get(1).complete(new io.strata.protocol.message.AlterPartitionResponseData.PartitionData().setPartitionIndex(0)
            .setErrorCode(ErrorCode.NONE.code()).setLeaderId(NODE).setLeaderEpoch(0).setIsr(List.of(1, 2, 3)).setPartitionEpoch(1));
        assertThat(replicaManager.isrExpands()).isEqualTo(1);
        assertThat(partition().isr()).containsExactlyInAnyOrder(1, 2, 3);
    }
}
