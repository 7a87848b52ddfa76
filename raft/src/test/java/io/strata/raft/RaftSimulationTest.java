package io.strata.raft;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whole quorums under {@link RaftSimulation}, 100 seeds per property. A failing seed prints in
 * the assertion message; add it to {@link RaftRegressionSeedsTest} when fixing it.
 */
class RaftSimulationTest {
    static final RaftConfig CONFIG = RaftConfig.DEFAULTS;

    static LongStream seeds() {
        return LongStream.range(0, 100);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void threeVotersElectOneLeaderAndCommitOverALossyNetwork(long seed) {
        RaftSimulation simulation = new RaftSimulation(seed, 3, CONFIG, new RaftSimulation.Faults(0.05, 20, 0, 0));
        simulation.run(20_000);
        simulation.healAndConverge(10_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(100);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void threeVotersSurviveCrashesThatLoseUnflushedData(long seed) {
        RaftSimulation simulation = new RaftSimulation(seed, 3, CONFIG, new RaftSimulation.Faults(0.02, 20, 0.5, 0));
        simulation.run(30_000);
        simulation.healAndConverge(15_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(10);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void fiveVotersSurvivePartitionsAndCrashes(long seed) {
        RaftSimulation simulation = new RaftSimulation(seed, 5, CONFIG, new RaftSimulation.Faults(0.05, 30, 0.3, 0.3));
        simulation.run(30_000);
        simulation.healAndConverge(15_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(10);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void observersFollowTheLogWithoutVoting(long seed) {
        RaftSimulation simulation = new RaftSimulation(seed, 3, 2, CONFIG, new RaftSimulation.Faults(0.02, 20, 0.3, 0.2));
        simulation.run(20_000);
        simulation.healAndConverge(15_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(10);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aSingleVoterLeadsAtOnce(long seed) {
        RaftSimulation simulation = new RaftSimulation(seed, 1, CONFIG, RaftSimulation.Faults.NONE);
        simulation.run(5_000);
        simulation.healAndConverge(1_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(100);
    }

    /** Small chunks, so that a snapshot takes several FetchSnapshot round trips. */
    static final RaftConfig SNAPSHOT_CONFIG = CONFIG.withFetchSnapshotMaxBytes(512);

    /**
     * Snapshots every 20 committed entries with the log prefix dropped behind them, crashes that
     * lose unflushed data, a lossy network, and one replica (chosen by the seed) down for 6 s,
     * long enough that the leader has deleted the entries it needs: it must catch up by
     * FetchSnapshot.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void threeVotersSnapshotAndDropTheLogPrefixUnderCrashes(long seed) {
        RaftSimulation simulation = new RaftSimulation(seed, 3, 1, SNAPSHOT_CONFIG, new RaftSimulation.Faults(0.02, 20, 0.4, 0.1))
            .snapshotEvery(20);
        simulation.scheduleOutage(1 + (int) (seed % 3), 5_000, 6_000);
        simulation.run(25_000);
        simulation.healAndConverge(15_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(10);
        assertThat(simulation.snapshotsTaken()).as("snapshots").isGreaterThan(0);
        assertThat(simulation.totalSnapshotsLoaded()).as("snapshots copied by FetchSnapshot").isGreaterThan(0);
    }

    /**
     * KIP-853: three voters from a bootstrap checkpoint and two spares that start empty, with
     * voters added and removed (the leader too) every few seconds amid crashes, loss and
     * partitions; committed voter sets agree everywhere and every change ends with a Kafka error code.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void dynamicVotersAreAddedAndRemovedUnderFaults(long seed) {
        RaftSimulation simulation = RaftSimulation.dynamic(seed, 3, 2, 1, CONFIG, new RaftSimulation.Faults(0.02, 20, 0.3, 0.1));
        simulation.run(30_000);
        simulation.healAndConverge(15_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(10);
        assertThat(simulation.voterChangeResults().getOrDefault(io.strata.protocol.ErrorCode.NONE, 0)).as("committed voter changes " + simulation.voterChangeResults() + " " + simulation.voterChangeMessages())
            .isGreaterThan(0);
    }

    /** A standalone voter (`strata format --standalone`) grows into a quorum with the spares, snapshotting on the way. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aStandaloneVoterGrowsIntoAQuorumWithSnapshots(long seed) {
        RaftSimulation simulation = RaftSimulation.dynamic(seed, 1, 2, 0, CONFIG, new RaftSimulation.Faults(0.02, 20, 0.2, 0))
            .snapshotEvery(20);
        simulation.run(25_000);
        simulation.healAndConverge(15_000);
        assertThat(simulation.committedCount()).as("progress").isGreaterThan(10);
        assertThat(simulation.voterChangeResults().getOrDefault(io.strata.protocol.ErrorCode.NONE, 0)).as("committed voter changes " + simulation.voterChangeResults() + " " + simulation.voterChangeMessages())
            .isGreaterThan(0);
    }
}
