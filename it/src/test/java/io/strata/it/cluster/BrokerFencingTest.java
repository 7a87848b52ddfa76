package io.strata.it.cluster;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A broker killed with kill -9 (no controlled shutdown) is fenced once its session times out:
 * the other nodes stop listing it and its RF=1 partitions go offline (leader -1); restarted, it
 * registers again, is unfenced, leads its partitions again, and producers write to them.
 *
 * <p>The dead-broker fast path ({@code strata.broker.disconnect.fence.ms}, a Strata addition),
 * with Kafka's default timeouts (session 9 s, heartbeat 2 s): a killed broker, whose sockets
 * close at once, is fenced within about a second and the next acknowledged write to a partition
 * it led comes within 3 s; a broker killed with the active controller (a combined node), which no
 * connection to the new controller can reveal, is fenced once the new controller finds its
 * listener refusing connections; a paused one (sockets open) keeps Kafka's session timeout; and
 * brokers that stay alive are never fenced, also under load across a controller failover.
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class BrokerFencingTest {
    /** Fencing must follow the session timeout by at most this much: heartbeat checks, the metadata commit and its propagation. */
    private static final Duration FENCING_SLACK = Duration.ofSeconds(7);
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final String TOPIC = "fenced";
    private static final int PARTITIONS = 6;

    @TempDir
    Path dir;

    private ClusterHarness cluster;

    /** Kafka's default broker timeouts (the harness shortens them), set explicitly for the fast-path cases. */
    private static final Map<String, String> KAFKA_TIMEOUTS = Map.of("broker.session.timeout.ms", "9000", "broker.heartbeat.interval.ms", "2000");
    /** The target: from kill -9 to fenced, and to the next acknowledged write. */
    private static final long FAST_PATH_MAX_MS = 3_000;
    /** Kill -9 of the active controller's node to its broker fenced: the raft election comes first. */
    private static final long FAST_PATH_CONTROLLER_MAX_MS = 7_000;

    private void startCluster(Map<String, String> overrides) throws Exception {
        cluster = ClusterHarness.combined(dir, 3, overrides); // assigned first: a failed start still closes it and prints its logs
        cluster.start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void killedBrokerIsFencedItsPartitionsGoOfflineAndComeBackWhenItRestarts() throws Exception {
        startCluster(Map.of());
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Map<Integer, Integer> leaders = awaitLeaders(cluster.bootstrapServers());
        int controller = cluster.awaitActiveController(DEADLINE);
        // The victim is a broker that is not the active controller: this test is about fencing, not failover.
        int victim = leaders.values().stream().filter(id -> id != controller).findFirst()
            .orElseThrow(() -> new AssertionError("every partition is led by the active controller " + controller + ": " + leaders));
        Set<Integer> victimPartitions = leaders.entrySet().stream().filter(entry -> entry.getValue() == victim).map(Map.Entry::getKey)
            .collect(Collectors.toSet());
        ClusterHarness.Node observer = cluster.nodes().stream().filter(node -> node.id() != victim).findFirst().orElseThrow();

        long killedAtNanos = System.nanoTime();
        cluster.node(victim).kill9();
        Duration fencingMax = Duration.ofMillis(ClusterHarness.SESSION_TIMEOUT_MS).plus(FENCING_SLACK);
        try (Admin admin = ClusterHarness.admin(observer.bootstrap())) {
            ClusterHarness.waitUntil(() -> {
                Set<Integer> brokers = admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().map(Node::id).collect(Collectors.toSet());
                if (brokers.contains(victim)) {
                    return false;
                }
                TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC);
                return description.partitions().stream().filter(partition -> victimPartitions.contains(partition.partition()))
                    .allMatch(partition -> partition.leader() == null || partition.leader().isEmpty());
            }, fencingMax, observer + " no longer lists node " + victim + " and its partitions " + victimPartitions + " have no leader");
            System.out.printf("node %d fenced and its partitions offline %d ms after kill -9%n", victim,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAtNanos));

            TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC);
            for (TopicPartitionInfo partition : description.partitions()) {
                assertThat(partition.replicas()).as("RF=1 partition %d keeps its replica", partition.partition()).hasSize(1);
                if (!victimPartitions.contains(partition.partition())) {
                    assertThat(partition.leader()).as("partition %d of a live node keeps its leader", partition.partition()).isNotNull();
                    assertThat(partition.leader().id()).isEqualTo(leaders.get(partition.partition()));
                }
            }
        }
        // Metadata (what producers read) through the observer: the victim's partitions have no leader (LEADER_NOT_AVAILABLE).
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(ThreeNodeClusterTest.consumerProperties(observer.bootstrap(), null))) {
            List<PartitionInfo> partitions = consumer.partitionsFor(TOPIC, Duration.ofSeconds(10));
            assertThat(partitions).filteredOn(partition -> victimPartitions.contains(partition.partition()))
                .allSatisfy(partition -> assertThat(partition.leader() == null || partition.leader().isEmpty())
                    .as("Metadata leader of partition %d: %s", partition.partition(), partition.leader()).isTrue());
        }

        cluster.node(victim).start();
        Map<Integer, Integer> after = awaitLeaders(cluster.bootstrapServers());
        assertThat(after).as("every partition is led by its only replica again").isEqualTo(leaders);

        Properties properties = ThreeNodeClusterTest.producerProperties(cluster.bootstrapServers());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (int partition : victimPartitions) {
                sends.add(producer.send(new ProducerRecord<>(TOPIC, partition, "after-restart", "value")));
            }
            for (Future<RecordMetadata> send : sends) {
                assertThat(send.get(30, TimeUnit.SECONDS).offset()).isNotNegative();
            }
        }
    }

    // ------------------------------------------------------------ the dead-broker fast path, with Kafka's default timeouts

    @Test
    void killedBrokerIsFencedWithinTheDisconnectGraceNotTheSessionTimeout() throws Exception {
        startCluster(KAFKA_TIMEOUTS);
        int controller = cluster.awaitActiveController(DEADLINE);
        // Not the active controller: the case of the heartbeat connection closing (the controller's own node: see the failover test).
        int victim = otherThan(controller);
        ClusterHarness.Node observer = cluster.node(controller);
        try (Admin admin = ClusterHarness.admin(observer.bootstrap())) {
            ClusterHarness.waitUntil(() -> listedBrokers(admin).size() == 3, DEADLINE, "every broker is unfenced");
            long killedAtNanos = System.nanoTime();
            cluster.node(victim).kill9();
            ClusterHarness.waitUntil(() -> !listedBrokers(admin).contains(victim), DEADLINE, observer + " no longer lists node " + victim);
            long fencedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAtNanos);
            System.out.printf("fast path: node %d fenced %d ms after kill -9 (session timeout 9000 ms)%n", victim, fencedAfterMs);
            assertThat(fencedAfterMs).as("kill -9 to fenced, ms (grace 1000 + commit + propagation)").isLessThanOrEqualTo(FAST_PATH_MAX_MS);
        }
    }

    @Test
    void pausedBrokerKeepsItsSessionAndIsFencedOnlyWhenItEnds() throws Exception {
        startCluster(KAFKA_TIMEOUTS);
        int controller = cluster.awaitActiveController(DEADLINE);
        int victim = otherThan(controller);
        ClusterHarness.Node observer = cluster.node(controller);
        try (Admin admin = ClusterHarness.admin(observer.bootstrap())) {
            ClusterHarness.waitUntil(() -> listedBrokers(admin).size() == 3, DEADLINE, "every broker is unfenced");
            long pausedAtNanos = System.nanoTime();
            cluster.node(victim).pause();
            try {
                // Sockets of a stopped process stay open: no suspicion, so the full session (9 s) applies, as in Kafka.
                long untilNanos = pausedAtNanos + TimeUnit.SECONDS.toNanos(4);
                while (System.nanoTime() < untilNanos) {
                    Set<Integer> listed = listedBrokers(admin);
                    assertThat(listed).as("%d ms after SIGSTOP", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAtNanos)).contains(victim);
                    Thread.sleep(100); // the polling period of a check that must hold throughout, not a wait for a condition
                }
                ClusterHarness.waitUntil(() -> !listedBrokers(admin).contains(victim), Duration.ofMillis(9_000).plus(FENCING_SLACK),
                    observer + " no longer lists paused node " + victim);
                long fencedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAtNanos);
                System.out.printf("paused node %d fenced %d ms after SIGSTOP (session timeout 9000 ms)%n", victim, fencedAfterMs);
                // The session runs from the last heartbeat, up to one interval (2 s) before the pause.
                assertThat(fencedAfterMs).as("a paused broker is fenced by its session timeout").isGreaterThanOrEqualTo(9_000 - 2_000);
            } finally {
                cluster.node(victim).resume();
            }
            ClusterHarness.waitUntil(() -> listedBrokers(admin).contains(victim), DEADLINE, "resumed node " + victim + " is unfenced again");
        }
    }

    @Test
    void liveBrokersUnderLoadAreNeverFencedWhenTheActiveControllerIsKilled() throws Exception {
        startCluster(withReplication());
        createReplicatedTopic();
        int controller = cluster.awaitActiveController(DEADLINE);
        Set<Integer> live = cluster.nodes().stream().map(ClusterHarness.Node::id).filter(id -> id != controller).collect(Collectors.toSet());
        ClusterHarness.Node observer = cluster.node(live.iterator().next());
        try (Load load = new Load(cluster.bootstrapServers()); Admin admin = ClusterHarness.admin(observer.bootstrap())) {
            load.awaitAcksAfter(0, System.nanoTime(), "writes before the failover");
            long killedAtNanos = System.nanoTime();
            cluster.node(controller).kill9();
            // Past the dead node's full session from the new controller's start: it must be fenced, and the live ones never.
            long untilNanos = killedAtNanos + TimeUnit.SECONDS.toNanos(20);
            boolean deadFenced = false;
            long deadFencedAfterMs = -1;
            while (System.nanoTime() < untilNanos) {
                Set<Integer> listed;
                try {
                    listed = listedBrokers(admin);
                } catch (Exception e) {
                    continue; // no answer (the failover): nothing to check this round
                }
                assertThat(listed).as("%d ms after kill -9 of the active controller %d", TimeUnit.NANOSECONDS.toMillis(System.nanoTime()
                    - killedAtNanos), controller).containsAll(live);
                if (!deadFenced && !listed.contains(controller)) {
                    deadFenced = true;
                    deadFencedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAtNanos);
                }
                Thread.sleep(100); // the polling period of a check that must hold throughout, not a wait for a condition
            }
            assertThat(deadFenced).as("the killed controller %d was fenced", controller).isTrue();
            System.out.printf("fast path: node %d (the active controller) fenced %d ms after kill -9 (session timeout 9000 ms)%n", controller,
                deadFencedAfterMs);
            // A new controller was never connected to the dead broker: its refused listener (BrokerReachabilityProbe) fences it after
            // the election, a probe interval and the grace, well before the 9 s session the new controller starts it on would end.
            assertThat(deadFencedAfterMs).as("kill -9 of the active controller's node to its broker fenced, ms")
                .isLessThan(FAST_PATH_CONTROLLER_MAX_MS);
            for (int partition = 0; partition < REPLICATED_PARTITIONS; partition++) {
                load.awaitAcksAfter(partition, killedAtNanos, "writes to partition " + partition + " after the failover");
            }
            load.assertNoFailure();
        }
        for (int id : live) {
            List<String> fencings = java.nio.file.Files.readAllLines(cluster.node(id).logFile()).stream()
                .filter(line -> line.contains("Fencing brokers")).toList();
            for (String line : fencings) {
                for (int other : live) {
                    assertThat(line).as("node %d's log fences a live broker", id).doesNotContainPattern("Fencing brokers \\[([0-9, ]*\\b)?" + other + "\\b");
                }
            }
        }
    }

    @Test
    void nextAcknowledgedWriteWithinThreeSecondsOfAKilledLeader() throws Exception {
        startCluster(withReplication());
        createReplicatedTopic();
        int controller = cluster.awaitActiveController(DEADLINE);
        int partition = -1;
        int victim = -1;
        try (Admin admin = cluster.admin()) {
            ClusterHarness.waitUntil(() -> admin.describeTopics(List.of(REPLICATED)).allTopicNames().get(10, TimeUnit.SECONDS).get(REPLICATED)
                .partitions().stream().allMatch(info -> info.isr().size() == 3), DEADLINE, "every partition has 3 in-sync replicas");
            for (TopicPartitionInfo info : admin.describeTopics(List.of(REPLICATED)).allTopicNames().get(10, TimeUnit.SECONDS).get(REPLICATED)
                .partitions()) {
                if (info.leader() != null && info.leader().id() != controller) {
                    partition = info.partition();
                    victim = info.leader().id();
                    break;
                }
            }
        }
        assertThat(victim).as("a partition led by a node other than the active controller %d", controller).isPositive();
        try (Load load = new Load(cluster.bootstrapServers())) {
            load.awaitAcksAfter(partition, System.nanoTime(), "writes before the kill");
            long killedAtNanos = System.nanoTime();
            cluster.node(victim).kill9();
            long ackAfterMs = load.awaitAcksAfter(partition, killedAtNanos, "an ack of a write to partition " + partition + " sent after the kill");
            System.out.printf("fast path: kill -9 of leader %d of partition %d: next acknowledged write after %d ms (session timeout 9000 ms)%n",
                victim, partition, ackAfterMs);
            assertThat(ackAfterMs).as("kill -9 to the next ack of a write sent after it, ms").isLessThanOrEqualTo(FAST_PATH_MAX_MS);
            load.assertNoFailure();
        }
    }

    private static final String REPLICATED = "replicated";
    private static final int REPLICATED_PARTITIONS = 3;

    private static Map<String, String> withReplication() {
        Map<String, String> overrides = new java.util.HashMap<>(KAFKA_TIMEOUTS);
        overrides.put("default.replication.factor", "3");
        overrides.put("min.insync.replicas", "2");
        overrides.put("replica.lag.time.max.ms", "10000");
        return overrides;
    }

    private void createReplicatedTopic() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(REPLICATED, REPLICATED_PARTITIONS, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
                .all().get(30, TimeUnit.SECONDS);
        }
    }

    private int otherThan(int controller) {
        return cluster.nodes().stream().map(ClusterHarness.Node::id).filter(id -> id != controller).findFirst().orElseThrow();
    }

    /** The brokers the cluster lists (the unfenced ones). */
    private static Set<Integer> listedBrokers(Admin admin) throws Exception {
        return admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().map(Node::id).collect(Collectors.toSet());
    }

    /**
     * An idempotent acks=all producer writing to every partition of {@link #REPLICATED} all the
     * time (at most 500 writes in flight), remembering when each acknowledged write was sent.
     */
    private static final class Load implements AutoCloseable {
        private final KafkaProducer<String, String> producer;
        private final java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(500);
        /** Per partition: when the latest acknowledged write was sent (System.nanoTime), 0 before any. */
        private final java.util.concurrent.atomic.AtomicLongArray lastAckedSentNanos = new java.util.concurrent.atomic.AtomicLongArray(REPLICATED_PARTITIONS);
        private final java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        private final java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        private final Thread thread;

        Load(String bootstrap) {
            Properties properties = ThreeNodeClusterTest.producerProperties(bootstrap);
            properties.put(ProducerConfig.ACKS_CONFIG, "all");
            properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            properties.put(ProducerConfig.LINGER_MS_CONFIG, "2");
            properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
            properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
            producer = new KafkaProducer<>(properties);
            thread = new Thread(this::run, "fast-path-load");
            thread.start();
        }

        private void run() {
            long next = 0;
            try {
                while (running.get()) {
                    for (int partition = 0; partition < REPLICATED_PARTITIONS; partition++) {
                        if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                            continue;
                        }
                        int p = partition;
                        long sentNanos = System.nanoTime();
                        producer.send(new ProducerRecord<>(REPLICATED, partition, null, "v" + next++), (metadata, exception) -> {
                            inFlight.release();
                            if (exception == null) {
                                lastAckedSentNanos.accumulateAndGet(p, sentNanos, Math::max);
                            }
                        });
                    }
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }

        /** Waits for the ack of a write to {@code partition} sent after {@code sinceNanos}; returns the ms from then to now. */
        long awaitAcksAfter(int partition, long sinceNanos, String what) throws InterruptedException {
            long[] ackedAtNanos = {0};
            while (true) {
                if (lastAckedSentNanos.get(partition) > sinceNanos) {
                    ackedAtNanos[0] = System.nanoTime();
                    break;
                }
                if (System.nanoTime() - sinceNanos > DEADLINE.toNanos()) {
                    throw new AssertionError("timed out after " + DEADLINE + " waiting for " + what);
                }
                Thread.sleep(5); // polling period, fine enough for the measured figure
            }
            return TimeUnit.NANOSECONDS.toMillis(ackedAtNanos[0] - sinceNanos);
        }

        void assertNoFailure() {
            assertThat(failure.get()).as("the load's producer thread failed").isNull();
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(30));
            producer.close(Duration.ofSeconds(10));
        }
    }

    /** Partition → leader id, once every partition of the topic has a leader. */
    private static Map<Integer, Integer> awaitLeaders(String bootstrap) throws Exception {
        Map<Integer, Integer> leaders = new TreeMap<>();
        try (Admin admin = ClusterHarness.admin(bootstrap)) {
            ClusterHarness.waitUntil(() -> {
                leaders.clear();
                for (TopicPartitionInfo partition : admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC)
                    .partitions()) {
                    if (partition.leader() != null && !partition.leader().isEmpty()) {
                        leaders.put(partition.partition(), partition.leader().id());
                    }
                }
                return leaders.size() == PARTITIONS;
            }, DEADLINE, "every partition of " + TOPIC + " has a leader");
        }
        return leaders;
    }
}
