package io.strata.chaos.campaign;

import io.strata.chaos.checker.Anomaly;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What a campaign run found (also written as {@code summary.json}).
 *
 * @param runDir the run's directory
 * @param seed the seed
 * @param nodes cluster size
 * @param nemeses nemesis names
 * @param workloads workload names
 * @param ops per function ({@code send}, {@code poll}, ...) per outcome ({@code ok}, {@code fail}, {@code info}),
 *            operations counted once (an invoke never completed counts as info)
 * @param anomalies every anomaly the checker found
 * @param nemesisEvents per {@code NemesisEvent.Type} name, how many
 * @param drains the drains
 * @param recovered whether every node was ready again after the final heal
 * @param harnessErrors what kept the run from being checked completely (empty when nothing)
 * @param durationsMs per phase ({@code startup}, {@code faults}, {@code recovery}, {@code stop}, {@code drain},
 *                    {@code check}, {@code total}), milliseconds
 */
public record CampaignResult(Path runDir, long seed, int nodes, List<String> nemeses, List<String> workloads,
                             Map<String, Map<String, Long>> ops, List<Anomaly> anomalies, Map<String, Long> nemesisEvents,
                             List<Drainer.Result> drains, boolean recovered, List<String> harnessErrors,
                             Map<String, Long> durationsMs) {
    /** Exit status of a run: 0 no anomaly, 1 anomalies, 2 a run that could not be checked completely (and no anomaly). */
    public static final int EXIT_ANOMALIES = 1;
    public static final int EXIT_HARNESS = 2;

    public CampaignResult {
        nemeses = List.copyOf(nemeses);
        workloads = List.copyOf(workloads);
        ops = Map.copyOf(ops);
        anomalies = List.copyOf(anomalies);
        nemesisEvents = Map.copyOf(nemesisEvents);
        drains = List.copyOf(drains);
        harnessErrors = List.copyOf(harnessErrors);
        durationsMs = Map.copyOf(durationsMs);
    }

    public int exitCode() {
        if (!anomalies.isEmpty()) {
            return EXIT_ANOMALIES;
        }
        return harnessErrors.isEmpty() ? 0 : EXIT_HARNESS;
    }

    /** Operations of any function with this outcome ({@code ok}, {@code fail}, {@code info}). */
    public long opsWithOutcome(String outcome) {
        return ops.values().stream().mapToLong(byOutcome -> byOutcome.getOrDefault(outcome, 0L)).sum();
    }

    public long nemesisEvents(String type) {
        return nemesisEvents.getOrDefault(type, 0L);
    }
}
