package io.strata.tools;

import io.strata.protocol.message.ApiMessageType;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code strata groups ...} against a real in-process broker, with groups and offsets made by
 * Kafka's own Java consumer and the effects checked with Kafka's Admin client and consumer.
 */
class GroupsCommandTest {
    @RegisterExtension
    static final TestBroker BROKER = new TestBroker(Map.of(
        "group.initial.rebalance.delay.ms", "0",
        "offsets.topic.num.partitions", "3"));

    /** A safety net so a broken test fails instead of hanging; passing tests never wait for it. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final long BASE_TIMESTAMP_MS = Instant.parse("2024-05-01T12:00:00Z").toEpochMilli();

    private static CliRunner.Result groups(String... args) {
        List<String> full = new ArrayList<>(List.of("groups"));
        full.addAll(List.of(args));
        full.addAll(List.of("--bootstrap-server", BROKER.bootstrap()));
        return CliRunner.run(full.toArray(String[]::new));
    }

    private static Properties base() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        return properties;
    }

    /** A topic whose partition p holds {@code perPartition} records with timestamps BASE + i seconds (i = offset). */
    private static void createTopicWithRecords(String topic, int partitions, int perPartition) throws Exception {
        CliRunner.Result created = CliRunner.run("topics", "create", topic, "--partitions", String.valueOf(partitions),
            "--bootstrap-server", BROKER.bootstrap());
        assertThat(created.exitCode()).as(created.toString()).isZero();
        Properties properties = base();
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int partition = 0; partition < partitions; partition++) {
                for (int i = 0; i < perPartition; i++) {
                    producer.send(new ProducerRecord<>(topic, partition, BASE_TIMESTAMP_MS + i * 1000L, "k" + i, "v" + i));
                }
            }
            producer.flush();
        }
    }

    private static KafkaConsumer<String, String> consumer(String group, String clientId, String protocol) {
        Properties properties = base();
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(properties);
    }

    /** Subscribes and polls until the consumer owns {@code partitions} partitions and has read {@code records} records. */
    private static List<ConsumerRecord<String, String>> joinAndRead(KafkaConsumer<String, String> consumer, String topic, int partitions,
                                                                    int records) {
        consumer.subscribe(List.of(topic));
        List<ConsumerRecord<String, String>> read = new ArrayList<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while ((consumer.assignment().size() < partitions || read.size() < records) && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(100)).forEach(read::add);
        }
        assertThat(consumer.assignment()).hasSize(partitions);
        assertThat(read).hasSize(records);
        return read;
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(Object... topicPartitionOffset) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (int i = 0; i < topicPartitionOffset.length; i += 3) {
            offsets.put(new TopicPartition((String) topicPartitionOffset[i], (Integer) topicPartitionOffset[i + 1]),
                new OffsetAndMetadata((Long) topicPartitionOffset[i + 2]));
        }
        return offsets;
    }

    /** Commits offsets for a group outside group management (assign), leaving it Empty with those offsets. */
    private static void commitAsSimpleConsumer(String group, Map<TopicPartition, OffsetAndMetadata> offsets) {
        try (KafkaConsumer<String, String> consumer = consumer(group, group + "-committer", "classic")) {
            consumer.assign(offsets.keySet());
            consumer.commitSync(offsets);
        }
    }

    private static Map<TopicPartition, Long> committed(String group) throws Exception {
        try (Admin admin = Admin.create(base())) {
            Map<TopicPartition, Long> committed = new HashMap<>();
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
                .forEach((partition, offset) -> committed.put(partition, offset.offset()));
            return committed;
        }
    }

    /** The data rows of the one table in {@code result}'s stdout, split on whitespace (Kafka's layout: blank line, header, rows). */
    private static List<String[]> rows(CliRunner.Result result, String expectedHeader) {
        List<String> lines = result.lines();
        assertThat(lines).as(result.toString()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(lines.get(0)).isEmpty();
        assertThat(lines.get(1).split("\\s+")).as(result.toString()).containsExactly(expectedHeader.split(" "));
        return lines.subList(2, lines.size()).stream().map(line -> line.split("\\s+")).toList();
    }

    private static final String OFFSETS_HEADER = "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID";

    @Test
    void listShowsEveryGroupWithItsTypeProtocolAndState() throws Exception {
        createTopicWithRecords("listed", 1, 3);
        commitAsSimpleConsumer("list-simple", offsets("listed", 0, 2L));
        try (KafkaConsumer<String, String> active = consumer("list-active", "list-client", "classic")) {
            joinAndRead(active, "listed", 1, 3);

            CliRunner.Result result = groups("list");

            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.lines().get(0).split("\\s+")).containsExactly("GROUP", "TYPE", "PROTOCOL-TYPE", "STATE");
            assertThat(result.lines()).anyMatch(line -> line.matches("list-active +Classic +consumer +Stable"));
            assertThat(result.lines()).anyMatch(line -> line.matches("list-simple +Classic +- +Empty"));
            List<String> ids = result.lines().subList(1, result.lines().size()).stream().map(line -> line.split(" ")[0]).toList();
            assertThat(ids).isSorted();
        }
    }

    @Test
    void describeShowsCommittedOffsetsLagAndTheOwningMember() throws Exception {
        createTopicWithRecords("described", 2, 10);
        createTopicWithRecords("described-old", 1, 5);
        try (KafkaConsumer<String, String> consumer = consumer("describe-app", "describe-client", "classic")) {
            joinAndRead(consumer, "described", 2, 20);
            consumer.commitSync(offsets("described", 0, 7L, "described", 1, 10L, "described-old", 0, 4L));
            String memberId = consumer.groupMetadata().memberId();

            CliRunner.Result result = groups("describe", "describe-app");

            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.err()).isEmpty();
            List<String[]> rows = rows(result, OFFSETS_HEADER);
            assertThat(rows).hasSize(3);
            assertThat(rows.get(0)).containsExactly("describe-app", "described", "0", "7", "10", "3", memberId, "/127.0.0.1", "describe-client");
            assertThat(rows.get(1)).containsExactly("describe-app", "described", "1", "10", "10", "0", memberId, "/127.0.0.1", "describe-client");
            // Committed, but owned by nobody: the member columns are Kafka's "-".
            assertThat(rows.get(2)).containsExactly("describe-app", "described-old", "0", "4", "5", "1", "-", "-", "-");

            CliRunner.Result members = groups("describe", "describe-app", "--members", "--verbose");
            assertThat(members.exitCode()).as(members.toString()).isZero();
            List<String[]> memberRows = rows(members,
                "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT");
            assertThat(memberRows).hasSize(1);
            assertThat(memberRows.get(0)).containsExactly("describe-app", memberId, "/127.0.0.1", "describe-client", "2", "-", "described:0,1",
                "-", "-");

            CliRunner.Result state = groups("describe", "describe-app", "--state");
            assertThat(state.exitCode()).as(state.toString()).isZero();
            assertThat(state.lines().get(1)).startsWith("GROUP").contains("COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS");
            assertThat(state.lines().get(2)).matches("describe-app +127\\.0\\.0\\.1:" + BROKER.port() + " {2}\\(\\d+\\) +range +Stable +1");
        }
    }

    @Test
    void describeOfAGroupWithoutMembersShowsItsOffsetsAndSaysSo() throws Exception {
        createTopicWithRecords("abandoned", 1, 6);
        commitAsSimpleConsumer("abandoned-app", offsets("abandoned", 0, 2L));

        CliRunner.Result result = groups("describe", "abandoned-app");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.err()).isEqualTo("Consumer group 'abandoned-app' has no active members.\n");
        List<String[]> rows = rows(result, OFFSETS_HEADER);
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0)).containsExactly("abandoned-app", "abandoned", "0", "2", "6", "4", "-", "-", "-");
    }

    @Test
    void describeOfAGroupThatDoesNotExistFailsButDescribesTheOthers() throws Exception {
        createTopicWithRecords("half-known", 1, 1);
        commitAsSimpleConsumer("known-app", offsets("half-known", 0, 1L));

        CliRunner.Result result = groups("describe", "no-such-group", "known-app");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).contains("strata: consumer group 'no-such-group' does not exist");
        assertThat(result.out()).contains("known-app");
    }

    @Test
    @RequiresBrokerApi({ApiMessageType.CONSUMER_GROUP_HEARTBEAT, ApiMessageType.CONSUMER_GROUP_DESCRIBE})
    void describeOfAConsumerProtocolGroupUsesConsumerGroupDescribe() throws Exception {
        createTopicWithRecords("next-gen", 2, 4);
        try (KafkaConsumer<String, String> consumer = consumer("next-gen-app", "next-gen-client", "consumer")) {
            joinAndRead(consumer, "next-gen", 2, 8);
            consumer.commitSync();
            String memberId = consumer.groupMetadata().memberId();

            CliRunner.Result result = groups("describe", "next-gen-app");
            assertThat(result.exitCode()).as(result.toString()).isZero();
            List<String[]> rows = rows(result, OFFSETS_HEADER);
            assertThat(rows).hasSize(2);
            for (int partition = 0; partition < 2; partition++) {
                assertThat(rows.get(partition)).containsExactly("next-gen-app", "next-gen", String.valueOf(partition), "4", "4", "0", memberId,
                    "/127.0.0.1", "next-gen-client");
            }

            CliRunner.Result state = groups("describe", "next-gen-app", "--state", "--verbose");
            assertThat(state.exitCode()).as(state.toString()).isZero();
            assertThat(state.lines().get(2)).contains("Stable").endsWith(" 1");

            CliRunner.Result list = groups("list");
            assertThat(list.lines()).anyMatch(line -> line.matches("next-gen-app +Consumer +\\S+ +Stable"));
        }
    }

    @Test
    void deleteRemovesEmptyGroupsAndReportsKafkasErrorsForTheRest() throws Exception {
        createTopicWithRecords("deletable", 1, 2);
        commitAsSimpleConsumer("deletable-app", offsets("deletable", 0, 1L));
        try (KafkaConsumer<String, String> active = consumer("busy-app", "busy-client", "classic")) {
            joinAndRead(active, "deletable", 1, 2);

            CliRunner.Result result = groups("delete", "deletable-app", "busy-app", "never-was");

            assertThat(result.exitCode()).isEqualTo(1);
            assertThat(result.out()).isEqualTo("Deleted group deletable-app.\n");
            assertThat(result.err()).contains("strata: cannot delete group busy-app: NON_EMPTY_GROUP: The group is not empty.")
                .contains("strata: cannot delete group never-was: GROUP_ID_NOT_FOUND: The group id does not exist.");
            assertThat(committed("deletable-app")).isEmpty();
            assertThat(groups("list").out()).doesNotContain("deletable-app").contains("busy-app");
        }
    }

    @Test
    void resetOffsetsIsRefusedWhileTheGroupHasActiveMembers() throws Exception {
        createTopicWithRecords("guarded", 1, 3);
        try (KafkaConsumer<String, String> active = consumer("guarded-app", "guarded-client", "classic")) {
            joinAndRead(active, "guarded", 1, 3);
            active.commitSync();

            CliRunner.Result result = groups("reset-offsets", "--group", "guarded-app", "--topic", "guarded", "--to-earliest", "--execute");

            assertThat(result.exitCode()).isEqualTo(1);
            assertThat(result.out()).isEmpty();
            assertThat(result.err()).isEqualTo("strata: assignments can only be reset if the group 'guarded-app' is inactive, "
                + "but the current state is Stable.\n");
            assertThat(committed("guarded-app")).containsEntry(new TopicPartition("guarded", 0), 3L);
        }
    }

    @Test
    void resetOffsetsIsADryRunUnlessExecuteIsGiven() throws Exception {
        createTopicWithRecords("planned", 2, 5);
        commitAsSimpleConsumer("planned-app", offsets("planned", 0, 4L, "planned", 1, 5L));

        CliRunner.Result result = groups("reset-offsets", "--group", "planned-app", "--topic", "planned", "--to-earliest");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<String[]> rows = rows(result, "GROUP TOPIC PARTITION NEW-OFFSET");
        assertThat(rows).containsExactly(new String[] {"planned-app", "planned", "0", "0"}, new String[] {"planned-app", "planned", "1", "0"});
        assertThat(result.err()).contains("dry run");
        assertThat(committed("planned-app")).containsOnly(Map.entry(new TopicPartition("planned", 0), 4L),
            Map.entry(new TopicPartition("planned", 1), 5L));
    }

    @Test
    void resetOffsetsExecuteCommitsEachScenarioAndTheGroupResumesThere() throws Exception {
        createTopicWithRecords("rewound", 2, 10);
        commitAsSimpleConsumer("rewound-app", offsets("rewound", 0, 8L, "rewound", 1, 9L));
        TopicPartition p0 = new TopicPartition("rewound", 0);
        TopicPartition p1 = new TopicPartition("rewound", 1);

        assertThat(reset("--topic", "rewound", "--to-earliest")).isEqualTo(Map.of(p0, 0L, p1, 0L));
        assertThat(reset("--topic", "rewound", "--to-latest")).isEqualTo(Map.of(p0, 10L, p1, 10L));
        assertThat(reset("--topic", "rewound:1", "--to-offset", "3")).isEqualTo(Map.of(p0, 10L, p1, 3L));
        assertThat(reset("--topic", "rewound:0", "--shift-by", "-4")).isEqualTo(Map.of(p0, 6L, p1, 3L));
        assertThat(reset("--all-topics", "--shift-by", "2")).isEqualTo(Map.of(p0, 8L, p1, 5L));
        // Records of every partition are one second apart from BASE_TIMESTAMP_MS: 12:00:05.5 falls before offset 6.
        assertThat(reset("--topic", "rewound", "--to-datetime", "2024-05-01T14:00:05.500+02:00")).isEqualTo(Map.of(p0, 6L, p1, 6L));

        CliRunner.Result clamped = groups("reset-offsets", "--group", "rewound-app", "--topic", "rewound:0", "--to-offset", "1000", "--execute");
        assertThat(clamped.exitCode()).as(clamped.toString()).isZero();
        assertThat(clamped.err()).contains("new offset 1000 is higher than the latest offset of rewound-0; using 10");
        CliRunner.Result future = groups("reset-offsets", "--group", "rewound-app", "--topic", "rewound:1", "--to-datetime", "2030-01-01T00:00:00Z",
            "--execute");
        assertThat(future.err()).contains("has no record at or after the time; using its latest offset 10");
        assertThat(committed("rewound-app")).isEqualTo(Map.of(p0, 10L, p1, 10L));

        // The effect a consumer sees: the group resumes exactly where the offsets were reset to.
        assertThat(reset("--topic", "rewound:0", "--to-offset", "7")).containsEntry(p0, 7L);
        try (KafkaConsumer<String, String> resumed = consumer("rewound-app", "resumed-client", "classic")) {
            List<ConsumerRecord<String, String>> read = joinAndRead(resumed, "rewound", 2, 3);
            assertThat(read).allSatisfy(record -> assertThat(record.partition()).isZero());
            assertThat(read.stream().map(ConsumerRecord::offset)).containsExactly(7L, 8L, 9L);
        }
    }

    @Test
    void resetOffsetsNamesUnknownTopicsAndPartitions() throws Exception {
        createTopicWithRecords("bounded", 1, 1);

        CliRunner.Result unknownTopic = groups("reset-offsets", "--group", "bounded-app", "--topic", "no-such-topic", "--to-earliest");
        assertThat(unknownTopic.exitCode()).isEqualTo(1);
        assertThat(unknownTopic.err()).contains("no-such-topic: UNKNOWN_TOPIC_OR_PARTITION");

        CliRunner.Result unknownPartition = groups("reset-offsets", "--group", "bounded-app", "--topic", "bounded:4", "--to-earliest");
        assertThat(unknownPartition.exitCode()).isEqualTo(1);
        assertThat(unknownPartition.err()).contains("topic bounded has no partition 4");

        CliRunner.Result noScenario = groups("reset-offsets", "--group", "bounded-app", "--topic", "bounded");
        assertThat(noScenario.exitCode()).isEqualTo(2);
    }

    /** Runs reset-offsets --execute for rewound-app and returns the offsets the group then has committed. */
    private static Map<TopicPartition, Long> reset(String... args) throws Exception {
        List<String> full = new ArrayList<>(List.of("reset-offsets", "--group", "rewound-app"));
        full.addAll(List.of(args));
        full.add("--execute");
        CliRunner.Result result = groups(full.toArray(String[]::new));
        assertThat(result.exitCode()).as(result.toString()).isZero();
        return committed("rewound-app");
    }
}
