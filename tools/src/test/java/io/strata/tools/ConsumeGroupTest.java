package io.strata.tools;

import io.strata.common.Time;
import io.strata.tools.client.ClientSettings;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.ConsumedRecord;
import io.strata.tools.client.HostPort;
import io.strata.tools.client.IsolationLevel;
import io.strata.tools.client.TopicConsumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code strata consume --group}: a consumer-protocol group member that commits what it printed,
 * resumes from the group's offsets, and shares partitions with Kafka's own consumer in the same
 * group without losing or repeating records.
 */
class ConsumeGroupTest {
    @RegisterExtension
    static final TestBroker BROKER = new TestBroker(Map.of("offsets.topic.num.partitions", "3"));

    /** A safety net so a broken test fails instead of hanging; passing tests never wait for it. */
    private static final long DEADLINE_MS = 60_000;

    private static Properties base() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        return properties;
    }

    private static void createTopic(String topic, int partitions) {
        CliRunner.Result created = CliRunner.run("topics", "create", topic, "--partitions", String.valueOf(partitions),
            "--bootstrap-server", BROKER.bootstrap());
        assertThat(created.exitCode()).as(created.toString()).isZero();
    }

    private static void produce(String topic, int partitions, int from, int to) {
        Properties properties = base();
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i));
            }
            producer.flush();
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> committed(String group) throws Exception {
        try (Admin admin = Admin.create(base())) {
            return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        }
    }

    private static CliRunner.Result consume(String topic, String group, int max) {
        return CliRunner.run("consume", topic, "--group", group, "--from-beginning", "-n", String.valueOf(max),
            "--timeout-ms", "20000", "--bootstrap-server", BROKER.bootstrap());
    }

    @Test
    void commitsWhatItPrintedAndTheNextRunResumesThere() throws Exception {
        String topic = "group-resume";
        createTopic(topic, 3);
        produce(topic, 3, 0, 30);

        CliRunner.Result first = consume(topic, "resume-app", 10);
        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.lines()).hasSize(10);
        // Committed = the offset after the last printed record of each partition: ten records in all.
        Map<TopicPartition, OffsetAndMetadata> afterFirst = committed("resume-app");
        assertThat(afterFirst.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(10);

        CliRunner.Result second = consume(topic, "resume-app", 20);
        assertThat(second.exitCode()).as(second.toString()).isZero();
        List<String> all = new ArrayList<>(first.lines());
        all.addAll(second.lines());
        // Every record exactly once over the two runs: the second resumed at the commits of the first.
        assertThat(new TreeSet<>(all)).hasSize(30);
        assertThat(all).hasSize(30);
        Map<TopicPartition, OffsetAndMetadata> afterSecond = committed("resume-app");
        assertThat(afterSecond).hasSize(3);
        afterSecond.values().forEach(offset -> assertThat(offset.offset()).isEqualTo(10));

        // The group is a consumer-protocol group that left cleanly (no members), with no lag.
        try (Admin admin = Admin.create(base())) {
            ConsumerGroupDescription description = admin.describeConsumerGroups(List.of("resume-app")).all()
                .get(30, TimeUnit.SECONDS).get("resume-app");
            assertThat(description.type()).isEqualTo(GroupType.CONSUMER);
            assertThat(description.members()).isEmpty();
        }
        CliRunner.Result described = CliRunner.run("groups", "describe", "resume-app", "--bootstrap-server", BROKER.bootstrap());
        assertThat(described.exitCode()).as(described.toString()).isZero();
        List<String> rows = described.lines().stream().filter(line -> line.startsWith("resume-app")).toList();
        assertThat(rows).hasSize(3);
        for (String row : rows) {
            String[] columns = row.trim().split("\\s+");
            assertThat(columns[1]).isEqualTo(topic);
            assertThat(columns[3]).as(row).isEqualTo("10"); // current offset
            assertThat(columns[4]).as(row).isEqualTo("10"); // log end offset
            assertThat(columns[5]).as(row).isEqualTo("0");  // lag
        }
    }

    @Test
    void sharesTheTopicWithKafkasConsumerWithoutLossOrRepeats() throws Exception {
        String topic = "group-shared";
        String group = "shared-app";
        createTopic(topic, 4);
        List<String> seenByStrata = new ArrayList<>();
        List<String> seenByKafka = new ArrayList<>();
        Time time = Time.SYSTEM;
        try (ClusterClient cluster = ClusterClient.connect(List.of(HostPort.parse(BROKER.bootstrap())), ClientSettings.defaults("test"), time)) {
            GroupConsumption strata = new GroupConsumption(cluster, group, cluster.topic(topic, false), ConsumeCommand.newMemberId(),
                IsolationLevel.READ_UNCOMMITTED, TopicConsumer.OffsetReset.EARLIEST, notice -> { });
            // Alone, the Strata member gets every partition.
            pollUntil(strata, seenByStrata, () -> strata.member().owned().size() == 4);
            produce(topic, 4, 0, 40);
            pollUntil(strata, seenByStrata, () -> seenByStrata.size() == 40);

            try (KafkaConsumer<String, String> kafka = kafkaConsumer(group)) {
                kafka.subscribe(List.of(topic));
                // The coordinator splits the partitions: the Strata member must revoke two.
                long deadline = System.currentTimeMillis() + DEADLINE_MS;
                while (!(kafka.assignment().size() == 2 && strata.member().owned().size() == 2)) {
                    assertThat(System.currentTimeMillis()).as("partitions split between the two members").isLessThan(deadline);
                    pollOnce(strata, seenByStrata);
                    kafka.poll(Duration.ofMillis(100)).forEach(record -> seenByKafka.add(record.value()));
                }
                assertThat(seenByKafka).as("Kafka's member resumed at the Strata member's commits").isEmpty();
                produce(topic, 4, 40, 80);
                while (seenByStrata.size() + seenByKafka.size() < 80) {
                    assertThat(System.currentTimeMillis()).as("all records consumed").isLessThan(deadline);
                    pollOnce(strata, seenByStrata);
                    for (ConsumerRecord<String, String> record : kafka.poll(Duration.ofMillis(100))) {
                        seenByKafka.add(record.value());
                    }
                }
                kafka.commitSync();
            }
            // Kafka's member left: its partitions come back to the Strata member, at Kafka's commits.
            pollUntil(strata, seenByStrata, () -> strata.member().owned().size() == 4);
            produce(topic, 4, 80, 100);
            pollUntil(strata, seenByStrata, () -> seenByStrata.size() + seenByKafka.size() >= 100);
            strata.close();
        }
        List<String> all = new ArrayList<>(seenByStrata);
        all.addAll(seenByKafka);
        assertThat(all).hasSize(100);
        assertThat(new TreeSet<>(all)).hasSize(100);
        assertThat(seenByKafka).isNotEmpty();
        Map<TopicPartition, OffsetAndMetadata> offsets = committed(group);
        assertThat(offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(100);
    }

    private static KafkaConsumer<String, String> kafkaConsumer(String group) {
        Properties properties = base();
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(properties);
    }

    private static void pollOnce(GroupConsumption consumer, List<String> seen) {
        for (ConsumedRecord record : consumer.poll(100)) {
            seen.add(new String(record.value(), StandardCharsets.UTF_8));
            consumer.printed(record);
        }
    }

    private static void pollUntil(GroupConsumption consumer, List<String> seen, java.util.function.BooleanSupplier condition) {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (!condition.getAsBoolean()) {
            assertThat(System.currentTimeMillis()).as("condition reached before the deadline").isLessThan(deadline);
            pollOnce(consumer, seen);
        }
    }

    @Test
    void groupCannotBeCombinedWithFixedPositions() {
        CliRunner.Result result = CliRunner.run("consume", "any", "--group", "g", "--partition", "0",
            "--bootstrap-server", BROKER.bootstrap());
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.err()).contains("--group reads the partitions the group assigns");
        assertThat(Set.of(ConsumeCommand.newMemberId(), ConsumeCommand.newMemberId())).hasSize(2);
        assertThat(ConsumeCommand.newMemberId()).hasSize(22);
    }
}
