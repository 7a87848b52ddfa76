package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@code failover} phase: from the loss of a partition leader to the next acknowledged write.
 *
 * <p>Rounds, in this order: {@code --failover-rounds} kill rounds whose victim leads the
 * partition but is not the active controller (the victims rotate over those nodes); one kill
 * round whose victim is both ({@code --controller-round}); one pause round ({@code --pause-s} > 0).
 * Each round:
 * <ol>
 *   <li>creates a fresh 1-partition RF 3 topic ({@code min.insync.replicas=2}) whose assignment
 *       puts the victim first, waits until the victim leads it with a full ISR;</li>
 *   <li>starts an {@link AckStamper} ({@code --failover-rate} records/s) and waits for 2 s of acks;</li>
 *   <li>kill round: SIGKILL of the victim's node process; pause round: SIGSTOP, and SIGCONT
 *       {@code --pause-s} later (past Kafka's 9 s broker session timeout);</li>
 *   <li>reports mark → first ack of a record sent after the mark ({@code _s}), mark → the
 *       partition shows another leader ({@code _leader_s}, Admin through the survivors) and
 *       mark → the victim is reported fenced ({@code _fenced_s}, {@link FencingWatch}); pause
 *       round: also SIGCONT → that ack ({@code _resume_to_ack_s}) when it came after the resume;</li>
 *   <li>kill round: starts the node again; both: waits until it is back in the ISR ({@code _rejoin_s}).
 *       A victim never seen out of the ISR after the mark (Kafka removes a fenced broker from every
 *       ISR), or not back within {@link #REJOIN_TIMEOUT_MS}, is reported and ends the rounds.</li>
 * </ol>
 * A {@link FencingWatch} runs through all rounds: a fencing of any node that is not the current
 * victim is reported as {@code failover_live_fenced}.
 *
 * <p>Not thread-safe; the phase's thread runs the rounds (the stamper and the watch have their own).
 */
final class FailoverPhase {
    /** Acks the stamper must have had before the victim is hit, in seconds of its rate. */
    private static final int STEADY_SECONDS = 2;
    /**
     * Longest wait for a victim to be back in the ISR (Kafka: 11–14 s, JVM start included). A
     * round whose victim does not rejoin ends the phase: the next round needs a full ISR.
     */
    private static final long REJOIN_TIMEOUT_MS = 90_000;

    private enum Kind { KILL, CONTROLLER_KILL, PAUSE }

    private final BenchCluster cluster;
    private final int rate;
    /** Why the remaining rounds are skipped (a victim did not rejoin), or null. */
    private String skipReason;

    FailoverPhase(BenchCluster cluster) {
        this.cluster = cluster;
        this.rate = cluster.intOption("failover-rate", 1_000);
    }

    void run() throws Exception {
        int rounds = cluster.intOption("failover-rounds", 3);
        boolean controllerRound = Boolean.parseBoolean(cluster.option("controller-round", "true"));
        int pauseSeconds = cluster.intOption("pause-s", 12);
        List<Long> killNanos = new ArrayList<>();
        try (FencingWatch watch = new FencingWatch(cluster); Admin admin = cluster.admin(cluster.allBootstrap())) {
            for (int round = 1; round <= rounds; round++) {
                long nanos = round(admin, watch, Kind.KILL, "failover_kill" + round, round, 0);
                if (nanos >= 0) {
                    killNanos.add(nanos);
                }
            }
            if (controllerRound) {
                round(admin, watch, Kind.CONTROLLER_KILL, "failover_controller_kill", 0, 0);
            }
            if (pauseSeconds > 0) {
                round(admin, watch, Kind.PAUSE, "failover_pause", rounds + 1, pauseSeconds);
            }
            if (!killNanos.isEmpty()) {
                List<Long> sorted = new ArrayList<>(killNanos);
                Collections.sort(sorted);
                cluster.result("failover_kill_median_s", BenchCluster.seconds(sorted.get(sorted.size() / 2)));
                cluster.result("failover_kill_max_s", BenchCluster.seconds(sorted.get(sorted.size() - 1)));
            }
            watch.report(cluster, "failover");
        }
    }

    /** One round; mark → next ack in nanoseconds, or -1 when it was not measured (reported). */
    private long round(Admin admin, FencingWatch watch, Kind kind, String measure, int rotation, int pauseSeconds) throws Exception {
        if (skipReason != null) {
            cluster.notMeasured(measure + "_s", "skipped: " + skipReason);
            return -1;
        }
        int controller = admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS).leaderId();
        int victim = kind == Kind.CONTROLLER_KILL ? controller : nonController(controller, rotation);
        List<Integer> replicas = new ArrayList<>(List.of(victim));
        for (int id = 1; id <= cluster.nodeCount(); id++) {
            if (id != victim) {
                replicas.add(id);
            }
        }
        String topic = measure.replace('_', '-') + "-" + System.nanoTime();
        BenchCluster.createTopic(admin, topic, Map.of(0, replicas));
        String failure = awaitLeader(admin, topic, victim);
        if (failure != null) {
            cluster.notMeasured(measure + "_s", failure);
            return -1;
        }
        try (Admin survivors = cluster.admin(cluster.bootstrapExcept(victim));
             AckStamper stamper = new AckStamper(cluster.allBootstrap(), topic, rate)) {
            survivors.describeCluster().nodes().get(30, TimeUnit.SECONDS); // connected before the victim goes
            if (!awaitAcks(stamper, (long) rate * STEADY_SECONDS)) {
                cluster.notMeasured(measure + "_s", "the producer had " + stamper.acks() + " acks after 60 s on " + topic
                    + " (errors " + stamper.errors() + ", first " + stamper.firstError() + ")");
                return -1;
            }
            ProcessHandle process = cluster.process(victim);
            long acksBefore = stamper.acks();
            watch.expectDown(victim);
            long markNanos = System.nanoTime();
            stamper.mark(markNanos);
            if (kind == Kind.PAUSE) {
                cluster.signal(victim, "STOP");
            } else {
                process.destroyForcibly();
            }
            Outcome outcome = awaitOutcome(survivors, stamper, topic, victim, markNanos, pauseSeconds);
            report(measure, kind, outcome, watch, stamper, victim, controller, acksBefore, markNanos);
            if (kind != Kind.PAUSE) {
                process.onExit().get(30, TimeUnit.SECONDS); // gone before it is started again
                cluster.restart(victim);
            }
            long rejoinStartNanos = System.nanoTime();
            // A victim never seen out of the ISR would "rejoin" at once: no figure rather than a false one.
            String rejoin = outcome.leftIsr ? awaitInIsr(survivors, topic, victim)
                : "node" + victim + " was never seen out of the ISR of " + topic + " before the round's end";
            if (rejoin != null) {
                cluster.notMeasured(measure + "_rejoin_s", rejoin);
                skipReason = measure + ": " + rejoin;
                return outcome.ackNanos < 0 ? -1 : outcome.ackNanos - markNanos;
            }
            watch.expectUp(victim);
            cluster.result(measure + "_rejoin_s", BenchCluster.seconds(System.nanoTime() - rejoinStartNanos));
            return outcome.ackNanos < 0 ? -1 : outcome.ackNanos - markNanos;
        }
    }

    /** What the round saw after the mark; -1 = not seen; leftIsr: the victim was seen out of the ISR. */
    private record Outcome(long ackNanos, long leaderNanos, long resumedNanos, int newLeader, boolean leftIsr) {
    }

    /** Waits for the next ack and the new leader (and resumes a paused victim on time). */
    private Outcome awaitOutcome(Admin survivors, AckStamper stamper, String topic, int victim, long markNanos, int pauseSeconds)
        throws Exception {
        long deadlineNanos = markNanos + TimeUnit.MILLISECONDS.toNanos(BenchCluster.CONDITION_TIMEOUT_MS);
        long resumeAtNanos = pauseSeconds > 0 ? markNanos + TimeUnit.SECONDS.toNanos(pauseSeconds) : -1;
        long resumedNanos = -1;
        long leaderNanos = -1;
        int newLeader = -1;
        boolean leftIsr = false;
        try {
            while (System.nanoTime() < deadlineNanos) {
                if (resumeAtNanos > 0 && resumedNanos < 0 && System.nanoTime() >= resumeAtNanos) {
                    cluster.signal(victim, "CONT");
                    resumedNanos = System.nanoTime();
                }
                if (leaderNanos < 0 || !leftIsr) {
                    TopicDescription description = BenchCluster.describeOrNull(survivors, topic);
                    TopicPartitionInfo partition = description == null ? null : description.partitions().get(0);
                    Node leader = partition == null ? null : partition.leader();
                    if (leaderNanos < 0 && leader != null && leader.id() >= 0 && leader.id() != victim) {
                        leaderNanos = System.nanoTime();
                        newLeader = leader.id();
                    }
                    leftIsr |= partition != null && partition.isr().stream().noneMatch(node -> node.id() == victim);
                }
                boolean resumedOrKilled = resumeAtNanos < 0 || resumedNanos > 0;
                if (stamper.firstAckAfterMarkNanos() > 0 && leaderNanos > 0 && resumedOrKilled) {
                    break;
                }
                Thread.sleep(BenchCluster.POLL_INTERVAL_MS);
            }
        } finally {
            if (resumeAtNanos > 0 && resumedNanos < 0) {
                cluster.signal(victim, "CONT"); // never leave a node stopped
                resumedNanos = System.nanoTime();
            }
        }
        return new Outcome(stamper.firstAckAfterMarkNanos(), leaderNanos, resumedNanos, newLeader, leftIsr);
    }

    private void report(String measure, Kind kind, Outcome outcome, FencingWatch watch, AckStamper stamper,
                        int victim, int controller, long acksBefore, long markNanos) {
        if (outcome.ackNanos < 0) {
            cluster.notMeasured(measure + "_s", "no acknowledged write within " + BenchCluster.CONDITION_TIMEOUT_MS + " ms after "
                + kind + " of node " + victim + " (errors " + stamper.errors() + ", first " + stamper.firstError() + ")");
        } else {
            cluster.result(measure + "_s", BenchCluster.seconds(outcome.ackNanos - markNanos));
        }
        cluster.result(measure + "_leader_s", outcome.leaderNanos < 0 ? "NOT_SEEN" : BenchCluster.seconds(outcome.leaderNanos - markNanos));
        long fencedNanos = watch.firstFencedNanos(victim);
        cluster.result(measure + "_fenced_s", fencedNanos < 0 ? "NOT_SEEN" : BenchCluster.seconds(fencedNanos - markNanos));
        String detail = "victim=node" + victim + ",controller=node" + controller + ",new_leader=node" + outcome.newLeader
            + ",left_isr=" + outcome.leftIsr + ",acks_before=" + acksBefore + ",send_errors=" + stamper.errors();
        if (kind == Kind.PAUSE) {
            detail += ",resumed_after_s=" + BenchCluster.seconds(outcome.resumedNanos - markNanos)
                + ",ack_while_paused=" + (outcome.ackNanos > 0 && outcome.ackNanos < outcome.resumedNanos);
            // The client's request to the paused leader stays in flight (request.timeout.ms 30 s),
            // so the ack usually follows the resume: how soon it does is the resumed broker's part.
            if (outcome.ackNanos > 0 && outcome.ackNanos >= outcome.resumedNanos) {
                cluster.result(measure + "_resume_to_ack_s", BenchCluster.seconds(outcome.ackNanos - outcome.resumedNanos));
            }
        }
        cluster.result(measure + "_detail", detail);
    }

    /** The {@code rotation}-th node (cyclically) that is not {@code controller}. */
    private int nonController(int controller, int rotation) {
        List<Integer> candidates = new ArrayList<>();
        for (int id = 1; id <= cluster.nodeCount(); id++) {
            if (id != controller) {
                candidates.add(id);
            }
        }
        return candidates.get(Math.floorMod(rotation - 1, candidates.size()));
    }

    private String awaitLeader(Admin admin, String topic, int leaderId) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BenchCluster.CONDITION_TIMEOUT_MS);
        TopicDescription last = null;
        while (System.nanoTime() < deadlineNanos) {
            last = BenchCluster.describeOrNull(admin, topic);
            if (cluster.fullyReplicated(last) && last.partitions().get(0).leader().id() == leaderId) {
                return null;
            }
            Thread.sleep(BenchCluster.POLL_INTERVAL_MS);
        }
        return "after " + BenchCluster.CONDITION_TIMEOUT_MS + " ms " + topic + " (leader wanted: node" + leaderId + ") was "
            + BenchCluster.summary(last);
    }

    private static String awaitInIsr(Admin admin, String topic, int nodeId) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REJOIN_TIMEOUT_MS);
        TopicDescription last = null;
        while (System.nanoTime() < deadlineNanos) {
            last = BenchCluster.describeOrNull(admin, topic);
            if (last != null) {
                TopicPartitionInfo partition = last.partitions().get(0);
                if (partition.isr().stream().anyMatch(node -> node.id() == nodeId)) {
                    return null;
                }
            }
            Thread.sleep(BenchCluster.POLL_INTERVAL_MS);
        }
        return "node" + nodeId + " not back in the ISR of " + topic + " after " + REJOIN_TIMEOUT_MS + " ms: "
            + BenchCluster.summary(last);
    }

    static boolean awaitAcks(AckStamper stamper, long acks) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (stamper.acks() < acks && System.nanoTime() < deadlineNanos) {
            Thread.sleep(BenchCluster.POLL_INTERVAL_MS);
        }
        return stamper.acks() >= acks;
    }
}
