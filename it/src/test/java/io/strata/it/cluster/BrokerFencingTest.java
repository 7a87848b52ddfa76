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
import org.junit.jupiter.api.BeforeEach;
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

    @BeforeEach
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 3); // assigned first: a failed start still closes it and prints its logs
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
