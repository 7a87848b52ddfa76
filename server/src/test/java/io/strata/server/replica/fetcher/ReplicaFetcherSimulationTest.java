package io.strata.server.replica.fetcher;

import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two replicas of one partition under seeded random histories: leaders append while the other
 * replica fetches a random part, then a random replica (caught up or not: unclean elections
 * included) leads the next epoch, with a fresh fetcher as the metadata would start it. Invariants:
 * after every poll that appended, the follower's log is a prefix of the leader's, batch for batch
 * (it only appends once its log agrees with the leader's, KIP-279); its high watermark never passes
 * the leader's; and after the last election the follower converges to the leader's exact bytes.
 * A failing seed is printed in the assertion message; keep it as a plain test.
 */
class ReplicaFetcherSimulationTest {
    private static final TopicPartition TP = new TopicPartition("simulated", 0);
    private static final UUID TOPIC_ID = new UUID(7, 8);
    private static final ReplicaFetcherConfig ONE_BATCH_PER_FETCH = new ReplicaFetcherConfig(500, 1, 1, 10_485_760, 1_000, 1, 30_000);
    private static final int SEEDS = 300;
    private static final int ELECTIONS = 12;

    @Test
    void randomLeaderChangesConvergeAndAppendOnlyOntoAnAgreeingPrefix() {
        for (long seed = 0; seed < SEEDS; seed++) {
            run(seed);
        }
    }

    private static void run(long seed) {
        Random random = new Random(seed);
        InMemoryLog[] replicas = {new InMemoryLog(TP, TOPIC_ID), new InMemoryLog(TP, TOPIC_ID)};
        int leader = 0;
        int epoch = 0;
        replicas[leader].assignEpoch(epoch);
        for (int election = 0; election < ELECTIONS; election++) {
            InMemoryLog leaderLog = replicas[leader];
            InMemoryLog followerLog = replicas[1 - leader];
            FakeLeader endpoint = new FakeLeader(2);
            FakeLeader.Led led = endpoint.lead(leaderLog, epoch);
            ReplicaFetcher fetcher = follower(endpoint, followerLog, epoch);
            int steps = random.nextInt(10);
            for (int step = 0; step < steps; step++) {
                if (random.nextInt(3) == 0) {
                    leaderLog.appendBatch(epoch, 1 + random.nextInt(3));
                }
                led.highWatermark = leaderLog.logEndOffset();
                long before = followerLog.logEndOffset();
                fetcher.poll(0);
                checkInvariants(seed, leaderLog, followerLog, led.highWatermark, followerLog.logEndOffset() > before);
            }
            epoch++;
            leader = random.nextInt(2);
            replicas[leader].assignEpoch(epoch);
        }
        InMemoryLog leaderLog = replicas[leader];
        InMemoryLog followerLog = replicas[1 - leader];
        FakeLeader endpoint = new FakeLeader(2);
        endpoint.lead(leaderLog, epoch).highWatermark = leaderLog.logEndOffset();
        ReplicaFetcher fetcher = follower(endpoint, followerLog, epoch);
        for (int poll = 0; poll < 200 && !converged(leaderLog, followerLog); poll++) {
            long before = followerLog.logEndOffset();
            fetcher.poll(0);
            checkInvariants(seed, leaderLog, followerLog, leaderLog.logEndOffset(), followerLog.logEndOffset() > before);
        }
        assertThat(followerLog.contents()).as("seed %d: the follower converges to the leader", seed).isEqualTo(leaderLog.contents());
        assertThat(followerLog.highWatermark()).as("seed %d", seed).isEqualTo(leaderLog.logEndOffset());
    }

    private static boolean converged(InMemoryLog leaderLog, InMemoryLog followerLog) {
        return followerLog.contents().equals(leaderLog.contents()) && followerLog.highWatermark() == leaderLog.logEndOffset();
    }

    private static ReplicaFetcher follower(FakeLeader endpoint, InMemoryLog followerLog, int epoch) {
        ReplicaFetcher fetcher = new ReplicaFetcher(0, 1, () -> 1L, endpoint, ONE_BATCH_PER_FETCH, new FailedPartitions());
        fetcher.addPartitions(Map.of(TP, new InitialFetchState(TOPIC_ID, 2, epoch, followerLog)));
        return fetcher;
    }

    private static void checkInvariants(long seed, InMemoryLog leaderLog, InMemoryLog followerLog, long leaderHighWatermark, boolean appended) {
        assertThat(followerLog.highWatermark()).as("seed %d: follower HW within the leader's", seed).isLessThanOrEqualTo(leaderHighWatermark);
        if (appended) {
            List<ByteBuffer> follower = followerLog.contents();
            List<ByteBuffer> leader = leaderLog.contents();
            assertThat(follower.size()).as("seed %d: follower batches; follower %s %s, leader %s %s", seed, followerLog, ranges(followerLog),
                leaderLog, ranges(leaderLog)).isLessThanOrEqualTo(leader.size());
            assertThat(follower).as("seed %d: the follower appended onto a prefix of the leader's log; follower %s %s, leader %s %s", seed,
                    followerLog, ranges(followerLog), leaderLog, ranges(leaderLog))
                .isEqualTo(leader.subList(0, follower.size()));
        }
    }

    private static String ranges(InMemoryLog log) {
        return log.batchesSnapshot().stream().map(b -> b.baseOffset() + "-" + b.lastOffset() + "@" + b.partitionLeaderEpoch()).toList().toString();
    }
}
