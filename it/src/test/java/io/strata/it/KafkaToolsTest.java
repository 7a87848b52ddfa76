package io.strata.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.ClusterTool;
import org.apache.kafka.tools.ConfigCommand;
import org.apache.kafka.tools.ConsoleProducer;
import org.apache.kafka.tools.DeleteRecordsCommand;
import org.apache.kafka.tools.GetOffsetShell;
import org.apache.kafka.tools.LogDirsCommand;
import org.apache.kafka.tools.TopicCommand;
import org.apache.kafka.tools.TransactionsCommand;
import org.apache.kafka.tools.consumer.ConsoleConsumer;
import org.apache.kafka.tools.consumer.group.ConsumerGroupCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Apache Kafka's own command-line tools (kafka-tools 4.4, run in-process through their
 * {@code main} by {@link KafkaTool}) against a real Strata: each tool's output is parsed into
 * rows and compared with what Apache Kafka prints for the same state. One server for the class;
 * every test works on its own topics and groups.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KafkaToolsTest {
    @TempDir
    static Path dataDir;

    private StrataTestServer server;
    private Admin admin;

    @BeforeAll
    void start() throws Exception {
        server = new StrataTestServer(dataDir.resolve("data"), Map.of("group.initial.rebalance.delay.ms", "0",
            "offsets.topic.num.partitions", "2", "transaction.state.log.num.partitions", "2"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap()));
    }

    @AfterAll
    void stop() {
        if (admin != null) {
            admin.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private String[] withBootstrap(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = server.bootstrap();
        System.arraycopy(args, 0, all, 2, args.length);
        return all;
    }

    private KafkaTool.Result ok(KafkaTool.Main main, String... args) {
        KafkaTool.Result result = KafkaTool.run(main, withBootstrap(args));
        assertThat(result.exitCode()).as("%s", result).isZero();
        return result;
    }

    private void createTopic(String name, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
    }

    private void produce(String topic, int partition, int count) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, partition, "k" + i, "v" + i));
            }
            producer.flush();
        }
    }

    /** A line of {@code Key: value} fields separated by tabs (kafka-topics --describe) as a map. */
    private static Map<String, String> tabFields(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String field : line.strip().split("\t")) {
            int colon = field.indexOf(':');
            fields.put(field.substring(0, colon).strip(), field.substring(colon + 1).strip());
        }
        return fields;
    }

    /** A table whose first line is a header and whose columns are separated by runs of whitespace, as maps by header. */
    private static List<Map<String, String>> table(List<String> lines) {
        String[] header = lines.get(0).strip().split("\\s+");
        List<Map<String, String>> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.strip().split("\\s+");
            assertThat(cells).as("row %s under %s", line, List.of(header)).hasSizeLessThanOrEqualTo(header.length);
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < header.length; i++) {
                row.put(header[i], i < cells.length ? cells[i] : "");
            }
            rows.add(row);
        }
        return rows;
    }

    @Test
    void topicsCreateDescribeAlterListDelete() throws Exception {
        assertThat(ok(TopicCommand::main, "--create", "--topic", "tools-topics", "--partitions", "3", "--config", "retention.ms=1000000").lines())
            .containsExactly("Created topic tools-topics.");
        assertThat(ok(TopicCommand::main, "--list").lines()).contains("tools-topics");
        assertThat(ok(TopicCommand::main, "--list", "--exclude-internal").lines()).doesNotContain("__consumer_offsets", "__transaction_state");

        List<String> described = ok(TopicCommand::main, "--describe", "--topic", "tools-topics").lines();
        String topicId = admin.describeTopics(List.of("tools-topics")).allTopicNames().get().get("tools-topics").topicId().toString();
        assertThat(tabFields(described.get(0))).containsExactlyEntriesOf(new LinkedHashMap<>(Map.of()) {{
            put("Topic", "tools-topics");
            put("TopicId", topicId);
            put("PartitionCount", "3");
            put("ReplicationFactor", "1");
            // min.insync.replicas: the cluster default a new cluster gets with ELR (KIP-966), listed as Kafka 4.4 lists it.
            put("Configs", "min.insync.replicas=1,retention.ms=1000000");
        }});
        assertThat(described.subList(1, described.size())).hasSize(3);
        for (int partition = 0; partition < 3; partition++) {
            Map<String, String> row = tabFields(described.get(1 + partition));
            assertThat(row).containsEntry("Topic", "tools-topics").containsEntry("Partition", Integer.toString(partition))
                .containsEntry("Leader", "1").containsEntry("Replicas", "1").containsEntry("Isr", "1")
                .containsEntry("Elr", "").containsEntry("LastKnownElr", "");
        }

        assertThat(ok(TopicCommand::main, "--alter", "--topic", "tools-topics", "--partitions", "5").lines()).isEmpty();
        List<String> altered = ok(TopicCommand::main, "--describe", "--topic", "tools-topics").lines();
        assertThat(tabFields(altered.get(0))).containsEntry("PartitionCount", "5");
        assertThat(altered.subList(1, altered.size()).stream().map(line -> tabFields(line).get("Partition")))
            .containsExactly("0", "1", "2", "3", "4");

        // Fewer partitions than now: Kafka's INVALID_PARTITIONS, which the tool reports and exits 1.
        KafkaTool.Result shrink = KafkaTool.run(TopicCommand::main, withBootstrap("--alter", "--topic", "tools-topics", "--partitions", "2"));
        assertThat(shrink.exitCode()).isEqualTo(1);
        assertThat(shrink.stdout() + shrink.stderr()).contains("InvalidPartitionsException");

        assertThat(ok(TopicCommand::main, "--delete", "--topic", "tools-topics").lines()).isEmpty();
        assertThat(ok(TopicCommand::main, "--list").lines()).doesNotContain("tools-topics");
    }

    @Test
    void configsForATopic() throws Exception {
        createTopic("tools-configs", 1);
        assertThat(ok(ConfigCommand::main, "--alter", "--entity-type", "topics", "--entity-name", "tools-configs",
            "--add-config", "retention.ms=2000000,max.message.bytes=65536").lines()).containsExactly("Completed updating config for topic tools-configs.");
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "topics", "--entity-name", "tools-configs").lines()).containsExactly(
            "Dynamic configs for topic tools-configs are:",
            "  max.message.bytes=65536 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:max.message.bytes=65536, DEFAULT_CONFIG:message.max.bytes=1048588}",
            "  retention.ms=2000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=2000000}");

        ok(ConfigCommand::main, "--alter", "--entity-type", "topics", "--entity-name", "tools-configs", "--delete-config", "retention.ms");
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "topics", "--entity-name", "tools-configs").lines()).containsExactly(
            "Dynamic configs for topic tools-configs are:",
            "  max.message.bytes=65536 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:max.message.bytes=65536, DEFAULT_CONFIG:message.max.bytes=1048588}");

        // An unknown topic key: Kafka's INVALID_CONFIG, reported by the tool with exit 1 and nothing changed.
        KafkaTool.Result unknown = KafkaTool.run(ConfigCommand::main, withBootstrap("--alter", "--entity-type", "topics", "--entity-name",
            "tools-configs", "--add-config", "no.such.config=1"));
        assertThat(unknown.exitCode()).isEqualTo(1);
        assertThat(unknown.stderr()).contains("InvalidConfigurationException");
    }

    @Test
    void configsForABrokerAndTheClusterDefault() throws Exception {
        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.retention.ms=3000000");
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-name", "1").lines()).containsExactly(
            "Dynamic configs for broker 1 are:",
            "  log.retention.ms=3000000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=3000000, DEFAULT_CONFIG:log.retention.hours=168}");

        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=4000000");
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-default").lines()).containsExactly(
            "Default configs for brokers in the cluster are:",
            "  log.retention.ms=4000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=4000000}",
            "  min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1}");
        // The cluster default lists only cluster-default synonyms (Kafka's ConfigHelper filters the others out); the per-broker value wins over the cluster default, and both are listed, most specific first.
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-name", "1").lines()).containsExactly(
            "Dynamic configs for broker 1 are:",
            "  log.retention.ms=3000000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=3000000, "
                + "DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=4000000, DEFAULT_CONFIG:log.retention.hours=168}");

        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--delete-config", "log.retention.ms");
        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-default", "--delete-config", "log.retention.ms");
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-name", "1").lines())
            .containsExactly("Dynamic configs for broker 1 are:");

        // A static-only key: Kafka refuses it with INVALID_REQUEST naming the key.
        KafkaTool.Result readOnly = KafkaTool.run(ConfigCommand::main, withBootstrap("--alter", "--entity-type", "brokers", "--entity-name", "1",
            "--add-config", "log.dirs=/elsewhere"));
        assertThat(readOnly.exitCode()).isEqualTo(1);
        assertThat(readOnly.stderr()).contains("InvalidRequestException: Cannot update these configs dynamically: Set(log.dirs)");
    }

    @Test
    void replicationThrottlesAreSetAndDescribedAsKafkaReassignPartitionsThrottleSetsThem() throws Exception {
        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config",
            "leader.replication.throttled.rate=10485760,follower.replication.throttled.rate=5242880");
        assertThat(server.server().replicationQuotas().get(0).upperBound()).isEqualTo(10_485_760L);
        assertThat(server.server().replicationQuotas().get(1).upperBound()).isEqualTo(5_242_880L);
        KafkaTool.Result described = ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-name", "1");
        assertThat(described.lines()).first().isEqualTo("Dynamic configs for broker 1 are:");
        String broker = described.stdout();
        assertThat(broker).contains("  leader.replication.throttled.rate=10485760 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
            + "leader.replication.throttled.rate=10485760");
        assertThat(broker).contains("  follower.replication.throttled.rate=5242880 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
            + "follower.replication.throttled.rate=5242880");

        createTopic("tools-throttled", 2);
        ok(ConfigCommand::main, "--alter", "--entity-type", "topics", "--entity-name", "tools-throttled", "--add-config",
            "leader.replication.throttled.replicas=[0:1,1:1],follower.replication.throttled.replicas=*");
        String topic = ok(ConfigCommand::main, "--describe", "--entity-type", "topics", "--entity-name", "tools-throttled").stdout();
        assertThat(topic).contains("leader.replication.throttled.replicas=0:1,1:1 sensitive=false", "follower.replication.throttled.replicas=*");
        KafkaTool.Result invalid = KafkaTool.run(ConfigCommand::main, withBootstrap("--alter", "--entity-type", "topics", "--entity-name",
            "tools-throttled", "--add-config", "leader.replication.throttled.replicas=0"));
        assertThat(invalid.exitCode()).isEqualTo(1);
        assertThat(invalid.stderr()).contains("InvalidConfigurationException",
            "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format");

        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--delete-config",
            "leader.replication.throttled.rate,follower.replication.throttled.rate");
        assertThat(server.server().replicationQuotas().get(0).upperBound()).isEqualTo(Long.MAX_VALUE);
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-name", "1").lines())
            .containsExactly("Dynamic configs for broker 1 are:");
    }

    @Test
    void configsChangeLiveBrokerSettingsPerBrokerAndAsClusterDefault() throws Exception {
        // StrataTestServer starts with num.io.threads=4.
        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "num.io.threads=6");
        assertThat(server.server().requestHandlerPool().threadCount()).isEqualTo(6);
        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config",
            "num.io.threads=5,max.connections.per.ip.overrides=[127.0.0.2:1,127.0.0.3:7]");
        assertThat(server.server().requestHandlerPool().threadCount()).isEqualTo(5);
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-name", "1").lines()).containsExactly(
            "Dynamic configs for broker 1 are:",
            "  max.connections.per.ip.overrides=127.0.0.2:1,127.0.0.3:7 sensitive=false "
                + "synonyms={DYNAMIC_BROKER_CONFIG:max.connections.per.ip.overrides=127.0.0.2:1,127.0.0.3:7, DEFAULT_CONFIG:max.connections.per.ip.overrides=}",
            "  num.io.threads=5 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:num.io.threads=5, DYNAMIC_DEFAULT_BROKER_CONFIG:num.io.threads=6, "
                + "STATIC_BROKER_CONFIG:num.io.threads=4, DEFAULT_CONFIG:num.io.threads=8}");
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-default").lines()).containsExactly(
            "Default configs for brokers in the cluster are:",
            "  min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1}",
            "  num.io.threads=6 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:num.io.threads=6}");

        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--delete-config",
            "num.io.threads,max.connections.per.ip.overrides");
        assertThat(server.server().requestHandlerPool().threadCount()).isEqualTo(6);
        ok(ConfigCommand::main, "--alter", "--entity-type", "brokers", "--entity-default", "--delete-config", "num.io.threads");
        assertThat(server.server().requestHandlerPool().threadCount()).isEqualTo(4);
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-default").lines())
            .containsExactly("Default configs for brokers in the cluster are:", "  min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1}");

        // A key Kafka changes dynamically but whose subsystem Strata lacks: refused with the reason, nothing stored.
        KafkaTool.Result fetchers = KafkaTool.run(ConfigCommand::main, withBootstrap("--alter", "--entity-type", "brokers",
            "--entity-name", "1", "--add-config", "cordoned.log.dirs=/elsewhere"));
        assertThat(fetchers.exitCode()).isEqualTo(1);
        assertThat(fetchers.stderr()).contains("InvalidRequestException: Cannot update these configs dynamically on this broker: "
            + "Set(cordoned.log.dirs) (cordoned.log.dirs: refused until log dir cordoning");
        assertThat(ok(ConfigCommand::main, "--describe", "--entity-type", "brokers", "--entity-name", "1").lines())
            .containsExactly("Dynamic configs for broker 1 are:");
    }

    @Test
    void consoleProducerThenConsoleConsumerWithKeysAndHeaders() throws Exception {
        createTopic("tools-console", 1);
        KafkaTool.Result produced = KafkaTool.runWithInput("h1:v1,h2:v2\tkey-1\tvalue-1\nh3:v3\tkey-2\tvalue-2\n",
            ConsoleProducer::main, withBootstrap("--topic", "tools-console", "--reader-property", "parse.key=true",
                "--reader-property", "parse.headers=true"));
        assertThat(produced.exitCode()).as("%s", produced).isZero();

        KafkaTool.Result consumed = ok(ConsoleConsumer::main, "--topic", "tools-console", "--from-beginning", "--max-messages", "2",
            "--formatter-property", "print.key=true", "--formatter-property", "print.headers=true",
            "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true");
        assertThat(consumed.lines()).containsExactly(
            "Partition:0\tOffset:0\th1:v1,h2:v2\tkey-1\tvalue-1",
            "Partition:0\tOffset:1\th3:v3\tkey-2\tvalue-2");
        assertThat(consumed.stderr()).contains("Processed a total of 2 messages");
    }

    @Test
    void consumerGroupsListDescribeResetDelete() throws Exception {
        createTopic("tools-groups", 2);
        produce("tools-groups", 0, 5);
        produce("tools-groups", 1, 3);
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, "tools-group");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.commitSync(Map.of(new TopicPartition("tools-groups", 0), new OffsetAndMetadata(2),
                new TopicPartition("tools-groups", 1), new OffsetAndMetadata(3)));
        }
        assertThat(ok(ConsumerGroupCommand::main, "--list").lines()).contains("tools-group");

        KafkaTool.Result described = ok(ConsumerGroupCommand::main, "--describe", "--group", "tools-group");
        assertThat(table(described.lines())).containsExactly(
            groupRow("tools-group", "tools-groups", "0", "2", "5", "3"),
            groupRow("tools-group", "tools-groups", "1", "3", "3", "0"));
        assertThat(described.stderr()).contains("Consumer group 'tools-group' has no active members.");

        List<Map<String, String>> reset = table(ok(ConsumerGroupCommand::main, "--reset-offsets", "--group", "tools-group",
            "--topic", "tools-groups", "--to-earliest", "--execute").lines());
        Map<String, String> newOffsets = reset.stream()
            .collect(Collectors.toMap(row -> row.get("PARTITION"), row -> row.get("NEW-OFFSET"), (a, b) -> a, TreeMap::new));
        assertThat(newOffsets).containsExactly(Map.entry("0", "0"), Map.entry("1", "0"));
        assertThat(table(ok(ConsumerGroupCommand::main, "--describe", "--group", "tools-group").lines())).containsExactly(
            groupRow("tools-group", "tools-groups", "0", "0", "5", "5"),
            groupRow("tools-group", "tools-groups", "1", "0", "3", "3"));

        assertThat(ok(ConsumerGroupCommand::main, "--delete", "--group", "tools-group").lines())
            .containsExactly("Deletion of requested consumer groups ('tools-group') was successful.");
        assertThat(ok(ConsumerGroupCommand::main, "--list").lines()).doesNotContain("tools-group");
    }

    private static Map<String, String> groupRow(String group, String topic, String partition, String current, String logEnd, String lag) {
        Map<String, String> row = new LinkedHashMap<>();
        row.put("GROUP", group);
        row.put("TOPIC", topic);
        row.put("PARTITION", partition);
        row.put("CURRENT-OFFSET", current);
        row.put("LOG-END-OFFSET", logEnd);
        row.put("LAG", lag);
        row.put("CONSUMER-ID", "-");
        row.put("HOST", "-");
        row.put("CLIENT-ID", "-");
        return row;
    }

    @Test
    void getOffsetsAndDeleteRecordsWithAJsonOffsetsFile() throws Exception {
        createTopic("tools-offsets", 2);
        produce("tools-offsets", 0, 4);
        produce("tools-offsets", 1, 2);
        assertThat(ok(GetOffsetShell::main, "--topic", "tools-offsets").lines()).containsExactly("tools-offsets:0:4", "tools-offsets:1:2");

        Path offsets = dataDir.resolve("delete-records.json");
        Files.writeString(offsets, "{\"partitions\":[{\"topic\":\"tools-offsets\",\"partition\":0,\"offset\":3}],\"version\":1}");
        assertThat(ok(DeleteRecordsCommand::main, "--offset-json-file", offsets.toString()).lines()).containsExactly(
            "Executing records delete operation",
            "Records delete operation completed:",
            "partition: tools-offsets-0\tlow_watermark: 3");
        assertThat(ok(GetOffsetShell::main, "--topic", "tools-offsets", "--time", "earliest").lines())
            .containsExactly("tools-offsets:0:3", "tools-offsets:1:0");
        assertThat(ok(GetOffsetShell::main, "--topic", "tools-offsets", "--time", "latest").lines())
            .containsExactly("tools-offsets:0:4", "tools-offsets:1:2");

        // Past the high watermark: Kafka's OFFSET_OUT_OF_RANGE for that partition.
        Files.writeString(offsets, "{\"partitions\":[{\"topic\":\"tools-offsets\",\"partition\":1,\"offset\":10}],\"version\":1}");
        assertThat(ok(DeleteRecordsCommand::main, "--offset-json-file", offsets.toString()).lines()).contains(
            "partition: tools-offsets-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: "
                + "The requested offset is not within the range of offsets maintained by the server.");
    }

    @Test
    void logDirsDescribeAsJson() throws Exception {
        createTopic("tools-logdirs", 2);
        produce("tools-logdirs", 1, 3);
        List<String> lines = ok(LogDirsCommand::main, "--describe", "--topic-list", "tools-logdirs").lines();
        assertThat(lines.subList(0, 2)).containsExactly("Querying brokers for log directories information",
            "Received log directory information from brokers 1");
        JsonNode json = new ObjectMapper().readTree(lines.get(2));
        assertThat(json.get("version").asInt()).isEqualTo(1);
        JsonNode broker = json.get("brokers").get(0);
        assertThat(broker.get("broker").asInt()).isEqualTo(1);
        JsonNode logDir = broker.get("logDirs").get(0);
        assertThat(logDir.get("logDir").asText()).isEqualTo(dataDir.resolve("data").toString());
        assertThat(logDir.get("error").isNull()).isTrue();
        Map<String, JsonNode> partitions = new TreeMap<>();
        logDir.get("partitions").forEach(partition -> partitions.put(partition.get("partition").asText(), partition));
        assertThat(partitions).containsOnlyKeys("tools-logdirs-0", "tools-logdirs-1");
        assertThat(partitions.get("tools-logdirs-0").get("size").asLong()).isZero();
        long onDisk = Files.size(dataDir.resolve("data").resolve("tools-logdirs-1").resolve("00000000000000000000.log"));
        assertThat(partitions.get("tools-logdirs-1").get("size").asLong()).isPositive().isEqualTo(onDisk);
        for (JsonNode partition : partitions.values()) {
            assertThat(partition.get("offsetLag").asLong()).isZero();
            assertThat(partition.get("isFuture").asBoolean()).isFalse();
        }
    }

    @Test
    void transactionsListAndDescribeAfterARealTransactionalProducer() throws Exception {
        createTopic("tools-txn", 1);
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tools-txn-id");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        long producerId;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("tools-txn", 0, "k", "v")).get();

            Map<String, String> listed = transaction(ok(TransactionsCommand::main, "list").lines(), "tools-txn-id");
            assertThat(listed).containsEntry("Coordinator", "1").containsEntry("TransactionState", "Ongoing");
            producerId = Long.parseLong(listed.get("ProducerId"));

            Map<String, String> open = transaction(ok(TransactionsCommand::main, "describe", "--transactional-id", "tools-txn-id").lines(), "tools-txn-id");
            assertThat(open).containsEntry("CoordinatorId", "1").containsEntry("ProducerId", Long.toString(producerId))
                .containsEntry("TransactionState", "Ongoing").containsEntry("TransactionTimeoutMs", "60000")
                .containsEntry("TopicPartitions", "tools-txn-0");
            assertThat(Long.parseLong(open.get("CurrentTransactionStartTimeMs"))).isPositive();

            List<Map<String, String>> producers = table(ok(TransactionsCommand::main, "describe-producers", "--topic", "tools-txn",
                "--partition", "0").lines());
            assertThat(producers).hasSize(1);
            assertThat(producers.get(0)).containsEntry("ProducerId", Long.toString(producerId)).containsEntry("LastSequence", "0")
                .containsEntry("CurrentTransactionStartOffset", "0");
            producer.commitTransaction();
        }
        assertThat(transaction(ok(TransactionsCommand::main, "list").lines(), "tools-txn-id"))
            .containsEntry("ProducerId", Long.toString(producerId)).containsEntry("TransactionState", "CompleteCommit");
        Map<String, String> committed = transaction(ok(TransactionsCommand::main, "describe", "--transactional-id", "tools-txn-id").lines(),
            "tools-txn-id");
        assertThat(committed).containsEntry("TransactionState", "CompleteCommit").containsEntry("TopicPartitions", "");
    }

    /** The row of a transactions tool table (tab-separated, padded) for one transactional id, or null. */
    private static Map<String, String> transaction(List<String> lines, String transactionalId) {
        String[] header = lines.get(0).split("\t");
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split("\t", -1);
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < header.length; i++) {
                row.put(header[i].strip(), i < cells.length ? cells[i].strip() : "");
            }
            if (transactionalId.equals(row.get("TransactionalId"))) {
                return row;
            }
        }
        return null;
    }

    @Test
    void clusterIdIsTheFormattedOne() {
        assertThat(KafkaTool.run(ClusterTool::main, "cluster-id", "--bootstrap-server", server.bootstrap()).lines())
            .containsExactly("Cluster ID: " + server.server().clusterId());
    }

}
