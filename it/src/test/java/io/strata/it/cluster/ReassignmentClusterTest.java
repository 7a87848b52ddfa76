package io.strata.it.cluster;

import io.strata.it.KafkaTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.reassign.ReassignPartitionsCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's {@code kafka-reassign-partitions.sh} (ReassignPartitionsCommand) against 4 combined
 * Strata nodes (real processes), KIP-455: --generate proposes a plan; --execute of a plan that
 * moves partition 0 away from its leader ([1,2,3] → [2,3,4]) and shrinks partition 1 to RF 2
 * ([1,2,3] → [4,1]) completes while an idempotent acks=all producer writes, --verify reports it
 * done, and a drain finds every acknowledged record exactly once with replicas and ISR the
 * targets, the added replica created its log and the removed ones deleted theirs; --cancel of a reassignment onto a stopped node reverts it to the original replicas.
 * The move runs with --throttle (the brokers' replication rates and the topic's throttled replica
 * lists are set, and the --verify that sees it complete clears them); the cancel keeps
 * --preserve-throttles (it set none).
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class ReassignmentClusterTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final String TOPIC = "moves";
    private static final String CANCELLED = "cancelled";

    @TempDir
    Path dir;

    private ClusterHarness cluster;

    @BeforeEach
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 4, Map.of("auto.leader.rebalance.enable", "false"));
        cluster.start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static TopicDescription describe(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    /** The topic {@link #TOPIC}'s value of {@code name} ("" when unset). */
    private static String topicConfig(Admin admin, String name) throws Exception {
        org.apache.kafka.common.config.ConfigResource topic = new org.apache.kafka.common.config.ConfigResource(
            org.apache.kafka.common.config.ConfigResource.Type.TOPIC, TOPIC);
        org.apache.kafka.clients.admin.ConfigEntry entry = admin.describeConfigs(List.of(topic)).all().get(10, TimeUnit.SECONDS).get(topic).get(name);
        return entry == null || entry.value() == null ? "" : entry.value();
    }

    /** Broker {@code id}'s dynamic per-broker value of {@code name}, or null when it has none. */
    private static String brokerConfig(Admin admin, int id, String name) throws Exception {
        org.apache.kafka.common.config.ConfigResource broker = new org.apache.kafka.common.config.ConfigResource(
            org.apache.kafka.common.config.ConfigResource.Type.BROKER, Integer.toString(id));
        org.apache.kafka.clients.admin.ConfigEntry entry = admin.describeConfigs(List.of(broker)).all().get(10, TimeUnit.SECONDS).get(broker).get(name);
        return entry == null || entry.source() != org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG ? null : entry.value();
    }

    private KafkaTool.Result reassign(String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", cluster.liveBootstrapServers()));
        all.addAll(List.of(args));
        return KafkaTool.run(ReassignPartitionsCommand::main, all.toArray(String[]::new));
    }

    private Path plan(String name, String json) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, json);
        return file;
    }

    @Test
    void executeVerifyAndCancelThroughKafkasToolWhileAnIdempotentProducerWrites() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, new java.util.TreeMap<>(Map.of(0, List.of(1, 2, 3), 1, List.of(1, 2, 3)))),
                new NewTopic(CANCELLED, Map.of(0, List.of(1, 2, 3))))).all().get(30, TimeUnit.SECONDS);
            ClusterHarness.waitUntil(() -> describe(admin, TOPIC).partitions().stream().allMatch(p -> p.isr().size() == 3)
                && describe(admin, CANCELLED).partitions().get(0).isr().size() == 3, DEADLINE, "full ISRs");

            KafkaTool.Result generated = reassign("--generate", "--broker-list", "2,3,4", "--topics-to-move-json-file",
                plan("move.json", "{\"version\":1,\"topics\":[{\"topic\":\"" + TOPIC + "\"}]}").toString());
            assertThat(generated.exitCode()).as("%s", generated).isZero();
            assertThat(generated.stdout()).as("%s", generated).contains("Current partition replica assignment")
                .contains("Proposed partition reassignment configuration");

            cancelAReassignmentOntoAStoppedNode(admin);

            Map<String, Integer> acked = new ConcurrentHashMap<>();
            AtomicBoolean producing = new AtomicBoolean(true);
            AtomicReference<Exception> sendFailure = new AtomicReference<>();
            Thread producer = new Thread(() -> produce(acked, producing, sendFailure), "reassignment-producer");
            producer.start();
            try {
                ClusterHarness.waitUntil(() -> acked.size() >= 200, DEADLINE, "the producer is writing");
                Path moves = plan("moves.json", "{\"version\":1,\"partitions\":["
                    + "{\"topic\":\"" + TOPIC + "\",\"partition\":0,\"replicas\":[2,3,4]},"
                    + "{\"topic\":\"" + TOPIC + "\",\"partition\":1,\"replicas\":[4,1]}]}");
                // --throttle sets the brokers' replication rates and the topic's throttled replica lists (10 MB/s: the move
                // is throttled, not slowed down); the --verify that sees the reassignment complete clears them.
                KafkaTool.Result executed = reassign("--execute", "--throttle", "10000000", "--reassignment-json-file", moves.toString());
                assertThat(executed.exitCode()).as("%s", executed).isZero();
                assertThat(executed.stdout()).as("%s", executed).contains("Successfully started partition reassignment");
                ClusterHarness.waitUntil(() -> !topicConfig(admin, "leader.replication.throttled.replicas").isEmpty()
                    && !topicConfig(admin, "follower.replication.throttled.replicas").isEmpty(), DEADLINE, "the topic's throttled replica lists are set");
                assertThat(brokerConfig(admin, 4, "follower.replication.throttled.rate")).isEqualTo("10000000");

                AtomicReference<KafkaTool.Result> lastVerify = new AtomicReference<>();
                ClusterHarness.waitUntil(() -> {
                    KafkaTool.Result verified = reassign("--verify", "--reassignment-json-file", moves.toString());
                    lastVerify.set(verified);
                    return verified.exitCode() == 0 && !verified.stdout().contains("still in progress");
                }, DEADLINE, "--verify reports the reassignment complete");
                assertThat(lastVerify.get().stdout()).contains("Reassignment of partition " + TOPIC + "-0 is completed")
                    .contains("Reassignment of partition " + TOPIC + "-1 is completed");
                ClusterHarness.waitUntil(() -> topicConfig(admin, "leader.replication.throttled.replicas").isEmpty()
                    && topicConfig(admin, "follower.replication.throttled.replicas").isEmpty()
                    && brokerConfig(admin, 4, "follower.replication.throttled.rate") == null, DEADLINE, "--verify cleared the throttles");
                int before = acked.size();
                ClusterHarness.waitUntil(() -> acked.size() >= before + 200, DEADLINE, "the producer writes after the reassignment");
            } finally {
                producing.set(false);
                producer.join(TimeUnit.SECONDS.toMillis(60));
            }
            assertThat(sendFailure.get()).as("no acks=all send failed").isNull();

            ClusterHarness.waitUntil(() -> {
                List<TopicPartitionInfo> partitions = describe(admin, TOPIC).partitions();
                return ids(partitions.get(0).replicas()).equals(List.of(2, 3, 4)) && Set.copyOf(ids(partitions.get(0).isr())).equals(Set.of(2, 3, 4))
                    && ids(partitions.get(1).replicas()).equals(List.of(4, 1)) && Set.copyOf(ids(partitions.get(1).isr())).equals(Set.of(4, 1));
            }, DEADLINE, "replicas and ISR are the targets");
            assertThat(admin.listPartitionReassignments().reassignments().get(10, TimeUnit.SECONDS)).isEmpty();
            ClusterHarness.waitUntil(() -> !hosts(1, TOPIC + "-0") && !hosts(2, TOPIC + "-1") && !hosts(3, TOPIC + "-1"), DEADLINE,
                "the removed replicas deleted their logs");
            assertThat(hosts(4, TOPIC + "-0")).as("the added replica created its log").isTrue();

            Map<String, Integer> drained = drain();
            for (String value : acked.keySet()) {
                assertThat(drained.get(value)).as("acknowledged record %s read exactly once", value).isEqualTo(1);
            }
            assertThat(drained.values()).as("no record is duplicated").allMatch(count -> count == 1);
        }
    }

    /** Node 4 stopped: a reassignment adding it stays in progress, and --cancel puts the original replicas back. */
    private void cancelAReassignmentOntoAStoppedNode(Admin admin) throws Exception {
        cluster.node(4).kill9();
        Path onto4 = plan("cancel.json", "{\"version\":1,\"partitions\":[{\"topic\":\"" + CANCELLED + "\",\"partition\":0,\"replicas\":[1,2,4]}]}");
        KafkaTool.Result executed = reassign("--execute", "--reassignment-json-file", onto4.toString());
        assertThat(executed.exitCode()).as("%s", executed).isZero();
        ClusterHarness.waitUntil(() -> ids(describe(admin, CANCELLED).partitions().get(0).replicas()).equals(List.of(1, 2, 4, 3)), DEADLINE,
            "the reassignment runs with replicas [1,2,4,3]");
        assertThat(admin.listPartitionReassignments().reassignments().get(10, TimeUnit.SECONDS))
            .containsKey(new TopicPartition(CANCELLED, 0));
        KafkaTool.Result verified = reassign("--verify", "--preserve-throttles", "--reassignment-json-file", onto4.toString());
        assertThat(verified.stdout()).as("%s", verified).contains("still in progress");

        KafkaTool.Result cancelled = reassign("--cancel", "--preserve-throttles", "--reassignment-json-file", onto4.toString());
        assertThat(cancelled.exitCode()).as("%s", cancelled).isZero();
        ClusterHarness.waitUntil(() -> ids(describe(admin, CANCELLED).partitions().get(0).replicas()).equals(List.of(1, 2, 3)), DEADLINE,
            "cancel reverts to [1,2,3]");
        assertThat(admin.listPartitionReassignments().reassignments().get(10, TimeUnit.SECONDS)).isEmpty();
        cluster.node(4).start();
        ClusterHarness.waitUntil(() -> cluster.node(4).isAlive() && describe(admin, CANCELLED).partitions().get(0).isr().size() == 3, DEADLINE,
            "node 4 is back");
    }

    /** Whether node {@code id} has a log directory named {@code partitionDir} (a "topic-partition" directory). */
    private boolean hosts(int id, String partitionDir) throws java.io.IOException {
        try (java.util.stream.Stream<Path> paths = Files.walk(cluster.node(id).dataDir(), 3)) {
            return paths.anyMatch(path -> Files.isDirectory(path) && path.getFileName().toString().equals(partitionDir));
        }
    }

    private void produce(Map<String, Integer> acked, AtomicBoolean producing, AtomicReference<Exception> sendFailure) {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (long sequence = 0; producing.get(); sequence++) {
                String value = "v" + sequence;
                producer.send(new ProducerRecord<>(TOPIC, (int) (sequence % 2), null, value), (metadata, error) -> {
                    if (error == null) {
                        acked.put(value, 1);
                    } else {
                        sendFailure.compareAndSet(null, error);
                    }
                });
                if (sequence % 100 == 99) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }

    /** Every record of the topic, counted by value, read from the beginning to the end offsets. */
    private Map<String, Integer> drain() throws Exception {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, Integer> counts = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            List<TopicPartition> partitions = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(10));
            ClusterHarness.waitUntil(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    counts.merge(record.value(), 1, Integer::sum);
                }
                return partitions.stream().allMatch(p -> consumer.position(p) >= end.get(p));
            }, DEADLINE, "the drain reaches the end offsets");
        }
        return counts;
    }
}
