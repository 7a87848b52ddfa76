package io.strata.bench;

import java.util.HashMap;
import java.util.Map;

/**
 * The driver of {@code bench/replication-bench.sh}: the phases of the replication benchmark that
 * need a client program (the throughput phase runs Kafka's own ProducerPerformance and kcat from
 * the shell). The same code measures a 3-node Strata cluster and a 3-node Apache Kafka cluster;
 * it prints {@code RESULT <cluster> <measure> <value>} lines and appends them to {@code --out}.
 *
 * <p>Options (every one is {@code --key value}):
 * <pre>
 *   --name NAME               label of the cluster in the RESULT lines (strata, kafka)
 *   --bootstrap H:P,H:P,H:P   each node's broker listener, in node-id order (node.id 1, 2, 3)
 *   --pid-files F,F,F         each node's pid file, in node-id order (read again after a restart)
 *   --restart-command CMD     run as {@code bash -c "CMD NODE_ID"} to start a stopped node again
 *   --phases P,P              any of latency, failover, catchup, watch (in the order given)
 *   --out FILE                where the RESULT lines are appended
 *
 *   latency:  --latency-rate N (records/s, 1000) --latency-seconds S (30) --latency-warmup-seconds S (5)
 *             --record-size B (1024)
 *   failover: --failover-rounds N (kill -9 rounds of a leader that is not the controller, 3)
 *             --controller-round true|false (one more kill round of a leader that is also the
 *             active controller, true) --pause-s S (SIGSTOP round: the pause, 12; 0 = no round)
 *             --failover-rate N (records/s the producer writes, 1000)
 *   catchup:  --catchup-mb MB (1024) --record-size B (1024) --data-dirs D,D,D (each node's log dir, in
 *             node-id order: the follower's progress is read from its segment files)
 *   watch:    --stop-file F (watch for fenced brokers until F exists) --label L (measure prefix)
 *   await-replicated: --topics T,T (waits until every partition has a leader and a full ISR;
 *             exits 1 with what it saw if that takes longer than 180 s; no RESULT line)
 *   verify-replicas: --topics T,T --partitions N (6) --data-dirs D,D,D --label L: whether every
 *             node's log dir holds all of each partition's bytes ({@link ReplicaCheck})
 * </pre>
 *
 * <p>Every phase creates its own topics (RF 3, {@code min.insync.replicas=2}); the clients run
 * with Kafka's default timeouts unless a phase says otherwise. Not thread-safe: {@link #main}
 * runs the phases one after the other on one thread; each phase documents the threads it starts.
 * Wall time is {@link System#nanoTime()} throughout (intervals only).
 */
public final class ReplicationBench {
    private ReplicationBench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        BenchCluster cluster = new BenchCluster(options);
        for (String phase : cluster.required("phases").split(",")) {
            switch (phase) {
                case "latency" -> new LatencyPhase(cluster).run();
                case "failover" -> new FailoverPhase(cluster).run();
                case "catchup" -> new CatchUpPhase(cluster).run();
                case "watch" -> FencingWatch.watchUntilStopFile(cluster);
                case "await-replicated" -> awaitReplicated(cluster);
                case "verify-replicas" -> ReplicaCheck.verifyPhase(cluster);
                default -> throw new IllegalArgumentException("unknown phase '" + phase + "'");
            }
        }
    }

    private static void awaitReplicated(BenchCluster cluster) throws Exception {
        try (org.apache.kafka.clients.admin.Admin admin = cluster.admin(cluster.allBootstrap())) {
            for (String topic : cluster.required("topics").split(",")) {
                String failure = cluster.awaitFullyReplicated(admin, topic);
                if (failure != null) {
                    System.err.println("replication-bench: " + failure);
                    System.exit(1);
                }
            }
        }
    }

    static Map<String, String> parse(String[] args) {
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("expected --option value pairs, got " + args.length + " arguments");
        }
        Map<String, String> options = new HashMap<>();
        for (int index = 0; index < args.length; index += 2) {
            if (!args[index].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value pairs, got '" + args[index] + "'");
            }
            options.put(args[index].substring(2), args[index + 1]);
        }
        return options;
    }
}
