package io.strata.chaos.campaign;

import io.strata.chaos.cluster.ChaosCluster;
import io.strata.chaos.nemesis.FaultBudget;
import io.strata.chaos.nemesis.NemesisSchedule;
import io.strata.chaos.net.RootNetwork;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short campaign: 3 real nodes, {@link SyncProducerTestWorkload}, the kill, pause and partition nemeses for
 * {@code -Dchaos.campaign.seconds} (default 60) seconds with seed {@code -Dchaos.campaign.seed} (default 1)
 * ({@code -Dchaos.campaign.nodes=5} and {@code -Dchaos.campaign.nemeses=kill,loss,...} for other mixes);
 * no anomaly, and the faults really happened (nemesis starts, ok operations, and unknown or failed ones). Run
 * number {@value #RUN}; files under {@code chaos/target/chaos-runs/short-campaign-SEED/}. Root only.
 */
class ShortCampaignTest {
    private static final int RUN = 220;

    @Test
    void killPausePartitionCampaignFindsNoAnomaly() throws Exception {
        Assumptions.assumeTrue(RootNetwork.available(), RootNetwork.REASON);
        Path jar;
        try {
            jar = ChaosCluster.defaultJar();
        } catch (IllegalStateException e) {
            Assumptions.abort(e.getMessage());
            return;
        }
        int seconds = Integer.getInteger("chaos.campaign.seconds", 60);
        long seed = Long.getLong("chaos.campaign.seed", 1);
        int nodes = Integer.getInteger("chaos.campaign.nodes", 3);
        List<String> nemeses = List.of(System.getProperty("chaos.campaign.nemeses", "kill,pause,partition").split(","));
        // Under target/, not a temporary directory: the node logs and the history outlive a failed run.
        Path runDir = Path.of("target", "chaos-runs", "short-campaign-" + seed);
        deleteRecursively(runDir);
        // Shorter periods than the defaults, so that a minute holds several faults.
        CampaignConfig config = CampaignConfig.of(RUN, nodes, Duration.ofSeconds(seconds), seed, nemeses, List.of("sync-producer"), runDir, jar)
            .withSchedule(new NemesisSchedule.Config(4_000, 10_000, 3_000, 6_000, 2, FaultBudget.quorumTolerance(nodes)));
        List<SyncProducerTestWorkload> made = new ArrayList<>();
        CampaignResult result = new CampaignRunner(config, (name, workloadSeed) -> {
            assertThat(name).isEqualTo("sync-producer");
            SyncProducerTestWorkload workload = new SyncProducerTestWorkload(workloadSeed);
            made.add(workload);
            return workload;
        }).run();

        String files = " (see " + result.runDir() + ")";
        assertThat(made).hasSize(1);
        assertThat(made.get(0).crashed()).as("workload thread crashed").isNull();
        assertThat(result.harnessErrors()).as("harness errors" + files).isEmpty();
        assertThat(result.anomalies()).as("anomalies" + files).isEmpty();
        assertThat(result.exitCode()).isZero();
        assertThat(result.recovered()).isTrue();
        assertThat(result.nemesisEvents("start")).as("nemesis starts" + files).isGreaterThan(0);
        assertThat(result.nemesisEvents("error")).as("nemesis errors" + files).isZero();
        assertThat(result.ops().get("send").getOrDefault("ok", 0L)).as("ok sends" + files).isGreaterThan(0);
        assertThat(result.opsWithOutcome("info") + result.opsWithOutcome("fail")).as("info or fail ops: faults were felt" + files)
            .isGreaterThan(0);
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
        try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
