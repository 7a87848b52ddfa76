package io.strata.raft;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Seeds that once failed {@link RaftSimulationTest}, kept with what they found. */
class RaftRegressionSeedsTest {
    /**
     * Seeds 55 and 91 (three voters, lossy network) and 15 (five voters with partitions and
     * crashes) found a pre-vote livelock: a voter that lost a pre-vote went back to following
     * a leader that had resigned, reset its fetch timer and then refused the other voter's
     * pre-vote, which did the same in turn, so no election ever started again. Fixed by
     * granting pre-votes until a follower has fetched from its leader once (as KIP-996 does).
     */
    @Test
    void preVoteLivelockAfterTheLeaderResigns() {
        for (long seed : new long[] {55, 91}) {
            RaftSimulation simulation = new RaftSimulation(seed, 3, RaftSimulationTest.CONFIG, new RaftSimulation.Faults(0.05, 20, 0, 0));
            simulation.run(20_000);
            simulation.healAndConverge(10_000);
            assertThat(simulation.committedCount()).isGreaterThan(100);
        }
        RaftSimulation simulation = new RaftSimulation(15, 5, RaftSimulationTest.CONFIG, new RaftSimulation.Faults(0.05, 30, 0.3, 0.3));
        simulation.run(30_000);
        simulation.healAndConverge(15_000);
        assertThat(simulation.committedCount()).isGreaterThan(10);
    }

    /**
     * Dynamic quorums (KIP-853). Seeds 19 and 35 found removed voters and observers stuck on a
     * leader that had left: an observer whose fetch timed out reset its fetch timer at each
     * discovery fetch, so it refused the pre-votes a remaining voter needed, and it asked only the
     * bootstrap servers, which had all been removed too. Seed 45 found a replica that kept asking
     * itself (its own address is among the bootstrap servers), each time waiting out the request
     * timeout. Fixed by leaving an observer's fetch timer expired, asking the voters of the log and
     * the leader too, and skipping its own address.
     */
    @Test
    void removedVotersAndObserversFindTheNewLeader() {
        for (long seed : new long[] {19, 35, 45}) {
            RaftSimulation simulation = RaftSimulation.dynamic(seed, 3, 2, 1, RaftSimulationTest.CONFIG, new RaftSimulation.Faults(0.02, 20, 0.3, 0.1));
            simulation.run(30_000);
            simulation.healAndConverge(15_000);
            assertThat(simulation.committedCount()).isGreaterThan(10);
        }
    }
}
