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
 * gzip; the Java consumer reads every record back with key, value and header.
 */
class KafkaJsTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        ExternalTools.require("node with kafkajs (npm install in it/src/test/js)", ExternalTools.kafkajsInstalled());
        server = new StrataTestServer(dataDir);
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
}
