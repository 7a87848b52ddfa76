package io.strata.chaos.campaign;

import io.strata.chaos.cluster.ChaosCluster;
import io.strata.chaos.nemesis.FaultBudget;
import io.strata.chaos.nemesis.NemesisSchedule;
import io.strata.chaos.net.RootNetwork;
import io.strata.chaos.workload.Workloads;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short campaign of CI: three runs of {@code -Dchaos.campaign.seconds} (default 60) seconds on 3 real nodes,
 * each with its own seed, nemesis mix and mix of the real workloads ({@link Workloads}: idempotent producers,
 * consume-transform-produce transactions, consumer groups of both protocols, kcat), together covering every
 * workload and the kill, pause, partition and loss nemeses. Each finds no anomaly, its faults really started
 * and every workload got ok operations. Run numbers 220-222; files under
 * {@code chaos/target/chaos-runs/short-campaign-SEED/}. Root only. The long campaign is {@code chaos/campaign.sh}.
 */
class ShortCampaignTest {

    static Stream<Arguments> runs() {
        return Stream.of(
            Arguments.of(220, 1L, List.of("kill", "pause", "partition"), List.of("idempotent", "txn")),
            Arguments.of(221, 2L, List.of("kill-leader", "partition-leader", "loss"), List.of("idempotent", "group-classic", "kcat")),
            Arguments.of(222, 3L, List.of("kill-controller", "pause-leader", "partition-oneway"), List.of("txn", "group-consumer")));
    }

    @ParameterizedTest(name = "seed {1}: {2} with {3}")
    @MethodSource("runs")
    void aShortCampaignFindsNoAnomaly(int run, long seed, List<String> nemeses, List<String> workloads) throws Exception {
        Assumptions.assumeTrue(RootNetwork.available(), RootNetwork.REASON);
        Path jar;
        try {
            jar = ChaosCluster.defaultJar();
        } catch (IllegalStateException e) {
            Assumptions.abort(e.getMessage());
            return;
        }
        int seconds = Integer.getInteger("chaos.campaign.seconds", 60);
        int nodes = 3;
        // Under target/, not a temporary directory: the node logs and the history outlive a failed run.
        Path runDir = Path.of("target", "chaos-runs", "short-campaign-" + seed);
        deleteRecursively(runDir);
        // Shorter periods than the defaults, so that a minute holds several faults.
        CampaignConfig config = CampaignConfig.of(run, nodes, Duration.ofSeconds(seconds), seed, nemeses, workloads, runDir, jar)
            .withSchedule(new NemesisSchedule.Config(4_000, 10_000, 3_000, 6_000, 2, FaultBudget.quorumTolerance(nodes)));
        CampaignResult result = new CampaignRunner(config, Workloads::create).run();

        String files = " (see " + result.runDir() + ")";
        assertThat(result.harnessErrors()).as("harness errors" + files).isEmpty();
        assertThat(result.anomalies()).as("anomalies" + files).isEmpty();
        assertThat(result.exitCode()).isZero();
        assertThat(result.recovered()).isTrue();
        assertThat(result.nemesisEvents("start")).as("nemesis starts" + files).isGreaterThan(0);
        assertThat(result.nemesisEvents("error")).as("nemesis errors" + files).isZero();
        String okFunction = workloads.contains("txn") ? "txn" : "send";
        assertThat(result.ops().get(okFunction).getOrDefault("ok", 0L)).as("ok " + okFunction + files).isGreaterThan(0);
        if (workloads.stream().anyMatch(w -> w.startsWith("group-"))) {
            assertThat(result.ops().get("poll").getOrDefault("ok", 0L)).as("ok polls" + files).isGreaterThan(0);
            assertThat(result.ops().get("assign").getOrDefault("ok", 0L)).as("ok assigns" + files).isGreaterThan(0);
        }
        assertThat(result.drains()).hasSize(2).allSatisfy(drain -> {
            assertThat(drain.complete()).isTrue();
            assertThat(drain.messages()).isGreaterThan(0);
        });
        for (String file : List.of("history.jsonl", "anomalies.txt", "summary.json", "nemesis.log", "node-1/server.log")) {
            assertThat(result.runDir().resolve(file)).as(file).isNotEmptyFile();
        }
        assertThat(Files.readString(result.runDir().resolve("summary.json"))).contains("\"seed\" : " + seed, "\"anomalies\" : 0");
    }

    private static void deleteRecursively(Path dir) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
