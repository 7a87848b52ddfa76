package io.strata.raft;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DescribeQuorumResponseData;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What the leader reports for DescribeQuorum once a quorum has settled. */
class DescribeQuorumTest {
    @Test
    void theLeaderReportsEveryVoterCaughtUp() {
        RaftSimulation simulation = new RaftSimulation(7, 3, RaftSimulationTest.CONFIG, RaftSimulation.Faults.NONE);
        simulation.run(5_000);
        simulation.healAndConverge(2_000);
        Map<Integer, RaftClient> clients = simulation.clients();
        RaftClient leader = clients.values().stream().filter(RaftClient::isLeader).findFirst().orElseThrow();
        long nowMs = simulation.nowMs();
        DescribeQuorumResponseData.PartitionData described = leader.describeQuorum(nowMs);
        assertThat(described.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(described.leaderId()).isEqualTo(leader.localId());
        assertThat(described.leaderEpoch()).isEqualTo(leader.epoch());
        long end = leader.log().endOffset().offset();
        assertThat(described.highWatermark()).isEqualTo(end);
        assertThat(described.currentVoters()).extracting(DescribeQuorumResponseData.ReplicaState::replicaId).containsExactly(1, 2, 3);
        for (DescribeQuorumResponseData.ReplicaState voter : described.currentVoters()) {
            assertThat(voter.logEndOffset()).as("voter %d", voter.replicaId()).isEqualTo(end);
            // Followers fetch again within the leader's 500 ms wait.
            assertThat(voter.lastFetchTimestamp()).isBetween(nowMs - 1_000, nowMs);
            assertThat(voter.lastCaughtUpTimestamp()).isBetween(nowMs - 1_000, nowMs);
        }
        assertThat(described.observers()).isEmpty();
        RaftClient follower = clients.values().stream().filter(client -> !client.isLeader()).findFirst().orElseThrow();
        DescribeQuorumResponseData.PartitionData refused = follower.describeQuorum(nowMs);
        assertThat(refused.errorCode()).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER.code());
        assertThat(refused.leaderId()).isEqualTo(leader.localId());
    }

    @Test
    void observersAreListedApartFromVoters() {
        RaftSimulation simulation = new RaftSimulation(11, 3, 2, RaftSimulationTest.CONFIG, RaftSimulation.Faults.NONE);
        simulation.run(5_000);
        simulation.healAndConverge(2_000);
        RaftClient leader = simulation.clients().values().stream().filter(RaftClient::isLeader).findFirst().orElseThrow();
        DescribeQuorumResponseData.PartitionData described = leader.describeQuorum(simulation.nowMs());
        assertThat(described.currentVoters()).extracting(DescribeQuorumResponseData.ReplicaState::replicaId).containsExactly(1, 2, 3);
        assertThat(described.observers()).extracting(DescribeQuorumResponseData.ReplicaState::replicaId).containsExactly(101, 102);
        for (DescribeQuorumResponseData.ReplicaState observer : described.observers()) {
            assertThat(observer.logEndOffset()).isEqualTo(leader.log().endOffset().offset());
        }
    }
}
