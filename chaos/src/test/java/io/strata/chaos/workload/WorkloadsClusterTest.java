package io.strata.chaos.workload;

import io.strata.chaos.checker.Anomaly;
import io.strata.chaos.checker.Checker;
import io.strata.chaos.cluster.ChaosCluster;
import io.strata.chaos.history.History;
import io.strata.chaos.history.HistoryReader;
import io.strata.chaos.history.HistoryWriter;
import io.strata.chaos.history.Op;
import io.strata.chaos.net.RootNetwork;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every workload against one real 3-node cluster (run 210): create its topics, run it until it has done enough
 * (a condition with a deadline), stop it, drain every partition with read_committed and read_uncommitted, run
 * the {@link Checker}: many ok ops, no anomaly. One test kills the leader of a partition mid-run (kill -9, then
 * restart) and still finds no anomaly, with some info outcomes. Root only (network namespaces).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkloadsClusterTest {
    private static final int RUN = 210;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration WORK_TIMEOUT = Duration.ofSeconds(40);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(30);
    private static final long POLL_MS = 250;

    private ChaosCluster cluster;
    private Admin admin;

    @BeforeAll
    void startCluster() throws Exception {
        Assumptions.assumeTrue(RootNetwork.available(), RootNetwork.REASON);
        Path jar;
        try {
            jar = ChaosCluster.defaultJar();
        } catch (IllegalStateException e) {
            Assumptions.abort(e.getMessage());
            return;
        }
        // Under target/, not a temporary directory: the node logs outlive a failed run.
        Path runDir = Path.of("target", "chaos-runs", "workloads");
        deleteRecursively(runDir);
        cluster = new ChaosCluster(RUN, 3, runDir, jar, List.of("-Xms64m", "-Xmx512m"), Map.of(), 210);
        cluster.start();
        cluster.awaitReady(READY_TIMEOUT);
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "4000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "8000");
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
        admin = Admin.create(properties);
    }

    @AfterAll
    void closeCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(2));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void idempotentProducersLoseAndDuplicateNothing(@TempDir Path dir) throws Exception {
        Result result = run(new IdempotentProducerWorkload("wl-idempotent", 6, 3), 11, dir,
            counts -> counts.get(Op.Function.SEND, Op.Type.OK) >= 1_500, null);
        assertThat(result.counts.get(Op.Function.SEND, Op.Type.OK)).isGreaterThanOrEqualTo(1_500);
        assertThat(result.anomalies).isEmpty();
    }

    @Test
    void idempotentProducersSurviveTheLeaderKilledAndRestarted(@TempDir Path dir) throws Exception {
        String topic = "wl-idempotent-kill";
        // Short timeouts: sends parked on the dead leader expire (info) before a new leader is elected.
        Result result = run(new IdempotentProducerWorkload(topic, 3, 3, 1_500, 1_000), 12, dir,
            new KillLeaderMidRun(topic, Op.Function.SEND, 200, 300));
        assertThat(result.counts.get(Op.Function.SEND, Op.Type.OK)).isGreaterThanOrEqualTo(1_000);
        assertThat(result.counts.get(Op.Function.SEND, Op.Type.INFO) + result.counts.get(Op.Function.SEND, Op.Type.FAIL))
            .as("sends with an unknown or failed outcome around the kill").isPositive();
        assertThat(result.anomalies).isEmpty();
    }

    @Test
    void transactionsCommitAbortAndAreReadAtomically(@TempDir Path dir) throws Exception {
        Result result = run(new TransactionalWorkload("wl-txn-in", "wl-txn-out", 3, 2), 13, dir,
            counts -> counts.get(Op.Function.TXN, Op.Type.OK) >= 40 && counts.get(Op.Function.TXN, Op.Type.FAIL) >= 5, null);
        assertThat(result.counts.get(Op.Function.TXN, Op.Type.OK)).isGreaterThanOrEqualTo(40);
        assertThat(result.counts.get(Op.Function.TXN, Op.Type.FAIL)).as("deliberately aborted txns").isGreaterThanOrEqualTo(5);
        assertThat(result.anomalies).isEmpty();
    }

    @Test
    void transactionsSurviveTheOutputLeaderKilledAndRestarted(@TempDir Path dir) throws Exception {
        String output = "wl-txn-kill-out";
        Result result = run(new TransactionalWorkload("wl-txn-kill-in", output, 3, 2), 17, dir,
            counts -> counts.get(Op.Function.TXN, Op.Type.OK) >= 30, new KillLeaderMidRun(output, Op.Function.TXN, 10, 10));
        assertThat(result.counts.get(Op.Function.TXN, Op.Type.OK)).isGreaterThanOrEqualTo(30);
        assertThat(result.anomalies).isEmpty();
    }

    @Test
    void classicGroupConsumersNeverShareAPartitionInAGeneration(@TempDir Path dir) throws Exception {
        groupWorkload("classic", false, dir, 14);
    }

    @Test
    void consumerProtocolGroupConsumersNeverShareAPartitionInAGeneration(@TempDir Path dir) throws Exception {
        groupWorkload("consumer", true, dir, 15);
    }

    @Test
    void kcatProducerDeliveryReportsCarryOffsets(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(KcatProducerWorkload.available(), "needs kcat (apt-get install kcat)");
        Result result = run(new KcatProducerWorkload("wl-kcat", 3, 2), 16, dir,
            counts -> counts.get(Op.Function.SEND, Op.Type.OK) >= 200, null);
        assertThat(result.counts.get(Op.Function.SEND, Op.Type.OK)).isGreaterThanOrEqualTo(200);
        assertThat(result.history.ops()).filteredOn(op -> op.type() == Op.Type.OK && op.function() == Op.Function.SEND)
            .allSatisfy(op -> assertThat(((io.strata.chaos.history.SendValue) op.value()).offset()).isNotNegative());
        assertThat(result.anomalies).isEmpty();
    }

    private void groupWorkload(String protocol, boolean readCommitted, Path dir, long seed) throws Exception {
        Result result = run(new ConsumerGroupWorkload("wl-group-" + protocol, 4, 3, protocol, readCommitted), seed, dir,
            counts -> counts.get(Op.Function.POLL, Op.Type.OK) >= 60 && counts.get(Op.Function.ASSIGN, Op.Type.OK) >= 6, null);
        assertThat(result.counts.get(Op.Function.POLL, Op.Type.OK)).isGreaterThanOrEqualTo(60);
        assertThat(result.counts.get(Op.Function.ASSIGN, Op.Type.OK)).isGreaterThanOrEqualTo(6);
        assertThat(result.anomalies).isEmpty();
    }

    /** Runs a workload until {@code enough} holds (or fails at the deadline), optionally with a fault mid-run. */
    private Result run(Workload workload, long seed, Path dir, Predicate<Counts> enough, Fault fault) throws Exception {
        createTopics(workload.topics());
        Path file = dir.resolve("history.jsonl");
        HistoryWriter writer = HistoryWriter.create(file);
        Recorder recorder = Recorder.of(writer);
        workload.start(new WorkloadContext(cluster.bootstrapServers(), recorder, seed, dir.resolve("work")));
        try {
            if (fault != null) {
                fault.inject(file);
            }
            awaitCounts(file, enough, WORK_TIMEOUT, workload.name());
        } finally {
            workload.stop(STOP_TIMEOUT);
        }
        Drain.drain(cluster.bootstrapServers(), recorder, workload.topics(), true, DRAIN_TIMEOUT);
        Drain.drain(cluster.bootstrapServers(), recorder, workload.topics(), false, DRAIN_TIMEOUT);
        writer.close();
        History history = History.read(file);
        List<Anomaly> anomalies = new Checker().check(history);
        Counts counts = Counts.of(file);
        System.out.println(workload.name() + ": " + counts + ", " + anomalies.size() + " anomalies; history " + file);
        anomalies.stream().limit(20).forEach(anomaly -> System.out.println("  " + anomaly));
        return new Result(history, counts, anomalies);
    }

    private void awaitCounts(Path file, Predicate<Counts> enough, Duration timeout, String what) throws Exception {
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        Counts counts = Counts.of(file);
        while (!enough.test(counts)) {
            if (System.nanoTime() - deadlineNanos > 0) {
                throw new AssertionError(what + " did not do enough within " + timeout + ": " + counts + "\n" + logTails());
            }
            Thread.sleep(POLL_MS);
            counts = Counts.of(file);
        }
    }

    private void createTopics(List<TopicSpec> topics) throws Exception {
        List<NewTopic> requests = new ArrayList<>();
        for (TopicSpec topic : topics) {
            requests.add(new NewTopic(topic.name(), topic.partitions(), topic.replicationFactor()).configs(topic.configs()));
        }
        admin.createTopics(requests).all().get(30, TimeUnit.SECONDS);
        for (TopicSpec topic : topics) {
            awaitPartitions(topic.name(), info -> info.leader() != null && info.isr().size() == 3, Duration.ofSeconds(30), "leaders and full ISRs");
        }
    }

    private List<TopicPartitionInfo> awaitPartitions(String topic, Predicate<TopicPartitionInfo> condition, Duration timeout, String what)
            throws InterruptedException {
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        Object last = null;
        while (System.nanoTime() - deadlineNanos < 0) {
            try {
                TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get(5, TimeUnit.SECONDS).get(topic);
                last = description;
                if (description.partitions().stream().allMatch(condition)) {
                    return description.partitions();
                }
            } catch (Exception e) {
                last = e; // a node may be down mid-fault; ask again until the deadline
            }
            Thread.sleep(POLL_MS);
        }
        throw new AssertionError("topic " + topic + ": no " + what + " within " + timeout + "; last: " + last + "\n" + logTails());
    }

    /** Something done to the cluster while the workload runs; returns when the cluster is whole again. */
    private interface Fault {
        void inject(Path history) throws Exception;
    }

    /**
     * Waits for {@code before} ok ops of {@code function}, kills partition 0's leader, waits for {@code after} more,
     * restarts the node and waits until it is ready and back in every ISR of the topic.
     */
    private final class KillLeaderMidRun implements Fault {
        private final String topic;
        private final Op.Function function;
        private final long before;
        private final long after;

        KillLeaderMidRun(String topic, Op.Function function, long before, long after) {
            this.topic = topic;
            this.function = function;
            this.before = before;
            this.after = after;
        }

        @Override
        public void inject(Path history) throws Exception {
            awaitCounts(history, counts -> counts.get(function, Op.Type.OK) >= before, WORK_TIMEOUT, "before the kill");
            int leader = awaitPartitions(topic, info -> info.leader() != null, Duration.ofSeconds(10), "a leader").get(0).leader().id();
            cluster.kill9(leader);
            long okAtKill = Counts.of(history).get(function, Op.Type.OK);
            awaitCounts(history, counts -> counts.get(function, Op.Type.OK) >= okAtKill + after, WORK_TIMEOUT,
                "after killing node " + leader);
            cluster.startNode(leader);
            cluster.awaitReady(leader, READY_TIMEOUT);
            awaitPartitions(topic, info -> info.leader() != null && info.isr().size() == 3, Duration.ofSeconds(45),
                "node " + leader + " back in every ISR");
        }
    }

    private Result run(Workload workload, long seed, Path dir, Fault fault) throws Exception {
        return run(workload, seed, dir, counts -> counts.get(Op.Function.SEND, Op.Type.OK) >= 1_000, fault);
    }

    /** Completions by function and type, read from the history file as it grows. */
    private record Counts(Map<Op.Function, Map<Op.Type, Long>> byFunction) {
        static Counts of(Path file) throws IOException {
            Map<Op.Function, Map<Op.Type, Long>> counts = new EnumMap<>(Op.Function.class);
            try (HistoryReader reader = HistoryReader.open(file)) {
                reader.forEach(op -> {
                    if (op.isCompletion()) {
                        counts.computeIfAbsent(op.function(), f -> new EnumMap<>(Op.Type.class)).merge(op.type(), 1L, Long::sum);
                    }
                });
            }
            return new Counts(counts);
        }

        long get(Op.Function function, Op.Type type) {
            return byFunction.getOrDefault(function, Map.of()).getOrDefault(type, 0L);
        }
    }

    private record Result(History history, Counts counts, List<Anomaly> anomalies) {
    }

    private String logTails() {
        StringBuilder text = new StringBuilder();
        for (int node = 1; node <= cluster.nodes(); node++) {
            text.append("--- node ").append(node).append(" (").append(cluster.nodeDir(node)).append(")\n")
                .append(cluster.logTail(node)).append('\n');
        }
        return text.toString();
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
