package io.strata.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.strata.it.KafkaTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.LogDirsCommand;
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
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Moves between log dirs through Kafka's own tools against 2 combined Strata nodes (real
 * processes), each with two data directories: {@code kafka-reassign-partitions.sh --execute}
 * with a {@code log_dirs} entry adds a replica on node 2 placed in its second directory (the
 * first AlterReplicaLogDirs answers REPLICA_NOT_AVAILABLE and records the preference; the tool
 * retries) and moves node 1's replica to its other directory (a future log copied and swapped
 * in), with {@code --replica-alter-log-dirs-throttle} setting the brokers' live throttle;
 * {@code --verify} and {@code kafka-log-dirs.sh --describe} report the replicas where the plan put
 * them (and --verify clears the throttle), the directories really moved on disk, and every record
 * is still there once.
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class LogDirMovesClusterTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final String TOPIC = "dirmoves";
    private static final String PARTITION_DIR = TOPIC + "-0";
    private static final int RECORDS = 2_000;
    private static final String THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second";

    @TempDir
    Path dir;

    private ClusterHarness cluster;

    @BeforeEach
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 2, Map.of("auto.leader.rebalance.enable", "false"));
        for (int id : new int[] {1, 2}) {
            cluster.nodeConfig(id, Map.of("log.dirs", firstDir(id) + "," + secondDir(id)));
        }
        cluster.start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private Path firstDir(int id) {
        return cluster.node(id).dataDir().toAbsolutePath();
    }

    private Path secondDir(int id) {
        return cluster.node(id).dataDir().resolveSibling("data2").toAbsolutePath();
    }

    private static boolean holds(Path dataDir, String name) {
        return Files.isDirectory(dataDir.resolve(name));
    }

    /** Every entry of {@code dataDir} belonging to the partition: current, future or awaiting deletion. */
    private static List<String> partitionEntries(Path dataDir) throws java.io.IOException {
        if (!Files.isDirectory(dataDir)) {
            return List.of();
        }
        try (var entries = Files.list(dataDir)) {
            return entries.map(path -> path.getFileName().toString()).filter(name -> name.startsWith(PARTITION_DIR)).toList();
        }
    }

    /** {@code kafka-log-dirs.sh --describe}: broker → log dir → (partition → isFuture) for the topic. */
    private Map<Integer, Map<String, Map<String, Boolean>>> describeLogDirs() throws Exception {
        KafkaTool.Result result = KafkaTool.run(LogDirsCommand::main, "--bootstrap-server", cluster.liveBootstrapServers(), "--describe",
            "--broker-list", "1,2", "--topic-list", TOPIC);
        assertThat(result.exitCode()).as("%s", result).isZero();
        String json = result.lines().stream().filter(line -> line.startsWith("{")).findFirst().orElseThrow(
            () -> new AssertionError("no JSON in " + result));
        Map<Integer, Map<String, Map<String, Boolean>>> brokers = new HashMap<>();
        for (JsonNode broker : new ObjectMapper().readTree(json).get("brokers")) {
            Map<String, Map<String, Boolean>> dirs = new HashMap<>();
            for (JsonNode logDir : broker.get("logDirs")) {
                assertThat(logDir.get("error").isNull()).as("%s", logDir).isTrue();
                Map<String, Boolean> partitions = new HashMap<>();
                logDir.get("partitions").forEach(partition -> partitions.put(partition.get("partition").asText(),
                    partition.get("isFuture").asBoolean()));
                dirs.put(logDir.get("logDir").asText(), partitions);
            }
            brokers.put(broker.get("broker").asInt(), dirs);
        }
        return brokers;
    }

    /** Broker {@code id}'s dynamic per-broker value of {@code name}, or null when it has none. */
    private static String brokerConfig(Admin admin, int id, String name) throws Exception {
        org.apache.kafka.common.config.ConfigResource broker = new org.apache.kafka.common.config.ConfigResource(
            org.apache.kafka.common.config.ConfigResource.Type.BROKER, Integer.toString(id));
        org.apache.kafka.clients.admin.ConfigEntry entry = admin.describeConfigs(List.of(broker)).all().get(10, TimeUnit.SECONDS)
            .get(broker).get(name);
        return entry == null || entry.source() != org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG
            ? null : entry.value();
    }

    private KafkaTool.Result reassign(String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", cluster.liveBootstrapServers()));
        all.addAll(List.of(args));
        return KafkaTool.run(ReassignPartitionsCommand::main, all.toArray(String[]::new));
    }

    @Test
    void reassignWithLogDirsPlacesAndMovesReplicasOnDisk() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(1))).configs(Map.of("file.delete.delay.ms", "0"))))
                .all().get(30, TimeUnit.SECONDS);
            produce();
            Map<String, Map<String, Boolean>> before = describeLogDirs().get(1);
            Path source = holds(firstDir(1), PARTITION_DIR) ? firstDir(1) : secondDir(1);
            Path target = source.equals(firstDir(1)) ? secondDir(1) : firstDir(1);
            assertThat(before.get(source.toString())).containsEntry(PARTITION_DIR, false);
            assertThat(before.get(target.toString())).doesNotContainKey(PARTITION_DIR);

            Path plan = dir.resolve("dirs.json");
            Files.writeString(plan, "{\"version\":1,\"partitions\":[{\"topic\":\"" + TOPIC + "\",\"partition\":0,\"replicas\":[1,2],"
                + "\"log_dirs\":[\"" + target + "\",\"" + secondDir(2) + "\"]}]}");
            // The tool sets replica.alter.log.dirs.io.max.bytes.per.second on the brokers moving data; --verify clears it once done.
            KafkaTool.Result executed = reassign("--execute", "--replica-alter-log-dirs-throttle", "100000000", "--reassignment-json-file",
                plan.toString());
            assertThat(executed.exitCode()).as("%s", executed).isZero();
            assertThat(executed.stdout()).as("%s", executed).contains("Successfully started partition reassignment")
                .contains("Successfully started moving log directory to " + target + " for replica " + PARTITION_DIR + " with broker 1")
                .contains("Successfully started moving log directory to " + secondDir(2) + " for replica " + PARTITION_DIR + " with broker 2");

            assertThat(brokerConfig(admin, 1, THROTTLE)).isEqualTo("100000000");
            ClusterHarness.waitUntil(() -> {
                KafkaTool.Result verified = reassign("--verify", "--reassignment-json-file", plan.toString());
                return verified.exitCode() == 0 && !verified.stdout().contains("still in progress");
            }, DEADLINE, "--verify reports the reassignment and the log dir moves complete");
            ClusterHarness.waitUntil(() -> brokerConfig(admin, 1, THROTTLE) == null, DEADLINE, "--verify cleared the log dirs throttle");
            ClusterHarness.waitUntil(() -> {
                Map<Integer, Map<String, Map<String, Boolean>>> after = describeLogDirs();
                return Map.of(PARTITION_DIR, false).equals(after.get(1).get(target.toString()))
                    && !after.get(1).get(source.toString()).containsKey(PARTITION_DIR)
                    && Map.of(PARTITION_DIR, false).equals(after.get(2).get(secondDir(2).toString()))
                    && !after.get(2).get(firstDir(2).toString()).containsKey(PARTITION_DIR);
            }, DEADLINE, "kafka-log-dirs shows the replicas in the planned directories");

            assertThat(partitionEntries(target)).containsExactly(PARTITION_DIR);
            ClusterHarness.waitUntil(() -> partitionEntries(source).isEmpty(), DEADLINE, "the old directory of node 1 deleted");
            assertThat(partitionEntries(secondDir(2))).containsExactly(PARTITION_DIR);
            assertThat(partitionEntries(firstDir(2))).isEmpty();
            assertThat(drain().values()).hasSize(RECORDS).allMatch(count -> count == 1);
        }
    }

    private void produce() throws Exception {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            List<Future<?>> sends = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                sends.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, "v" + i)));
            }
            for (Future<?> send : sends) {
                send.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Every record of the partition, counted by value. */
    private Map<String, Integer> drain() throws Exception {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        Map<String, Integer> counts = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            TopicPartition partition = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), Duration.ofSeconds(10)).get(partition);
            ClusterHarness.waitUntil(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    counts.merge(record.value(), 1, Integer::sum);
                }
                return consumer.position(partition) >= end;
            }, DEADLINE, "the drain reaches the end offset");
        }
        return counts;
    }
}
