package io.strata.raft;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Targeted scenarios from the field notes, on the simulated quorum without random faults. */
class LeadershipScenariosTest {
    private static RaftClient leaderOf(RaftSimulation simulation) {
        return simulation.clients().values().stream().filter(RaftClient::isLeader).findFirst().orElseThrow();
    }

    /**
     * KAFKA-15489: a leader cut off from the other voters but not from the brokers must not
     * keep leading; check-quorum makes it resign, the others elect a new leader, and the
     * observer moves to it.
     */
    @Test
    void aLeaderCutOffFromTheVotersOnlyResigns() {
        RaftSimulation simulation = new RaftSimulation(3, 3, 1, RaftSimulationTest.CONFIG, RaftSimulation.Faults.NONE);
        simulation.run(4_000);
        RaftClient oldLeader = leaderOf(simulation);
        int oldEpoch = oldLeader.epoch();
        Set<Integer> otherVoters = new java.util.TreeSet<>(Set.of(1, 2, 3));
        otherVoters.remove(oldLeader.localId());
        simulation.cutLinks(oldLeader.localId(), otherVoters);
        long cutAt = simulation.nowMs();
        // Check-quorum fires after 1.5 x fetch timeout (3 s); allow an election on top.
        simulation.run(cutAt + 3_000 + 2 * RaftSimulationTest.CONFIG.electionTimeoutMs() + 1_000);
        assertThat(oldLeader.isLeader()).as("the cut-off leader resigned").isFalse();
        RaftClient newLeader = leaderOf(simulation);
        assertThat(newLeader.localId()).isNotEqualTo(oldLeader.localId());
        assertThat(newLeader.epoch()).isGreaterThan(oldEpoch);
        simulation.run(simulation.nowMs() + 5_000);
        Map<Integer, RaftClient> clients = simulation.clients();
        assertThat(clients.get(101).leaderId()).as("the observer follows the new leader").isEqualTo(newLeader.localId());
        simulation.restoreLinks();
        simulation.healAndConverge(5_000);
    }

    /**
     * KIP-996: a voter that was cut off keeps asking for pre-votes it cannot get, so it does not
     * raise the epoch; when it returns, the working leader keeps leading in the same epoch.
     */
    @Test
    void aReturningVoterDoesNotDisruptTheLeader() {
        RaftSimulation simulation = new RaftSimulation(5, 3, RaftSimulationTest.CONFIG, RaftSimulation.Faults.NONE);
        simulation.run(4_000);
        RaftClient leader = leaderOf(simulation);
        int epoch = leader.epoch();
        int isolated = leader.localId() == 1 ? 2 : 1;
        Set<Integer> others = new java.util.TreeSet<>(Set.of(1, 2, 3));
        others.remove(isolated);
        simulation.cutLinks(isolated, others);
        simulation.run(simulation.nowMs() + 20_000);
        assertThat(simulation.clients().get(isolated).epoch()).as("no epoch bumps while cut off").isEqualTo(epoch);
        simulation.restoreLinks();
        simulation.run(simulation.nowMs() + 5_000);
        assertThat(leader.isLeader()).isTrue();
        assertThat(leader.epoch()).isEqualTo(epoch);
        assertThat(simulation.clients().get(isolated).leaderId()).isEqualTo(leader.localId());
        simulation.healAndConverge(3_000);
    }

    /** A graceful resignation (EndQuorumEpoch) hands leadership over well before a fetch timeout would. */
    @Test
    void aResigningLeaderIsReplacedQuickly() {
        RaftSimulation simulation = new RaftSimulation(9, 3, RaftSimulationTest.CONFIG, RaftSimulation.Faults.NONE);
        simulation.run(4_000);
        RaftClient leader = leaderOf(simulation);
        leader.resign(simulation.nowMs());
        long resignedAt = simulation.nowMs();
        long deadline = resignedAt + RaftSimulationTest.CONFIG.fetchTimeoutMs();
        RaftClient next = null;
        while (simulation.nowMs() < deadline && next == null) {
            simulation.run(simulation.nowMs() + 50);
            next = simulation.clients().values().stream().filter(RaftClient::isLeader).findFirst().orElse(null);
        }
        assertThat(next).as("a new leader before any fetch timeout").isNotNull();
        assertThat(next.localId()).isNotEqualTo(leader.localId());
        simulation.healAndConverge(3_000);
    }

    /**
     * The two remaining voters of three usually time out on the dead leader within milliseconds
     * of each other, both win the pre-vote and both vote for themselves (a split vote). A
     * candidate that lost pre-votes again after a short random backoff instead of waiting out its
     * 1-2 s election timeout, so a new leader follows the fetch timeout by well under a second.
     */
    @Test
    void aSplitVoteAfterTheLeaderDiesIsResolvedWithinABackoff() {
        RaftConfig config = RaftSimulationTest.CONFIG;
        long worstMs = 0;
        for (long seed = 0; seed < 40; seed++) {
            RaftSimulation simulation = new RaftSimulation(seed, 3, config, RaftSimulation.Faults.NONE);
            simulation.run(4_000);
            int dead = simulation.leaderId();
            assertThat(dead).as("seed %d: a first leader", seed).isPositive();
            long killedAt = simulation.nowMs() + 1;
            simulation.scheduleOutage(dead, killedAt, 60_000);
            long electedAt = -1;
            while (simulation.nowMs() < killedAt + 10_000) {
                simulation.run(simulation.nowMs() + 5);
                int leader = simulation.leaderId();
                if (leader > 0 && leader != dead) {
                    electedAt = simulation.nowMs();
                    break;
                }
            }
            assertThat(electedAt).as("seed %d: a new leader", seed).isPositive();
            worstMs = Math.max(worstMs, electedAt - killedAt);
        }
        // Fetch timeout, then at most a backoff of election.backoff.max.ms / 4 per split and a few round trips.
        assertThat(worstMs).as("slowest re-election over the seeds").isLessThan(config.fetchTimeoutMs() + config.electionTimeoutMs() / 2);
    }
}
