package io.strata.chaos.campaign;

import io.strata.chaos.nemesis.NemesisSchedule;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One campaign run's settings (the {@link Campaign} command line, or a test).
 *
 * @param run the run number (1..254): the third octet of the nodes' addresses and part of their namespace names
 * @param nodes cluster size (3 or 5)
 * @param duration how long the nemeses run
 * @param seed seeds the schedule, the workloads and the cluster id
 * @param nemeses nemesis names ({@code Nemeses.names()})
 * @param workloads workload names (the {@link WorkloadFactory}'s)
 * @param runDir where everything of the run goes; must be absent or empty
 * @param jar the strata.jar the nodes run
 * @param schedule the fault and heal periods and limits
 * @param jvmOptions each node's JVM options
 * @param serverOverrides added to every node's server.properties
 * @param readyTimeout how long the cluster may take to be ready (at start, and after the final heal)
 * @param drainTimeout how long each drain may take
 * @param workloadStopTimeout how long the workloads may take to stop
 */
public record CampaignConfig(int run, int nodes, Duration duration, long seed, List<String> nemeses, List<String> workloads,
                             Path runDir, Path jar, NemesisSchedule.Config schedule, List<String> jvmOptions,
                             Map<String, String> serverOverrides, Duration readyTimeout, Duration drainTimeout,
                             Duration workloadStopTimeout) {
    public CampaignConfig {
        Objects.requireNonNull(runDir, "runDir");
        Objects.requireNonNull(jar, "jar");
        Objects.requireNonNull(schedule, "schedule");
        nemeses = List.copyOf(nemeses);
        workloads = List.copyOf(workloads);
        jvmOptions = List.copyOf(jvmOptions);
        serverOverrides = Map.copyOf(serverOverrides);
        if (nodes < 3) {
            throw new IllegalArgumentException("a campaign needs at least 3 nodes (RF 3): nodes=" + nodes);
        }
        if (workloads.isEmpty()) {
            throw new IllegalArgumentException("no workloads");
        }
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("duration must be positive: duration=" + duration);
        }
    }

    /** Defaults for the rest: the schedule's defaults for {@code nodes}, 512 MB heaps, 120 s ready, 120 s drain, 30 s stop. */
    public static CampaignConfig of(int run, int nodes, Duration duration, long seed, List<String> nemeses, List<String> workloads,
                                    Path runDir, Path jar) {
        return new CampaignConfig(run, nodes, duration, seed, nemeses, workloads, runDir, jar, NemesisSchedule.Config.defaults(nodes),
            List.of("-Xms64m", "-Xmx512m"), Map.of(), Duration.ofSeconds(120), Duration.ofSeconds(120), Duration.ofSeconds(30));
    }

    public CampaignConfig withSchedule(NemesisSchedule.Config newSchedule) {
        return new CampaignConfig(run, nodes, duration, seed, nemeses, workloads, runDir, jar, newSchedule, jvmOptions,
            serverOverrides, readyTimeout, drainTimeout, workloadStopTimeout);
    }
}
