package io.strata.server.metrics;

import io.strata.metadata.QuorumController;
import io.strata.server.cluster.BrokerReachabilityProbe;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The controller role's election counters and the dead-broker probe's, read at scrape time, in
 * the Prometheus form of Kafka's JMX names (docs/metrics.md):
 *
 * <pre>
 *   kafka_controller_controllerstats_uncleanleaderelections_total              ControllerStats UncleanLeaderElectionsPerSec
 *   kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total  ControllerStats ElectionFromEligibleLeaderReplicasPerSec
 *   strata_controller_broker_probe_refusals_total                              (Strata) refused connections the probe reported
 *   strata_controller_broker_probe_failed_rounds_total                         (Strata) probe rounds that failed (logged)
 * </pre>
 *
 * The election counters count what this node committed while it was the active controller (a
 * node that never was reports 0; the counts restart with the process, as Kafka's meters do). The
 * probe families exist only while the probe runs ({@code strata.broker.disconnect.fence.ms} on a
 * cluster node).
 *
 * <p>Cost: four atomic reads per scrape. Thread-safe: the sources are atomic counters.
 */
public final class ControllerStatsMetrics implements MetricsCollector {
    private final Supplier<QuorumController> controller;
    private final Supplier<BrokerReachabilityProbe> probe;

    /**
     * @param controller this node's controller, or a supplier answering null on a node without the role or before start-up creates it
     * @param probe      the dead-broker probe, or a supplier answering null when it does not run
     */
    public ControllerStatsMetrics(Supplier<QuorumController> controller, Supplier<BrokerReachabilityProbe> probe) {
        this.controller = Objects.requireNonNull(controller, "controller");
        this.probe = Objects.requireNonNull(probe, "probe");
    }

    @Override
    public void collect(List<MetricFamily> out) {
        QuorumController current = controller.get();
        if (current != null) {
            out.add(MetricFamily.counter("kafka_controller_controllerstats_uncleanleaderelections_total",
                "Leaders this node elected as active controller from outside the ISR and ELR (acknowledged records may be lost).")
                .add(current.uncleanLeaderElections()));
            out.add(MetricFamily.counter("kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total",
                "Leaders this node elected as active controller from a partition's eligible leader replicas (KIP-966).")
                .add(current.electionsFromEligibleLeaderReplicas()));
        }
        BrokerReachabilityProbe running = probe.get();
        if (running != null) {
            out.add(MetricFamily.counter("strata_controller_broker_probe_refusals_total",
                "Brokers not yet heard from after a controller failover whose listener refused a connection (reported for fencing).")
                .add(running.refusals()));
            out.add(MetricFamily.counter("strata_controller_broker_probe_failed_rounds_total",
                "Rounds of the probe of brokers not yet heard from that failed (each logged; the next round runs).")
                .add(running.failedRounds()));
        }
    }
}
