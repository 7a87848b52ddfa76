package io.strata.chaos.campaign;

import io.strata.chaos.nemesis.NemesisSchedule;
import io.strata.chaos.nemesis.Nemeses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code campaign} command line, without running a cluster. */
class CampaignCommandTest {
    private static final WorkloadFactory NONE = (name, seed) -> {
        throw new AssertionError("no workload should be made: " + name);
    };

    @TempDir
    Path dir;

    @Test
    void optionsBecomeTheRunConfiguration() {
        Campaign campaign = new Campaign(NONE);
        new CommandLine(campaign).parseArgs("--nodes", "5", "--seconds", "300", "--seed", "9", "--nemeses", "kill,partition-bridge,loss",
            "--workloads", "idempotent,txn", "--out", dir.toString(), "--run", "17", "--jar", "x.jar", "--max-concurrent", "3",
            "--fault-seconds", "2-4", "--heal-seconds", "1-3");
        CampaignConfig config = campaign.config();
        assertThat(config.nodes()).isEqualTo(5);
        assertThat(config.duration()).isEqualTo(Duration.ofSeconds(300));
        assertThat(config.seed()).isEqualTo(9);
        assertThat(config.run()).isEqualTo(17);
        assertThat(config.nemeses()).containsExactly("kill", "partition-bridge", "loss");
        assertThat(config.workloads()).containsExactly("idempotent", "txn");
        assertThat(config.schedule()).isEqualTo(new NemesisSchedule.Config(2_000, 4_000, 1_000, 3_000, 3, 2));
    }

    @Test
    void helpListsEveryNemesisAndExitsZero() {
        StringWriter out = new StringWriter();
        assertThat(Campaign.run(new String[] {"--help"}, NONE, new PrintWriter(out, true), new PrintWriter(new StringWriter()))).isZero();
        assertThat(Campaign.NEMESES_HELP.replaceAll(" \\(.*", "").split(", ")).containsExactlyElementsOf(Nemeses.names());
        assertThat(out.toString().replaceAll("\\s+", " ")).contains(Campaign.NEMESES_HELP);
    }

    @Test
    void noneIsABaselineRun() {
        Campaign campaign = new Campaign(NONE);
        new CommandLine(campaign).parseArgs("--nemeses", "none", "--workloads", "w", "--out", dir.toString(), "--jar", "x.jar");
        assertThat(campaign.config().nemeses()).isEmpty();
    }

    @Test
    void badArgumentsExitWithUsageBeforeAnyClusterStarts() {
        assertUsage("unknown nemesis: kil", "--nemeses", "kil", "--workloads", "w", "--out", dir.toString(), "--jar", "x.jar");
        assertUsage("--nodes must be 3 or 5", "--nodes", "4", "--workloads", "w", "--out", dir.toString(), "--jar", "x.jar");
        assertUsage("--workloads", "--out", dir.toString());
        assertUsage("MIN-MAX", "--fault-seconds", "5", "--workloads", "w", "--out", dir.toString(), "--jar", "x.jar");
    }

    @Test
    void anUnknownWorkloadIsRefusedBeforeTheRunDirectoryIsMade() {
        Path runDir = dir.resolve("run");
        StringWriter err = new StringWriter();
        int exit = Campaign.run(new String[] {"--workloads", "nope", "--out", runDir.toString(), "--jar", "x.jar"}, Campaign.REGISTRY,
            new PrintWriter(new StringWriter()), new PrintWriter(err, true));
        assertThat(exit).isEqualTo(Campaign.EXIT_USAGE);
        assertThat(err.toString()).contains("unknown workload: name=nope");
        assertThat(runDir).doesNotExist();
    }

    private static void assertUsage(String message, String... args) {
        StringWriter err = new StringWriter();
        int exit = Campaign.run(args, NONE, new PrintWriter(new StringWriter()), new PrintWriter(err, true));
        assertThat(exit).as(List.of(args).toString()).isEqualTo(Campaign.EXIT_USAGE);
        assertThat(err.toString()).contains(message);
    }
}
