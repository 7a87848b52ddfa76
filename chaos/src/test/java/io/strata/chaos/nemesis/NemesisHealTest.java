package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every nemesis against a {@link FakeCluster}: starts within its budget, heals once, and a second heal is a no-op. */
class NemesisHealTest {
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition("t", 0), new TopicPartition("t", 1));

    static Set<String> names() {
        return Nemeses.names();
    }

    @ParameterizedTest
    @MethodSource("names")
    void healRestoresTheClusterAndIsIdempotent(String name) throws Exception {
        for (int seed = 0; seed < 20; seed++) {
            FakeCluster cluster = new FakeCluster(5, 2);
            Nemesis nemesis = Nemeses.create(name, cluster, PARTITIONS);
            assertThat(nemesis.heal()).as("heal before any start").isEmpty();
            Nemesis.Start start = nemesis.start(new Random(seed), new FaultBudget(5, Set.of(), 2));
            assertThat(start.started()).as(start.description()).isTrue();
            assertThat(nemesis.impaired()).isNotEmpty().hasSizeLessThanOrEqualTo(2);
            assertThat(cluster.clean()).isFalse();
            assertThat(nemesis.heal()).isNotEmpty();
            assertThat(cluster.clean()).as("clean after heal of " + start.description()).isTrue();
            int calls = cluster.calls.size();
            assertThat(nemesis.heal()).as("second heal").isEmpty();
            assertThat(cluster.calls).hasSize(calls);
            assertThat(nemesis.impaired()).isEmpty();
            assertThat(cluster.violations).isEmpty();
        }
    }

    @ParameterizedTest
    @MethodSource("names")
    void noRoomMeansNoFault(String name) throws Exception {
        FakeCluster cluster = new FakeCluster(3, 1);
        Nemesis nemesis = Nemeses.create(name, cluster, PARTITIONS);
        Nemesis.Start start = nemesis.start(new Random(1), new FaultBudget(3, Set.of(2), 1));
        assertThat(start.started()).isFalse();
        assertThat(start.description()).contains("no room");
        assertThat(cluster.calls).isEmpty();
        assertThat(nemesis.heal()).isEmpty();
    }

    @Test
    void victimsAreNeverAlreadyImpairedNodes() throws Exception {
        for (String name : List.of("kill", "pause", "loss", "bandwidth", "partition-isolate", "partition-oneway")) {
            for (int seed = 0; seed < 50; seed++) {
                FakeCluster cluster = new FakeCluster(5, 2);
                Nemesis nemesis = Nemeses.create(name, cluster, PARTITIONS);
                Nemesis.Start start = nemesis.start(new Random(seed), new FaultBudget(5, Set.of(1, 3, 5), 4));
                assertThat(start.started()).isTrue();
                assertThat(nemesis.impaired()).as(name + ": " + start.description()).isSubsetOf(2, 4);
                nemesis.heal();
            }
        }
    }

    @Test
    void leaderNemesesHitTheLeaderOrSkipWhenItIsImpaired() throws Exception {
        // FakeCluster: partition 1 is led by node 2 of 3, the controller is node 1.
        List<TopicPartition> one = List.of(new TopicPartition("t", 1));
        for (String name : List.of("kill-leader", "pause-leader", "partition-leader")) {
            FakeCluster cluster = new FakeCluster(3, 1);
            Nemesis nemesis = Nemeses.create(name, cluster, one);
            assertThat(nemesis.start(new Random(1), new FaultBudget(3, Set.of(), 1)).started()).isTrue();
            assertThat(nemesis.impaired()).containsExactly(2);
            nemesis.heal();
            Nemesis.Start skipped = nemesis.start(new Random(1), new FaultBudget(3, Set.of(2), 2));
            assertThat(skipped.started()).isFalse();
            assertThat(skipped.description()).contains("already impaired");
        }
        FakeCluster cluster = new FakeCluster(3, 1);
        Nemesis controller = Nemeses.create("kill-controller", cluster, one);
        assertThat(controller.start(new Random(1), new FaultBudget(3, Set.of(), 1)).started()).isTrue();
        assertThat(cluster.state(1)).isEqualTo(ClusterControl.NodeState.STOPPED);
        controller.heal();
        assertThat(cluster.clean()).isTrue();
    }

    @Test
    void aKillHealRestartsTheNodeEvenWhenTheKillStepThrew() throws Exception {
        FakeCluster cluster = new FakeCluster(3, 1);
        cluster.failNextKillAfterKilling = true;
        Nemesis kill = Nemeses.create("kill", cluster, PARTITIONS);
        assertThatThrownBy(() -> kill.start(new Random(5), new FaultBudget(3, Set.of(), 1)))
            .hasMessageContaining("simulated harness failure");
        assertThat(cluster.clean()).isFalse();
        assertThat(kill.heal()).startsWith("restarted node");
        assertThat(cluster.clean()).isTrue();
    }

    @Test
    void unknownAndRepeatedNamesAreRefused() {
        FakeCluster cluster = new FakeCluster(3, 1);
        assertThatThrownBy(() -> Nemeses.create("kil", cluster, PARTITIONS)).hasMessageContaining("unknown nemesis: kil");
        assertThatThrownBy(() -> Nemeses.create(List.of("kill", "kill"), cluster, PARTITIONS)).hasMessageContaining("named twice");
    }
}
