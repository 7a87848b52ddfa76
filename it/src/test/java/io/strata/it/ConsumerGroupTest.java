package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Classic consumer groups with the Java client: subscribe, rebalance, commit, resume after a restart. */
class ConsumerGroupTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir, Map.of("group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "5"));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private Properties base() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        return properties;
    }

    private KafkaConsumer<String, String> consumer(String group) {
        Properties properties = base();
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(properties);
    }

    private void produce(String topic, int from, int to) throws Exception {
        Properties properties = base();
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, Integer.toString(i)));
            }
            producer.flush();
        }
    }

    @Test
    void aGroupConsumesEverythingOnceAndResumesFromCommittedOffsetsAfterARestart() throws Exception {
        try (Admin admin = Admin.create(base())) {
            admin.createTopics(List.of(new NewTopic("events", 6, (short) 1))).all().get();
        }
        produce("events", 0, 3000);
        Set<Integer> seen = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = consumer("g1")) {
            consumer.subscribe(List.of("events"));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (seen.size() < 3000 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    assertThat(seen.add(Integer.parseInt(record.value()))).isTrue();
                }
                consumer.commitSync();
            }
            assertThat(seen).hasSize(3000);
            assertThat(consumer.assignment()).hasSize(6);
        }
        try (Admin admin = Admin.create(base())) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("g1").partitionsToOffsetAndMetadata().get();
            assertThat(committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(3000);
            ConsumerGroupDescription description = admin.describeConsumerGroups(List.of("g1")).describedGroups().get("g1").get();
            assertThat(description.members()).isEmpty();
        }
        server.restart();
        produce("events", 3000, 3500);
        try (KafkaConsumer<String, String> consumer = consumer("g1")) {
            consumer.subscribe(List.of("events"));
            Set<Integer> after = new HashSet<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (after.size() < 500 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    int value = Integer.parseInt(record.value());
                    assertThat(value).as("only records after the committed offsets").isGreaterThanOrEqualTo(3000);
                    after.add(value);
                }
            }
            assertThat(after).hasSize(500);
        }
    }
}
