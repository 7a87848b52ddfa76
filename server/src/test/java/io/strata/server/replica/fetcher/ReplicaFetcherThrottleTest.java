package io.strata.server.replica.fetcher;

import io.strata.common.MockTime;
import io.strata.protocol.message.FetchRequestData;
import io.strata.server.replica.ReplicationQuotaManager;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The follower side of the replication throttle (Kafka's {@code shouldFollowerThrottle}): a
 * throttled partition that is not caught up is left out of the Fetch while the quota is exceeded;
 * a caught-up one (lag 0) and an unthrottled one are always fetched; appended bytes of throttled
 * partitions are counted.
 */
class ReplicaFetcherThrottleTest {
    private static final UUID TOPIC_ID = new UUID(11, 22);
    private static final TopicPartition THROTTLED = new TopicPartition("orders", 0);
    private static final TopicPartition FREE = new TopicPartition("orders", 1);
    private static final int LEADER_ID = 2;
    private static final int BACKOFF_MS = 1_000;
    private static final ReplicaFetcherConfig ONE_BATCH_PER_FETCH = new ReplicaFetcherConfig(500, 1, 1, 10_485_760, BACKOFF_MS, 1, 30_000);

    private final MockTime time = new MockTime();
    private final ReplicationQuotaManager quota = new ReplicationQuotaManager(ReplicationQuotaManager.Side.FOLLOWER, 11, 1, time);
    private final FakeLeader leader = new FakeLeader(LEADER_ID);
    private final ReplicaFetcher fetcher = new ReplicaFetcher(0, 1, () -> 42L, leader, ONE_BATCH_PER_FETCH, new FailedPartitions(), quota);
    private long nowMs = 10_000;

    private static InMemoryLog log(TopicPartition topicPartition) {
        return new InMemoryLog(topicPartition, TOPIC_ID);
    }

    private void follow(InMemoryLog log) {
        fetcher.addPartitions(Map.of(log.topicPartition(), new InitialFetchState(TOPIC_ID, LEADER_ID, 1, log)));
    }

    private void pollUntil(BooleanSupplier done, String what) {
        for (int i = 0; i < 50; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            fetcher.poll(nowMs);
        }
        fail("not reached after 50 polls: " + what + "; states " + fetcher.partitionStates());
    }

    private List<Integer> partitionsOf(FetchRequestData request) {
        List<Integer> partitions = new ArrayList<>();
        request.topics().forEach(topic -> topic.partitions().forEach(partition -> partitions.add(partition.partition())));
        return partitions;
    }

    private FetchRequestData lastFetch() {
        List<FetchRequestData> fetches = leader.requestsOf(FetchRequestData.class);
        return fetches.get(fetches.size() - 1);
    }

    @Test
    void aThrottledPartitionBehindIsLeftOutWhileTheQuotaIsExceededAndItsBytesAreCounted() {
        InMemoryLog leaderThrottled = log(THROTTLED).appendBatch(1, 2).appendBatch(1, 2).appendBatch(1, 2);
        InMemoryLog leaderFree = log(FREE).appendBatch(1, 2).appendBatch(1, 2).appendBatch(1, 2);
        leader.lead(leaderThrottled, 1).highWatermark = 6;
        leader.lead(leaderFree, 1).highWatermark = 6;
        quota.updateQuota(1);
        quota.markThrottled(THROTTLED.topic(), List.of(THROTTLED.partition()));
        InMemoryLog followerThrottled = log(THROTTLED);
        InMemoryLog followerFree = log(FREE);
        follow(followerThrottled);
        follow(followerFree);

        pollUntil(() -> followerThrottled.logEndOffset() == 2, "first batch while the quota is not yet exceeded");
        assertThat(quota.byteRate()).as("appended bytes of the throttled partition are counted").isPositive();
        assertThat(quota.isQuotaExceeded()).isTrue();

        pollUntil(() -> followerFree.logEndOffset() == 6, "the unthrottled partition catches up");
        assertThat(followerThrottled.logEndOffset()).as("held back while the quota is exceeded").isEqualTo(2);
        assertThat(partitionsOf(lastFetch())).doesNotContain(THROTTLED.partition());

        quota.updateQuota(ReplicationQuotaManager.UNLIMITED);
        pollUntil(() -> followerThrottled.logEndOffset() == 6, "fetched again once the quota allows");
        assertThat(followerThrottled.contents()).isEqualTo(leaderThrottled.contents());
    }

    @Test
    void aCaughtUpThrottledPartitionIsNeverLeftOut() {
        InMemoryLog leaderLog = log(THROTTLED).appendBatch(1, 2);
        FakeLeader.Led led = leader.lead(leaderLog, 1);
        led.highWatermark = 2;
        quota.markThrottled(THROTTLED.topic());
        InMemoryLog follower = log(THROTTLED);
        follow(follower);
        pollUntil(() -> follower.logEndOffset() == 2 && fetcher.partitionStates().get(THROTTLED).lag() == 0, "caught up");

        quota.updateQuota(1);
        quota.record(1_000_000);
        assertThat(quota.isQuotaExceeded()).isTrue();
        leaderLog.appendBatch(1, 2);
        pollUntil(() -> follower.logEndOffset() == 4, "an in-sync replica keeps fetching over the quota");
        assertThat(partitionsOf(lastFetch())).contains(THROTTLED.partition());
    }

    @Test
    void whenEveryReadyPartitionIsThrottledNothingIsSentAndTheFetcherLooksAgainAfterTheBackoff() {
        leader.lead(log(THROTTLED).appendBatch(1, 2), 1).highWatermark = 2;
        quota.updateQuota(1);
        quota.markThrottled(THROTTLED.topic());
        quota.record(1_000_000);
        follow(log(THROTTLED));

        long next = fetcher.poll(nowMs);
        assertThat(leader.requestsOf(FetchRequestData.class)).isEmpty();
        assertThat(next).isEqualTo(nowMs + BACKOFF_MS);
    }
}
