package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The schedule against a {@link FakeCluster} and a {@link FakeClock}: seeded, bounded, every fault healed. */
class NemesisScheduleTest {
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition("t", 0), new TopicPartition("t", 1),
        new TopicPartition("t", 2));
    private static final List<String> ALL = List.copyOf(Nemeses.names());
    private static final Duration RUN = Duration.ofMinutes(30);

    @Test
    void sameSeedGivesTheSameLogAndAnotherSeedAnother() throws Exception {
        List<NemesisEvent> first = run(5, ALL, 42, 3, FaultBudget.quorumTolerance(5)).log.events();
        List<NemesisEvent> again = run(5, ALL, 42, 3, FaultBudget.quorumTolerance(5)).log.events();
        List<NemesisEvent> other = run(5, ALL, 43, 3, FaultBudget.quorumTolerance(5)).log.events();
        assertThat(first).hasSizeGreaterThan(100).isEqualTo(again);
        assertThat(other).isNotEqualTo(first);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void neverMoreFaultsOrImpairedNodesThanAllowedAndNoTwoNftFaultsAtOnce(int seed) throws Exception {
        for (int nodes : new int[] {3, 5}) {
            for (int maxConcurrent : new int[] {1, 2, 3}) {
                Outcome outcome = run(nodes, ALL, seed, maxConcurrent, FaultBudget.quorumTolerance(nodes));
                assertThat(outcome.cluster.violations).as("impaired-node violations").isEmpty();
                Map<String, Integer> active = new HashMap<>();
                int maxActive = 0;
                for (NemesisEvent event : outcome.log.events()) {
                    assertThat(event.type()).as(event.line()).isNotEqualTo(NemesisEvent.Type.ERROR);
                    if (event.type() == NemesisEvent.Type.START) {
                        assertThat(active).as("started twice: " + event.line()).doesNotContainKey(event.nemesis());
                        if (isNft(event.nemesis())) {
                            assertThat(active.keySet()).as("two nft faults at once: " + event.line()).noneMatch(NemesisScheduleTest::isNft);
                        }
                        active.put(event.nemesis(), 1);
                        maxActive = Math.max(maxActive, active.size());
                    } else if (event.type() == NemesisEvent.Type.HEAL && !event.nemesis().equals("cluster")) {
                        assertThat(active.remove(event.nemesis())).as("healed without start: " + event.line()).isNotNull();
                    }
                }
                assertThat(maxActive).isLessThanOrEqualTo(maxConcurrent).isGreaterThanOrEqualTo(1);
                assertThat(active).as("faults left active after run()").isEmpty();
                assertThat(outcome.cluster.clean()).as("cluster clean after healAll").isTrue();
            }
        }
    }

    @Test
    void faultPeriodsLastTheirSeededLengthWithinBounds() throws Exception {
        NemesisSchedule.Config config = new NemesisSchedule.Config(5_000, 15_000, 5_000, 10_000, 1, 1);
        Outcome outcome = run(3, List.of("kill"), 7, config, RUN);
        Map<String, Long> startedAt = new HashMap<>();
        long lastHealMs = -1;
        int periods = 0;
        for (NemesisEvent event : outcome.log.events()) {
            if (event.type() == NemesisEvent.Type.START) {
                if (lastHealMs >= 0) {
                    assertThat(event.elapsedMs() - lastHealMs).as("healthy period").isBetween(5_000L, 10_000L);
                }
                startedAt.put(event.nemesis(), event.elapsedMs());
            } else if (event.type() == NemesisEvent.Type.HEAL && event.elapsedMs() < RUN.toMillis()) {
                assertThat(event.elapsedMs() - startedAt.remove(event.nemesis())).as("fault period").isBetween(5_000L, 15_000L);
                lastHealMs = event.elapsedMs();
                periods++;
            }
        }
        // 30 minutes of periods between 10 and 25 s long.
        assertThat(periods).isBetween(70, 180);
    }

    @Test
    void aStartThatThrowsHalfWayIsLoggedAndHealed() throws Exception {
        FakeCluster cluster = new FakeCluster(3, 1);
        cluster.failNextKillAfterKilling = true;
        NemesisLog log = NemesisLog.inMemory();
        NemesisSchedule schedule = new NemesisSchedule(Nemeses.create(List.of("kill"), cluster, PARTITIONS),
            new NemesisSchedule.Config(1_000, 1_000, 1_000, 1_000, 1, 1), 3, cluster, log, new FakeClock());
        schedule.run(Duration.ofSeconds(1));
        List<NemesisEvent> events = log.events();
        assertThat(events.get(0).type()).isEqualTo(NemesisEvent.Type.ERROR);
        assertThat(events.get(0).description()).contains("simulated harness failure");
        assertThat(events.get(1).type()).isEqualTo(NemesisEvent.Type.HEAL);
        assertThat(events.get(1).description()).startsWith("restarted node");
        assertThat(cluster.clean()).isTrue();
    }

    @Test
    void aNodeThatExitedByItselfIsReportedAndCountsAgainstTheBudget() throws Exception {
        FakeCluster cluster = new FakeCluster(3, 1);
        cluster.kill9(3); // as if it crashed: no nemesis holds it
        NemesisLog log = NemesisLog.inMemory();
        NemesisSchedule schedule = new NemesisSchedule(Nemeses.create(List.of("kill", "pause"), cluster, PARTITIONS),
            new NemesisSchedule.Config(1_000, 1_000, 1_000, 1_000, 2, 1), 5, cluster, log, new FakeClock());
        schedule.run(Duration.ofSeconds(10));
        assertThat(log.events()).filteredOn(event -> event.type() == NemesisEvent.Type.ERROR).hasSize(1)
            .first().extracting(NemesisEvent::description).asString().contains("node 3 is STOPPED though no fault holds it");
        assertThat(log.count(NemesisEvent.Type.START)).isZero();
        assertThat(cluster.violations).isEmpty();
        assertThat(schedule.healAll()).isTrue();
        assertThat(cluster.clean()).isTrue();
    }

    @Test
    void healAllRestoresNodesLeftDownByAnyone() throws Exception {
        FakeCluster cluster = new FakeCluster(5, 2);
        cluster.kill9(2);
        cluster.pause(4);
        cluster.loss(1, 30);
        cluster.limitBandwidth(1, 128);
        NemesisLog log = NemesisLog.inMemory();
        NemesisSchedule schedule = new NemesisSchedule(Nemeses.create(List.of("pause"), cluster, PARTITIONS),
            NemesisSchedule.Config.defaults(5), 1, cluster, log, new FakeClock());
        assertThat(schedule.healAll()).isTrue();
        assertThat(cluster.clean()).isTrue();
        assertThat(log.events()).extracting(NemesisEvent::description)
            .contains("node 2 was stopped: started", "node 4 was paused: SIGCONT");
    }

    @Test
    void maxImpairedBeyondTheQuorumIsHonouredWhenAsked() throws Exception {
        FakeCluster cluster = new FakeCluster(5, 5);
        NemesisLog log = NemesisLog.inMemory();
        new NemesisSchedule(Nemeses.create(List.of("kill", "pause", "partition-isolate"), cluster, PARTITIONS),
            new NemesisSchedule.Config(5_000, 15_000, 5_000, 10_000, 3, 3), 11, cluster, log, new FakeClock()).run(RUN);
        Outcome outcome = new Outcome(cluster, log);
        // Three of five down leave no quorum, so only the directly hit nodes are bounded.
        assertThat(cluster.maxDirectlyImpaired).isEqualTo(3);
        assertThat(outcome.log.count(NemesisEvent.Type.START)).isGreaterThan(0);
        // With room for 3, three single-node faults are active together at some point.
        int active = 0;
        int maxActive = 0;
        for (NemesisEvent event : outcome.log.events()) {
            active += event.type() == NemesisEvent.Type.START ? 1 : event.type() == NemesisEvent.Type.HEAL ? -1 : 0;
            maxActive = Math.max(maxActive, active);
        }
        assertThat(maxActive).isEqualTo(3);
    }

    private static boolean isNft(String nemesis) {
        return nemesis.startsWith("partition") || nemesis.equals("loss");
    }

    private record Outcome(FakeCluster cluster, NemesisLog log) {
    }

    private static Outcome run(int nodes, List<String> kinds, long seed, int maxConcurrent, int maxImpaired) throws Exception {
        return run(nodes, kinds, seed, new NemesisSchedule.Config(5_000, 15_000, 5_000, 10_000, maxConcurrent, maxImpaired), RUN);
    }

    private static Outcome run(int nodes, List<String> kinds, long seed, NemesisSchedule.Config config, Duration duration) throws Exception {
        FakeCluster cluster = new FakeCluster(nodes, config.maxImpaired());
        NemesisLog log = NemesisLog.inMemory();
        NemesisSchedule schedule = new NemesisSchedule(Nemeses.create(kinds, cluster, PARTITIONS), config, seed, cluster, log, new FakeClock());
        schedule.run(duration);
        assertThat(schedule.active()).isEmpty();
        assertThat(schedule.healAll()).isTrue();
        return new Outcome(cluster, log);
    }
}
