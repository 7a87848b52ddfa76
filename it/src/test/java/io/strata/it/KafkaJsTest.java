package io.strata.it;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kafkajs (an independent protocol implementation) produces with idempotence, acks=all and
 * gzip; the Java consumer reads every record back with key, value and header. kafkajs consumer
 * groups (classic protocol) read every record once, commit, and rebalance when a second member
 * joins.
 */
class KafkaJsTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        ExternalTools.require("node with kafkajs (npm install in it/src/test/js)", ExternalTools.kafkajsInstalled());
        server = new StrataTestServer(dataDir, java.util.Map.of("group.initial.rebalance.delay.ms", "0"));
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void kafkajsProducesAndEveryRecordReadsBack() throws Exception {
        int count = 2000;
        Path script = ExternalTools.nodeModulesRoot().resolve("produce.js");
        String report = ExternalTools.run(List.of("node", script.toString(), server.bootstrap(), "js-topic", Integer.toString(count)), null, 120);
        assertThat(report).contains("\"total\":" + count);

        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            List<TopicPartition> partitions = List.of(new TopicPartition("js-topic", 0), new TopicPartition("js-topic", 1));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Set<Integer> seen = new HashSet<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (seen.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    int i = Integer.parseInt(record.key().substring("key-".length()));
                    assertThat(record.value()).isEqualTo("value-" + i);
                    assertThat(record.partition()).isEqualTo(i % 2);
                    assertThat(new String(record.headers().lastHeader("n").value(), StandardCharsets.UTF_8)).isEqualTo(Integer.toString(i));
                    assertThat(seen.add(i)).as("record %d delivered once", i).isTrue();
                }
            }
            assertThat(seen).hasSize(count);
        }
    }

    private List<String> consumeCommand(String topic, String group, String count) {
        return List.of("node", ExternalTools.nodeModulesRoot().resolve("consume.js").toString(), server.bootstrap(), topic, group, count);
    }

    private static List<String> fields(String line) {
        return List.of(line.split("\t", -1));
    }

    /** The values of the RECORD lines. */
    private static List<String> recordValues(List<String> lines) {
        return lines.stream().filter(line -> line.startsWith("RECORD\t")).map(line -> fields(line).get(3)).toList();
    }

    /** The partitions of the member's latest JOIN line, or null before it has joined. */
    private static Set<Integer> latestAssignment(ExternalTools.LineProcess member) {
        List<String> joins = member.lines().stream().filter(line -> line.startsWith("JOIN\t")).toList();
        if (joins.isEmpty()) {
            return null;
        }
        String partitions = fields(joins.get(joins.size() - 1)).get(2);
        Set<Integer> assigned = new HashSet<>();
        for (String partition : partitions.split(",")) {
            if (!partition.isEmpty()) {
                assigned.add(Integer.parseInt(partition));
            }
        }
        return assigned;
    }

    @Test
    void kafkajsConsumerGroupReadsEveryRecordOnceAndCommits() throws Exception {
        int count = 2000;
        GroupClients.createAndProduce(server.bootstrap(), "js-group-topic", 3, count);

        String output = ExternalTools.run(consumeCommand("js-group-topic", "js-group", Integer.toString(count)), null, 120);

        List<String> lines = output.lines().toList();
        assertThat(lines).anyMatch(line -> line.startsWith("JOIN\t") && line.endsWith("\t0,1,2"));
        assertThat(recordValues(lines)).as("every record exactly once").hasSize(count).doesNotHaveDuplicates();
        assertThat(lines.get(lines.size() - 1)).isEqualTo("STOPPED\t" + count);
        assertThat(GroupClients.committedOffsets(server.bootstrap(), "js-group"))
            .isEqualTo(GroupClients.endOffsets(server.bootstrap(), "js-group-topic", 3));
    }

    @Test
    void aSecondKafkajsMemberTriggersARebalanceAndBothConsume() throws Exception {
        int partitions = 4;
        int count = 2000;
        GroupClients.createAndProduce(server.bootstrap(), "js-rebalance-topic", partitions, 0);
        Set<Integer> all = Set.of(0, 1, 2, 3);
        try (ExternalTools.LineProcess first = ExternalTools.LineProcess.start(consumeCommand("js-rebalance-topic", "js-rebalance", "-"))) {
            ExternalTools.LineProcess.await("the first member to own every partition", Duration.ofSeconds(60),
                () -> all.equals(latestAssignment(first)) || !first.isAlive());
            assertThat(latestAssignment(first)).as("first member alone; stderr: %s", first.stderr()).isEqualTo(all);

            try (ExternalTools.LineProcess second = ExternalTools.LineProcess.start(consumeCommand("js-rebalance-topic", "js-rebalance", "-"))) {
                ExternalTools.LineProcess.await("a rebalance that splits the partitions between both members", Duration.ofSeconds(60), () -> {
                    Set<Integer> a = latestAssignment(first);
                    Set<Integer> b = latestAssignment(second);
                    if (!first.isAlive() || !second.isAlive()) {
                        return true;
                    }
                    if (a == null || b == null || a.isEmpty() || b.isEmpty() || a.size() + b.size() != partitions) {
                        return false;
                    }
                    Set<Integer> union = new HashSet<>(a);
                    union.addAll(b);
                    return union.equals(all);
                });
                Set<Integer> firstPartitions = latestAssignment(first);
                Set<Integer> secondPartitions = latestAssignment(second);
                assertThat(firstPartitions).as("stderr: %s %s", first.stderr(), second.stderr()).isNotEmpty();
                assertThat(secondPartitions).isNotEmpty().doesNotContainAnyElementsOf(firstPartitions);

                GroupClients.produce(server.bootstrap(), "js-rebalance-topic", partitions, 0, count);
                ExternalTools.LineProcess.await("both members to read every record", Duration.ofSeconds(60),
                    () -> recordValues(first.lines()).size() + recordValues(second.lines()).size() >= count
                        || !first.isAlive() || !second.isAlive());
                first.closeInput();
                second.closeInput();
                first.awaitExit(60);
                second.awaitExit(60);

                List<String> firstValues = recordValues(first.lines());
                List<String> secondValues = recordValues(second.lines());
                assertThat(firstValues).isNotEmpty();
                assertThat(secondValues).isNotEmpty();
                List<String> everything = new java.util.ArrayList<>(firstValues);
                everything.addAll(secondValues);
                assertThat(everything).as("every record exactly once across the group").hasSize(count).doesNotHaveDuplicates();
                for (String value : firstValues) {
                    assertThat(firstPartitions).contains(Integer.parseInt(value.substring("value-".length())) % partitions);
                }
                assertThat(GroupClients.committedOffsets(server.bootstrap(), "js-rebalance"))
                    .isEqualTo(GroupClients.endOffsets(server.bootstrap(), "js-rebalance-topic", partitions));
            }
        }
    }
}
