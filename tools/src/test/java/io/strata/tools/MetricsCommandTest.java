package io.strata.tools;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code strata metrics} against a real in-process broker's metrics endpoint. */
class MetricsCommandTest {
    @RegisterExtension
    static final TestBroker BROKER = new TestBroker();

    static final String TOPIC = "metered";
    static final String GROUP = "lagging-group";
    static final int RECORDS = 30;
    static final int COMMITTED = 12;

    @BeforeAll
    static void produceAndCommit() throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        try (Admin admin = Admin.create(properties)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
                for (int i = 0; i < RECORDS; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, new byte[64])).get(30, TimeUnit.SECONDS);
                }
            }
            // An empty group with a committed offset: its lag is what it has not consumed.
            admin.alterConsumerGroupOffsets(GROUP, Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(COMMITTED)))
                .all().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void printsHealthThroughputLatencyAndLagOnOneScreen() {
        CliRunner.Result result = CliRunner.run("metrics", "--url", BROKER.metricsUrl(), "--interval", "0.2");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).startsWith("Strata broker at " + BROKER.metricsUrl() + " (rates over ")
            .contains("Throughput  in ")
            .contains("Latency, ms (total time)")
            .contains("Consumer lag (top 1 of 1)");
        assertThat(result.lines()).anySatisfy(line -> assertThat(line).matches("\\s+Produce\\s+\\S+\\s+\\S+\\s+\\S+\\s+\\S+"));
        assertThat(result.lines()).anySatisfy(line -> assertThat(line.split("\\s+"))
            .containsSubsequence(GROUP, TOPIC, "0", Integer.toString(COMMITTED), Integer.toString(RECORDS - COMMITTED)));
        assertThat(result.lines().size()).as("one screen").isLessThanOrEqualTo(30);
    }

    @Test
    void withoutAnIntervalShowsAveragesSinceStart() {
        CliRunner.Result result = CliRunner.run("metrics", "--url", BROKER.metricsUrl() + "/", "--interval", "0", "--top", "5");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out()).contains("(averages since start, ").contains("Health      ready");
    }

    @Test
    void anUnreachableEndpointIsAReadableFailure() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        CliRunner.Result result = CliRunner.run("metrics", "--url", "http://127.0.0.1:" + port, "--interval", "0");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err()).startsWith("strata: cannot reach the metrics endpoint http://127.0.0.1:" + port + "/metrics");
    }

    @Test
    void readinessReasonsAreReadFromTheJsonBody() {
        assertThat(MetricsCommand.reason("{\"status\":\"not ready\",\"reason\":\"logs: log recovery: 3 \\\"left\\\"\",\"checks\":{}}"))
            .isEqualTo("logs: log recovery: 3 \"left\"");
        assertThat(MetricsCommand.bytes(1536)).isEqualTo("1.5 KiB");
    }
}
