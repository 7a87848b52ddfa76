package io.strata.raft;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The refusals of AddRaftVoter / RemoveRaftVoter with Kafka's error codes, and the leader that
 * removes itself, on a quiet simulated dynamic quorum (no faults).
 */
class VoterChangeTest {
    private static RaftSimulation standaloneWithTwoSpares() {
        RaftSimulation simulation = RaftSimulation.dynamic(7, 1, 2, 0, RaftConfig.DEFAULTS, RaftSimulation.Faults.NONE)
            .withoutVoterChanges();
        simulation.run(3_000);
        return simulation;
    }

    private static RaftClient leader(RaftSimulation simulation) {
        return simulation.clients().get(simulation.leaderId());
    }

    private static RaftClient.VoterChangeResult await(RaftSimulation simulation, CompletableFuture<RaftClient.VoterChangeResult> change) {
        long deadline = simulation.nowMs() + 10_000;
        while (!change.isDone() && simulation.nowMs() < deadline) {
            simulation.run(simulation.nowMs() + 50);
        }
        assertThat(change).as("voter change answered within 10 s of simulated time").isDone();
        return change.join();
    }

    private static VoterSet.Endpoint endpoint(int id) {
        return new VoterSet.Endpoint(RaftSimulation.LISTENER, "node-" + id, 9000 + id);
    }

    @Test
    void aCaughtUpObserverIsAddedAndTheVoterSetCommitsEverywhere() {
        RaftSimulation simulation = standaloneWithTwoSpares();
        RaftClient leader = leader(simulation);
        ReplicaKey two = simulation.clients().get(2).localKey();
        RaftClient.VoterChangeResult result = await(simulation, leader.addVoter(two, List.of(endpoint(2)), true, 5_000, simulation.nowMs()));
        assertThat(result.error()).as(String.valueOf(result.message())).isEqualTo(ErrorCode.NONE);
        simulation.run(simulation.nowMs() + 2_000);
        for (RaftClient client : simulation.clients().values()) {
            assertThat(client.committedVoterSet().ids()).as("node " + client.localId()).containsExactly(1, 2);
        }
        assertThat(leader.kraftVersion()).isEqualTo((short) 1);
    }

    @Test
    void refusalsCarryKafkasErrorCodes() {
        RaftSimulation simulation = standaloneWithTwoSpares();
        RaftClient leader = leader(simulation);
        RaftClient follower = simulation.clients().get(2);
        ReplicaKey one = leader.localKey();
        ReplicaKey three = simulation.clients().get(3).localKey();
        long now = simulation.nowMs();
        assertThat(follower.addVoter(three, List.of(endpoint(3)), true, 1_000, now).join().error()).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        assertThat(leader.addVoter(one, List.of(endpoint(1)), true, 1_000, now).join().error()).isEqualTo(ErrorCode.DUPLICATE_VOTER);
        assertThat(leader.addVoter(three, List.of(new VoterSet.Endpoint("OTHER", "node-3", 9003)), true, 1_000, now).join().error())
            .isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(leader.removeVoter(three, now).join().error()).isEqualTo(ErrorCode.VOTER_NOT_FOUND);
        assertThat(leader.removeVoter(one, now).join().error()).as("the last voter").isEqualTo(ErrorCode.VOTER_NOT_FOUND);
        assertThat(leader.removeVoter(new ReplicaKey(1, new UUID(5, 5)), now).join().error()).as("another directory id")
            .isEqualTo(ErrorCode.VOTER_NOT_FOUND);
        // A replica that never fetched from this leader with that directory id is not caught up.
        RaftClient.VoterChangeResult unknown = await(simulation, leader.addVoter(new ReplicaKey(3, new UUID(9, 9)), List.of(endpoint(3)), true, 2_000,
            simulation.nowMs()));
        assertThat(unknown.error()).as(String.valueOf(unknown.message())).isEqualTo(ErrorCode.REQUEST_TIMED_OUT);
        // One change at a time.
        CompletableFuture<RaftClient.VoterChangeResult> first = leader.addVoter(follower.localKey(), List.of(endpoint(2)), true, 5_000, simulation.nowMs());
        assertThat(leader.addVoter(three, List.of(endpoint(3)), true, 5_000, simulation.nowMs()).join().error()).isEqualTo(ErrorCode.REQUEST_TIMED_OUT);
        assertThat(await(simulation, first).error()).isEqualTo(ErrorCode.NONE);
    }

