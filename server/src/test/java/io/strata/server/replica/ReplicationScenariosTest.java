package io.strata.server.replica;

import io.strata.metadata.PartitionRegistration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The KIP-101, KIP-279 and KIP-966 cases as scripted histories on the {@link ReplicationSimulation}
 * harness (its invariants run after every event). Each ends by healing the cluster and asserting
 * that every replica holds the same log with every acknowledged write at its offset.
 */
class ReplicationScenariosTest {
    @TempDir
    Path tempDir;

    private static ReplicationSimulation simulation(Path dir, long seed, int rf, int minIsr, boolean elr) throws IOException {
        ReplicationSimulation simulation = new ReplicationSimulation(new ReplicationSimulation.Settings(seed, rf, minIsr, elr), dir);
        simulation.writesMax = 60;
        return simulation;
    }

    @Test
    void divergentLogsAfterBothReplicasCrashAtOnceEndIdentical() throws IOException {
        // KIP-101 scenario 2: both replicas lose their unflushed tails; the one back first leads a new
        // epoch and takes writes at offsets the other also holds (different batches); the other must
        // truncate by epoch, not keep its own tail.
        try (ReplicationSimulation sim = simulation(tempDir, 101, 2, 1, false)) {
            sim.runFor(800);
            int acked = sim.ackedWrites();
            assertThat(acked).as("writes acknowledged before the crash").isPositive();
            sim.crash(1, 0);
            sim.crash(2, 0);
            sim.runFor(1_000);
            sim.restart(2);
            sim.runFor(2_500);
            assertThat(sim.controller.partition().leaderEpoch()).as("a new leader epoch on the broker back first").isPositive();
            sim.restart(1);
            sim.healAndConverge();
            assertThat(sim.ackedWrites()).isEqualTo(60);
        }
    }

    @Test
    void twoLeaderChangesInQuickSuccessionEndIdentical() throws IOException {
        // KIP-279: a follower sees two leader changes before it finishes truncating for the first.
        try (ReplicationSimulation sim = simulation(tempDir, 279, 3, 1, true)) {
            sim.runFor(800);
            int first = sim.controller.partition().leader();
            sim.crash(first, 0);
            sim.runFor(2_000);
            int second = sim.controller.partition().leader();
            assertThat(second).as("a second leader after the first crashed").isNotIn(first, PartitionRegistration.NO_LEADER);
            sim.crash(second, 0);
            sim.runFor(100);
            sim.restart(first);
            sim.runFor(2_000);
            sim.restart(second);
            sim.healAndConverge();
            assertThat(sim.controller.partition().leaderEpoch()).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void aFormerLeaderRestartingWithAnUnflushedTailAndGarbageFollowsAndCatchesUp() throws IOException {
        try (ReplicationSimulation sim = simulation(tempDir, 7, 3, 2, true)) {
            sim.runFor(600);
            int leader = sim.controller.partition().leader();
            long flushed = sim.brokers.get(leader).log.recoveryPoint();
            sim.crash(leader, 700);
            sim.runFor(2_000);
            sim.restart(leader);
            assertThat(sim.brokers.get(leader).log.logEndOffset()).as("nothing past the recovery point survived").isLessThanOrEqualTo(flushed);
            sim.healAndConverge();
        }
    }

    @Test
    void theLastReplicaStandingInTheElrLeadsWhenItReturns() throws IOException {
        // KIP-966: ISR members fenced one by one below min ISR enter the ELR; with every broker gone the
        // ELR member that returns first is elected, cleanly, and holds every acknowledged write.
        try (ReplicationSimulation sim = simulation(tempDir, 966, 3, 2, true)) {
            sim.runFor(800);
            int leader = sim.controller.partition().leader();
            int[] others = sim.brokers.keySet().stream().mapToInt(Integer::intValue).filter(id -> id != leader).toArray();
            sim.isolate(others[0]);
            sim.runFor(2_500);
            sim.isolate(others[1]);
            sim.runFor(2_500);
            sim.isolate(leader);
            sim.runFor(2_500);
            PartitionRegistration offline = sim.controller.partition();
            assertThat(offline.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
            assertThat(offline.elr()).as("the ELR keeps the members that left below min ISR").contains(others[1]);
            sim.reconnect(others[1]);
            sim.runFor(2_500);
            assertThat(sim.controller.partition().leader()).as("the returning ELR member leads").isEqualTo(others[1]);
            sim.healAndConverge();
        }
    }
}
