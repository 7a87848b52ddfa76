package io.strata.chaos.cluster;

import io.strata.chaos.net.Nft;
import io.strata.chaos.net.RootNetwork;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three real nodes in namespaces: the leader of an RF 3 partition is cut off from the other two
 * nodes (and from the test's clients), a new leader is elected in the majority and takes acks=all
 * writes; after the heal the old leader is back in the ISR. Root only.
 */
class ChaosClusterSmokeTest {
    private static final int RUN = 200;
    private static final String TOPIC = "smoke";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(45);
    private static final Duration REJOIN_TIMEOUT = Duration.ofSeconds(45);
    private static final long POLL_MS = 250;

    private ChaosCluster cluster;

    @BeforeEach
    void start() throws Exception {
        Assumptions.assumeTrue(RootNetwork.available(), RootNetwork.REASON);
        Path jar;
        try {
            jar = ChaosCluster.defaultJar();
        } catch (IllegalStateException e) {
            Assumptions.abort(e.getMessage());
            return;
        }
        // Under target/, not a temporary directory: the node logs outlive a failed run.
        Path runDir = Path.of("target", "chaos-runs", "smoke");
        deleteRecursively(runDir);
        cluster = new ChaosCluster(RUN, 3, runDir, jar, List.of("-Xms64m", "-Xmx512m"), Map.of(), 1);
        cluster.start();
        cluster.awaitReady(READY_TIMEOUT);
    }

    @AfterEach
    void close() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void partitionedLeaderIsReplacedByTheMajorityAndRejoinsAfterHeal() throws Exception {
        try (Admin admin = Admin.create(adminProperties(cluster.bootstrapServers()))) {
            awaitBrokers(admin, 3, Duration.ofSeconds(30));
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3)
                .configs(Map.of("min.insync.replicas", "2")))).all().get(30, TimeUnit.SECONDS);
            TopicPartitionInfo before = awaitPartition(admin, info -> info.leader() != null && info.isr().size() == 3,
                Duration.ofSeconds(30), "a leader and a full ISR");
            produce(cluster.bootstrapServers(), "before", 10);
            int oldLeader = before.leader().id();
            Set<Integer> majority = new HashSet<>(Set.of(1, 2, 3));
            majority.remove(oldLeader);

            Set<Integer> rest = new HashSet<>(majority);
            rest.add(Nft.ROOT);
            cluster.nft().partition(Set.of(oldLeader), rest);

            // Clients of the majority only: the cut-off node's own metadata is stale (it still names itself
            // leader with the old ISR), and the majority lists it again only once it is unfenced and caught up.
            try (Admin majorityAdmin = Admin.create(adminProperties(bootstrap(majority)))) {
                TopicPartitionInfo after = awaitPartition(majorityAdmin,
                    info -> info.leader() != null && majority.contains(info.leader().id()), FAILOVER_TIMEOUT,
                    "a leader among " + majority);
                assertThat(ids(after.isr())).doesNotContain(oldLeader);
                List<RecordMetadata> written = produce(bootstrap(majority), "during", 10);
                assertThat(written).hasSize(10).allSatisfy(metadata -> assertThat(metadata.offset()).isGreaterThanOrEqualTo(10));

                cluster.nft().heal();
                TopicPartitionInfo healed = awaitPartition(majorityAdmin,
                    info -> info.leader() != null && ids(info.isr()).containsAll(Set.of(1, 2, 3)),
                    REJOIN_TIMEOUT, "node " + oldLeader + " back in the ISR");
                assertThat(healed.replicas()).hasSize(3);
            }
        }
    }

    private TopicPartitionInfo awaitPartition(Admin admin, java.util.function.Predicate<TopicPartitionInfo> condition,
                                              Duration timeout, String what) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        Object last = null;
        while (System.nanoTime() - deadlineNanos < 0) {
            try {
                TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(5, TimeUnit.SECONDS).get(TOPIC);
                TopicPartitionInfo info = description.partitions().get(0);
                last = info;
                if (condition.test(info)) {
                    return info;
                }
            } catch (Exception e) {
                last = e; // a node may be unreachable mid-fault; ask again until the deadline
            }
            Thread.sleep(POLL_MS);
        }
        throw new AssertionError("no " + what + " within " + timeout + "; last: " + last + "\n" + logTails());
    }

    private void awaitBrokers(Admin admin, int count, Duration timeout) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        Object last = null;
        while (System.nanoTime() - deadlineNanos < 0) {
            try {
                last = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                if (((java.util.Collection<?>) last).size() == count) {
                    return;
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(POLL_MS);
        }
        throw new AssertionError("not " + count + " brokers within " + timeout + "; last: " + last + "\n" + logTails());
    }

    private List<RecordMetadata> produce(String bootstrap, String prefix, int count) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        properties.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        properties.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            List<java.util.concurrent.Future<RecordMetadata>> futures = new java.util.ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, prefix + "-" + i)));
            }
            List<RecordMetadata> written = new java.util.ArrayList<>();
            for (java.util.concurrent.Future<RecordMetadata> future : futures) {
                written.add(future.get(40, TimeUnit.SECONDS));
            }
            return written;
        }
    }

    private static Properties adminProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "4000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
        // A SYN to the cut-off node is dropped: give up on it quickly and ask another node.
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
        return properties;
    }

    private String bootstrap(Set<Integer> nodes) {
        StringJoiner joiner = new StringJoiner(",");
        for (int node : nodes) {
            joiner.add(cluster.address(node) + ":" + ChaosCluster.BROKER_PORT);
        }
        return joiner.toString();
    }

    private static void deleteRecursively(Path dir) throws java.io.IOException {
        if (!java.nio.file.Files.exists(dir)) {
            return;
        }
        try (java.util.stream.Stream<Path> paths = java.nio.file.Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(path);
            }
        }
    }

    private static Set<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).collect(Collectors.toSet());
    }

    private String logTails() {
        StringBuilder text = new StringBuilder();
        for (int node = 1; node <= cluster.nodes(); node++) {
            text.append("--- node ").append(node).append(" (").append(cluster.nodeDir(node)).append(")\n")
                .append(cluster.logTail(node)).append('\n');
        }
        return text.toString();
    }
}
