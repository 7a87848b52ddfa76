package io.strata.server.replica.fetcher;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The follower state machine against a scripted leader, stepped by {@link ReplicaFetcher#poll}
 * under a fake clock: every outcome is checked on the follower log's real contents.
 */
class ReplicaFetcherTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final TopicPartition TP1 = new TopicPartition("orders", 1);
    private static final UUID TOPIC_ID = new UUID(11, 22);
    private static final int LEADER_ID = 2;
    private static final int BROKER_ID = 1;
    private static final int BACKOFF_MS = 1_000;
    private static final ReplicaFetcherConfig CONFIG = new ReplicaFetcherConfig(500, 1, 1_048_576, 10_485_760, BACKOFF_MS, 1, 30_000);
    /** One batch per partition and fetch (the first batch always comes whole). */
    private static final ReplicaFetcherConfig ONE_BATCH_PER_FETCH = new ReplicaFetcherConfig(500, 1, 1, 10_485_760, BACKOFF_MS, 1, 30_000);

    private final FailedPartitions failed = new FailedPartitions();
    private long nowMs = 10_000;

    private ReplicaFetcher fetcher(FakeLeader leader, ReplicaFetcherConfig config) {
        return new ReplicaFetcher(0, BROKER_ID, () -> 42L, leader, config, failed);
    }

    private static InMemoryLog log(TopicPartition topicPartition) {
        return new InMemoryLog(topicPartition, TOPIC_ID);
    }

    private static void follow(ReplicaFetcher fetcher, InMemoryLog log, int leaderEpoch) {
        fetcher.addPartitions(Map.of(log.topicPartition(), new InitialFetchState(TOPIC_ID, LEADER_ID, leaderEpoch, log)));
    }

    private void pollUntil(ReplicaFetcher fetcher, BooleanSupplier done, String what) {
        for (int i = 0; i < 50; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            fetcher.poll(nowMs);
        }
        fail("not reached after 50 polls: " + what + "; states " + fetcher.partitionStates());
    }

    @Test
    void catchUpCopiesTheLeadersBatchesAndFollowsItsHighWatermark() {
        InMemoryLog leaderLog = log(TP).appendBatch(0, 3).appendBatch(0, 2).appendBatch(1, 4);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 1).highWatermark = 5;
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 1);

        pollUntil(fetcher, () -> follower.logEndOffset() == 9, "caught up");
        assertThat(follower.contents()).isEqualTo(leaderLog.contents());
        assertThat(follower.epochStarts()).isEqualTo(Map.of(0, 0L, 1, 5L));
        assertThat(follower.highWatermark()).isEqualTo(5);

        FetchRequestData request = leader.requestsOf(FetchRequestData.class).get(0);
        assertThat(request.replicaState().replicaId()).isEqualTo(BROKER_ID);
        assertThat(request.replicaState().replicaEpoch()).isEqualTo(42L);
        assertThat(request.maxWaitMs()).isEqualTo(500);
        assertThat(request.minBytes()).isEqualTo(1);
        assertThat(request.maxBytes()).isEqualTo(10_485_760);
        assertThat(request.sessionId()).isZero();
        assertThat(request.sessionEpoch()).as("a full fetch that asks for a session").isEqualTo(0);
        FetchRequestData.FetchPartition partition = request.topics().get(0).partitions().get(0);
        assertThat(request.topics().get(0).topicId()).isEqualTo(TOPIC_ID);
        assertThat(partition.currentLeaderEpoch()).isEqualTo(1);
        assertThat(partition.fetchOffset()).isZero();
        assertThat(partition.lastFetchedEpoch()).isEqualTo(-1);
        assertThat(partition.partitionMaxBytes()).isEqualTo(1_048_576);

        leader.lead(leaderLog, 1).highWatermark = 9;
        pollUntil(fetcher, () -> follower.highWatermark() == 9, "high watermark follows the leader");
        FetchRequestData later = leader.requestsOf(FetchRequestData.class).get(leader.requestsOf(FetchRequestData.class).size() - 1);
        assertThat(later.topics().get(0).partitions().get(0).lastFetchedEpoch()).isEqualTo(1);
        assertThat(later.topics().get(0).partitions().get(0).fetchOffset()).isEqualTo(9);
        assertThat(fetcher.partitionStates().get(TP).lag()).isZero();
    }

    @Test
    void highWatermarkIsBoundedByTheLocalLogEnd() {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 2).appendBatch(1, 2).appendBatch(1, 2);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 1).highWatermark = 6;
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, ONE_BATCH_PER_FETCH);
        follow(fetcher, follower, 1);

        pollUntil(fetcher, () -> follower.logEndOffset() == 2, "first batch");
        assertThat(follower.highWatermark()).isEqualTo(2);
        assertThat(fetcher.partitionStates().get(TP).lag()).isEqualTo(4);
        pollUntil(fetcher, () -> follower.logEndOffset() == 4, "second batch");
        assertThat(follower.highWatermark()).isEqualTo(4);
        pollUntil(fetcher, () -> follower.logEndOffset() == 6, "third batch");
        assertThat(follower.highWatermark()).isEqualTo(6);
        assertThat(follower.contents()).isEqualTo(leaderLog.contents());
    }

    /** KIP-279 with two quick leader changes: follower epochs 1 [0,10) 2 [10,15), leader 1 [0,10) 3 [10,20). */
    @Test
    void divergingEpochTruncatesToTheCommonEpochEndBeforeTheHighWatermarkMoves() throws IOException {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 5).appendBatch(1, 5).appendBatch(3, 5).appendBatch(3, 5);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 3).highWatermark = 20;
        InMemoryLog follower = log(TP).copyFrom(leaderLog, 0, 10).appendBatch(2, 5);
        follower.setHighWatermark(10);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 3);

        fetcher.poll(nowMs); // sends Fetch(offset 15, LastFetchedEpoch 2)
        fetcher.poll(nowMs); // DivergingEpoch(1, 10)
        assertThat(follower.logEndOffset()).isEqualTo(10);
        assertThat(follower.epochStarts()).isEqualTo(Map.of(1, 0L));
        // KAFKA-14704: the answer's high watermark (20) never exposed the divergent offsets 10-14.
        assertThat(follower.maxHighWatermarkSeen()).isEqualTo(10);
        FetchRequestData first = leader.requestsOf(FetchRequestData.class).get(0);
        assertThat(first.topics().get(0).partitions().get(0).lastFetchedEpoch()).isEqualTo(2);
        assertThat(first.topics().get(0).partitions().get(0).fetchOffset()).isEqualTo(15);

        pollUntil(fetcher, () -> follower.logEndOffset() == 20, "caught up in epoch 3");
        assertThat(follower.contents()).isEqualTo(leaderLog.contents());
        assertThat(follower.epochStarts()).isEqualTo(Map.of(1, 0L, 3, 10L));
        assertThat(follower.highWatermark()).isEqualTo(20);
        assertThat(leader.requestsOf(OffsetForLeaderEpochRequestData.class)).isEmpty();
    }

    /** An epoch the follower lacks: follower 1 [0,10) 3 [10,15), leader 1 [0,8) 2 [8,20); two rounds of DivergingEpoch. */
    @Test
    void localEpochMissingFallsBackToTheLargestLocalEpochBelowAndAsksAgain() throws IOException {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 4).appendBatch(1, 4).appendBatch(2, 6).appendBatch(2, 6).assignEpoch(4);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 4).highWatermark = 20;
        InMemoryLog follower = log(TP).copyFrom(leaderLog, 0, 8).appendBatch(1, 2).appendBatch(3, 5);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 4);

        fetcher.poll(nowMs);
        fetcher.poll(nowMs); // DivergingEpoch(2, 20): local largest epoch <= 2 is 1, ending at 10
        assertThat(follower.logEndOffset()).isEqualTo(10);
        assertThat(follower.latestEpoch()).hasValue(1);
        fetcher.poll(nowMs); // DivergingEpoch(1, 8)
        assertThat(follower.logEndOffset()).isEqualTo(8);

        pollUntil(fetcher, () -> follower.logEndOffset() == 20, "caught up");
        assertThat(follower.contents()).isEqualTo(leaderLog.contents());
        FetchRequestData second = leader.requestsOf(FetchRequestData.class).get(1);
        assertThat(second.topics().get(0).partitions().get(0).lastFetchedEpoch()).isEqualTo(1);
        assertThat(second.topics().get(0).partitions().get(0).fetchOffset()).isEqualTo(10);
    }

    /** A leader without DivergingEpoch (KIP-101): OffsetForLeaderEpoch first, the KIP-279 loop on its answers. */
    @Test
    void withoutTruncationOnFetchTheFollowerAsksOffsetForLeaderEpochUntilTheLogsAgree() throws IOException {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 4).appendBatch(1, 4).appendBatch(2, 6).appendBatch(2, 6).assignEpoch(4);
        FakeLeader leader = new FakeLeader(LEADER_ID, false);
        leader.lead(leaderLog, 4).highWatermark = 20;
        InMemoryLog follower = log(TP).copyFrom(leaderLog, 0, 8).appendBatch(1, 2).appendBatch(3, 5);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 4);
        assertThat(fetcher.partitionStates().get(TP).state()).isEqualTo(PartitionFetchState.State.TRUNCATING);

        pollUntil(fetcher, () -> fetcher.partitionStates().get(TP).state() == PartitionFetchState.State.FETCHING, "truncation done");
        assertThat(follower.logEndOffset()).isEqualTo(8);
        assertThat(leader.requestsOf(OffsetForLeaderEpochRequestData.class)).extracting(r -> r.topics().get(0).partitions().get(0).leaderEpoch())
            .containsExactly(3, 1);
        assertThat(leader.requestsOf(OffsetForLeaderEpochRequestData.class).get(0).replicaId()).isEqualTo(BROKER_ID);
        assertThat(leader.requests.subList(0, 2)).allMatch(OffsetForLeaderEpochRequestData.class::isInstance);

        pollUntil(fetcher, () -> follower.logEndOffset() == 20, "caught up");
        assertThat(follower.contents()).isEqualTo(leaderLog.contents());
    }

    @Test
    void aLogWithDataButNoEpochsTruncatesToItsHighWatermarkFirst() {
        InMemoryLog leaderLog = log(TP).appendBatch(-1, 5).appendBatch(1, 5);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 1).highWatermark = 10;
        InMemoryLog follower = log(TP).appendBatch(-1, 5).appendBatch(-1, 3);
        follower.setHighWatermark(5);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 1);
        assertThat(fetcher.partitionStates().get(TP).state()).isEqualTo(PartitionFetchState.State.TRUNCATING);

        fetcher.poll(nowMs);
        assertThat(follower.logEndOffset()).isEqualTo(5);
        pollUntil(fetcher, () -> follower.logEndOffset() == 10, "caught up");
        assertThat(follower.contents()).isEqualTo(leaderLog.contents());
    }

    @Test
    void outOfRangeAboveTheLeadersEndTruncatesToIt() {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 10);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 2).highWatermark = 10;
        InMemoryLog follower = log(TP).appendBatch(1, 10).appendBatch(1, 5);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 2);
        leader.answerNext(TP, ErrorCode.OFFSET_OUT_OF_RANGE);

        pollUntil(fetcher, () -> follower.logEndOffset() == 10, "truncated to the leader's end");
        ListOffsetsRequestData listOffsets = leader.requestsOf(ListOffsetsRequestData.class).get(0);
        assertThat(listOffsets.replicaId()).isEqualTo(BROKER_ID);
        assertThat(listOffsets.topics().get(0).partitions().get(0).timestamp()).isEqualTo(ReplicaFetcher.LATEST_TIMESTAMP);
        assertThat(listOffsets.topics().get(0).partitions().get(0).currentLeaderEpoch()).isEqualTo(2);

        leaderLog.appendBatch(2, 3);
        pollUntil(fetcher, () -> follower.logEndOffset() == 13, "fetching again");
        assertThat(follower.contents().get(1)).isEqualTo(leaderLog.contents().get(1));
        assertThat(leader.requestsOf(ListOffsetsRequestData.class)).hasSize(1);
    }

    @Test
    void outOfRangeBelowTheLeadersStartRestartsTheLogThere() {
        InMemoryLog leaderLog = log(TP);
        leaderLog.truncateFullyAndStartAt(100);
        leaderLog.appendBatch(3, 4).appendBatch(3, 6);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 3).highWatermark = 110;
        InMemoryLog follower = log(TP).appendBatch(1, 20);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 3);

        pollUntil(fetcher, () -> follower.logEndOffset() == 110, "restarted at the leader's start and caught up");
        assertThat(follower.logStartOffset()).isEqualTo(100);
        assertThat(follower.contents()).isEqualTo(leaderLog.contents());
        assertThat(leader.requestsOf(ListOffsetsRequestData.class)).extracting(r -> r.topics().get(0).partitions().get(0).timestamp())
            .containsExactly(ReplicaFetcher.LATEST_TIMESTAMP, ReplicaFetcher.EARLIEST_TIMESTAMP);
    }

    @Test
    void fencedEpochStopsThePartitionUntilItIsAddedWithTheNewEpoch() {
        InMemoryLog leaderLog = log(TP).appendBatch(5, 4);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 5).highWatermark = 4;
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 4);

        fetcher.poll(nowMs);
        fetcher.poll(nowMs);
        assertThat(failed.contains(TP)).isTrue();
        assertThat(fetcher.partitionCount()).isZero();
        int fetches = leader.requestsOf(FetchRequestData.class).size();
        nowMs += 10 * BACKOFF_MS;
        fetcher.poll(nowMs);
        assertThat(leader.requestsOf(FetchRequestData.class)).hasSize(fetches);

        follow(fetcher, follower, 5);
        assertThat(failed.contains(TP)).isFalse();
        pollUntil(fetcher, () -> follower.logEndOffset() == 4, "resumed in epoch 5");
    }

    @Test
    void unknownLeaderEpochDelaysThePartitionThenRetries() {
        InMemoryLog leaderLog = log(TP).appendBatch(5, 4);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        FakeLeader.Led led = leader.lead(leaderLog, 5);
        led.highWatermark = 4;
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 6);

        fetcher.poll(nowMs);
        long next = fetcher.poll(nowMs); // UNKNOWN_LEADER_EPOCH: delayed
        assertThat(fetcher.partitionStates().get(TP).isDelayed(nowMs)).isTrue();
        assertThat(next).isEqualTo(nowMs + BACKOFF_MS);
        int fetches = leader.requestsOf(FetchRequestData.class).size();
        fetcher.poll(nowMs + BACKOFF_MS - 1);
        assertThat(leader.requestsOf(FetchRequestData.class)).hasSize(fetches);
        assertThat(failed.contains(TP)).isFalse();

        led.leaderEpoch = 6; // the leader learns the new epoch
        nowMs += BACKOFF_MS;
        pollUntil(fetcher, () -> follower.logEndOffset() == 4, "resumed after the back-off");
    }

    @Test
    void notLeaderDelaysOnlyThatPartition() {
        InMemoryLog leaderLog0 = log(TP).appendBatch(1, 3);
        InMemoryLog leaderLog1 = log(TP1).appendBatch(1, 3);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog0, 1).highWatermark = 3;
        leader.lead(leaderLog1, 1).highWatermark = 3;
        InMemoryLog follower0 = log(TP);
        InMemoryLog follower1 = log(TP1);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower0, 1);
        follow(fetcher, follower1, 1);
        leader.answerNext(TP, ErrorCode.NOT_LEADER_OR_FOLLOWER);

        pollUntil(fetcher, () -> follower1.logEndOffset() == 3, "the other partition goes on");
        assertThat(follower0.logEndOffset()).isZero();
        assertThat(fetcher.partitionStates().get(TP).isDelayed(nowMs)).isTrue();
        nowMs += BACKOFF_MS;
        pollUntil(fetcher, () -> follower0.logEndOffset() == 3, "retried after the back-off");
    }

    @Test
    void aStorageErrorFailsOnlyThatPartition() {
        InMemoryLog leaderLog0 = log(TP).appendBatch(1, 3).appendBatch(1, 3);
        InMemoryLog leaderLog1 = log(TP1).appendBatch(1, 3).appendBatch(1, 3);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog0, 1).highWatermark = 6;
        leader.lead(leaderLog1, 1).highWatermark = 6;
        InMemoryLog follower0 = log(TP);
        InMemoryLog follower1 = log(TP1);
        follower0.failNextAppend(new IOException("disk gone (scripted)"));
        ReplicaFetcher fetcher = fetcher(leader, ONE_BATCH_PER_FETCH);
        follow(fetcher, follower0, 1);
        follow(fetcher, follower1, 1);

        pollUntil(fetcher, () -> follower1.logEndOffset() == 6, "the healthy partition catches up");
        assertThat(failed.partitions()).containsExactly(TP);
        assertThat(fetcher.partitionStates()).containsOnlyKeys(TP1);
        assertThat(follower0.logEndOffset()).isZero();
    }

    @Test
    void aCorruptBatchDelaysThePartitionWithoutAppending() {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 3);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 1).highWatermark = 3;
        // A batch from an epoch above the one this replica follows is refused (Kafka 4's follower check).
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        leaderLog.appendBatch(7, 1);
        follow(fetcher, follower, 1);

        fetcher.poll(nowMs);
        fetcher.poll(nowMs);
        assertThat(follower.logEndOffset()).isZero();
        assertThat(fetcher.partitionStates().get(TP).isDelayed(nowMs)).isTrue();
        assertThat(failed.contains(TP)).isFalse();
    }

    @Test
    void aConnectionFailureBacksOffTheWholeFetcher() {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 3);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 1).highWatermark = 3;
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 1);
        leader.failNextRequests(1);

        fetcher.poll(nowMs);
        long next = fetcher.poll(nowMs); // settles the failure
        assertThat(next).isEqualTo(nowMs + BACKOFF_MS);
        assertThat(fetcher.failedRequests()).isEqualTo(1);
        fetcher.poll(nowMs + BACKOFF_MS - 1);
        assertThat(leader.requestsOf(FetchRequestData.class)).hasSize(1);

        nowMs += BACKOFF_MS;
        pollUntil(fetcher, () -> follower.logEndOffset() == 3, "fetching after the back-off");
        assertThat(failed.contains(TP)).isFalse();
    }

    @Test
    void anUnansweredRequestIsAbandonedAtItsDeadline() {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 3);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 1).highWatermark = 3;
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 1);
        leader.holdRequests(true);

        long deadline = fetcher.poll(nowMs);
        assertThat(deadline).isEqualTo(nowMs + CONFIG.socketTimeoutMs() + ReplicaFetcher.IN_FLIGHT_DEADLINE_SLACK_MS);
        assertThat(fetcher.poll(deadline - 1)).isEqualTo(deadline);
        assertThat(fetcher.poll(deadline)).isEqualTo(deadline + BACKOFF_MS);
        assertThat(fetcher.failedRequests()).isEqualTo(1);
        leader.holdRequests(false);
        nowMs = deadline + BACKOFF_MS;
        pollUntil(fetcher, () -> follower.logEndOffset() == 3, "fetching after the abandoned request");
    }

    @Test
    void aPartitionThatGotBytesMovesToTheEndOfTheNextRequest() {
        InMemoryLog leaderLog0 = log(TP).appendBatch(1, 3);
        InMemoryLog leaderLog1 = log(TP1);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog0, 1).highWatermark = 3;
        leader.lead(leaderLog1, 1);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        fetcher.addPartitions(new java.util.LinkedHashMap<>(Map.of(TP, new InitialFetchState(TOPIC_ID, LEADER_ID, 1, log(TP)))));
        fetcher.addPartitions(Map.of(TP1, new InitialFetchState(TOPIC_ID, LEADER_ID, 1, log(TP1))));

        fetcher.poll(nowMs);
        fetcher.poll(nowMs);
        assertThat(leader.requestsOf(FetchRequestData.class)).extracting(r -> r.topics().get(0).partitions().stream()
            .map(FetchRequestData.FetchPartition::partition).toList()).containsExactly(java.util.List.of(0, 1), java.util.List.of(1, 0));
    }

    @Test
    void anAnswerForARemovedPartitionIsIgnored() {
        InMemoryLog leaderLog = log(TP).appendBatch(1, 3);
        FakeLeader leader = new FakeLeader(LEADER_ID);
        leader.lead(leaderLog, 1).highWatermark = 3;
        InMemoryLog follower = log(TP);
        ReplicaFetcher fetcher = fetcher(leader, CONFIG);
        follow(fetcher, follower, 1);

        fetcher.poll(nowMs); // Fetch sent and answered (the fake answers at once), not yet settled
        assertThat(fetcher.removePartitions(java.util.Set.of(TP))).containsKey(TP);
        fetcher.poll(nowMs);
        assertThat(follower.logEndOffset()).isZero();
    }
}
