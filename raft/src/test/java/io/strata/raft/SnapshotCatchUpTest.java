package io.strata.raft;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A replica that was away while the leader snapshotted and dropped its log prefix. */
class SnapshotCatchUpTest {
    @Test
    void aReplicaBehindTheLeadersLogStartCatchesUpByFetchSnapshot() {
        RaftSimulation simulation = new RaftSimulation(7, 3, RaftSimulationTest.SNAPSHOT_CONFIG, RaftSimulation.Faults.NONE).snapshotEvery(20);
        simulation.run(2_000);
        int leader = simulation.leaderId();
        assertThat(leader).isPositive();
        int lagging = leader == 1 ? 2 : 1;
        long laggingEnd = simulation.log(lagging).endOffset().offset();
        simulation.scheduleOutage(lagging, simulation.nowMs() + 1, 5_000);
        simulation.run(simulation.nowMs() + 4_000);
        assertThat(simulation.log(leader).logStartOffset()).as("the leader dropped what the lagging replica needs")
            .isGreaterThan(laggingEnd);
        assertThat(simulation.snapshotsLoaded(lagging)).isZero();

        simulation.run(simulation.nowMs() + 4_000); // the replica is back
        assertThat(simulation.snapshotsLoaded(lagging)).as("caught up by FetchSnapshot").isGreaterThanOrEqualTo(1);
        assertThat(simulation.log(lagging).logStartOffset()).isGreaterThan(laggingEnd);
        simulation.healAndConverge(5_000);
        Map<Integer, RaftClient> clients = simulation.clients();
        assertThat(clients.get(lagging).log().endOffset()).isEqualTo(clients.get(leader).log().endOffset());
    }

    @Test
    void aRestartedReplicaResumesFromItsSnapshotAndLogTail() {
        RaftSimulation simulation = new RaftSimulation(11, 3, RaftSimulationTest.SNAPSHOT_CONFIG, RaftSimulation.Faults.NONE).snapshotEvery(20);
        simulation.run(3_000);
        for (int id = 1; id <= 3; id++) {
            simulation.scheduleOutage(id, simulation.nowMs() + 10 * id, 300);
        }
        simulation.run(simulation.nowMs() + 200);
        assertThat(simulation.clients()).isEmpty();
        for (int id = 1; id <= 3; id++) {
            assertThat(simulation.log(id).logStartOffset()).as("node " + id + " starts at its snapshot").isPositive();
        }
        simulation.run(simulation.nowMs() + 5_000);
        assertThat(simulation.leaderId()).isPositive();
        simulation.healAndConverge(5_000);
    }
}