    @Test
    void aStaticQuorumRefusesVoterChangesAsUnsupported() {
        RaftSimulation simulation = new RaftSimulation(3, 3, RaftConfig.DEFAULTS, RaftSimulation.Faults.NONE);
        simulation.run(5_000);
        RaftClient leader = leader(simulation);
        assertThat(leader.addVoter(new ReplicaKey(4, new UUID(1, 4)), List.of(endpoint(4)), true, 1_000, simulation.nowMs()).join().error())
            .isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
        assertThat(leader.removeVoter(ReplicaKey.of(2), simulation.nowMs()).join().error()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
        assertThat(leader.kraftVersion()).isZero();
        assertThat(leader.voterSet().voters()).allSatisfy(voter -> assertThat(voter.key().directoryId()).isEqualTo(Uuids.ZERO));
    }

    @Test
    void aLeaderThatRemovesItselfLeadsUntilTheRemovalCommitsThenTheOthersElect() {
        RaftSimulation simulation = standaloneWithTwoSpares();
        RaftClient leader = leader(simulation);
        for (int id : new int[] {2, 3}) {
            ReplicaKey key = simulation.clients().get(id).localKey();
            assertThat(await(simulation, leader.addVoter(key, List.of(endpoint(id)), true, 5_000, simulation.nowMs())).error()).isEqualTo(ErrorCode.NONE);
            simulation.run(simulation.nowMs() + 500);
        }
        RaftClient.VoterChangeResult removed = await(simulation, leader.removeVoter(leader.localKey(), simulation.nowMs()));
        assertThat(removed.error()).as(String.valueOf(removed.message())).isEqualTo(ErrorCode.NONE);
        simulation.run(simulation.nowMs() + 10_000);
        int newLeader = simulation.leaderId();
        assertThat(newLeader).as("a leader among the remaining voters").isIn(2, 3);
        assertThat(simulation.clients().get(1).isLeader()).isFalse();
        assertThat(simulation.clients().get(1).voterSet().ids()).containsExactly(2, 3);
        assertThat(simulation.clients().get(1).highWatermark()).as("the removed voter still follows the log")
            .isGreaterThan(simulation.clients().get(newLeader).highWatermark() - 10);
    }

    /** A voter added with endpoints other than its own tells the leader (UpdateRaftVoter); the voter set then names its own. */
    @Test
    void aVoterWhoseEndpointsDifferFromTheLogsUpdatesThem() {
        RaftSimulation simulation = standaloneWithTwoSpares();
        RaftClient leader = leader(simulation);
        ReplicaKey two = simulation.clients().get(2).localKey();
        VoterSet.Endpoint stale = new VoterSet.Endpoint(RaftSimulation.LISTENER, "node-2", 1);
        assertThat(await(simulation, leader.addVoter(two, List.of(stale), true, 5_000, simulation.nowMs())).error()).isEqualTo(ErrorCode.NONE);
        long deadline = simulation.nowMs() + 10_000;
        while (!leader.committedVoterSet().voter(2).orElseThrow().endpoints().equals(List.of(endpoint(2))) && simulation.nowMs() < deadline) {
            simulation.run(simulation.nowMs() + 100);
        }
        assertThat(leader.committedVoterSet().voter(2).orElseThrow().endpoints()).as("voter 2's endpoints in the committed voter set")
            .containsExactly(endpoint(2));
        assertThat(leader.committedVoterSet().voter(2).orElseThrow().key()).isEqualTo(two);
    }
}
