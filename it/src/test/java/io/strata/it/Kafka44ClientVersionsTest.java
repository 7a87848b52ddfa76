package io.strata.it;

import io.strata.server.metrics.PrometheusText;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kafka-clients 4.4 uses the newest versions Strata now advertises: the broker's request
 * metrics (count per request type and version) show which versions the producer, consumer,
 * transactional producer and admin client actually sent in a round trip.
 * AddPartitionsToTxn v4-v5 and WriteTxnMarkers are broker-to-broker requests no client sends
 * (Kafka44VersionsProtocolTest covers them on the wire).
 */
class Kafka44ClientVersionsTest {
    private static final String TOPIC = "newest";
    private static final long TIMEOUT_MS = 30_000;

    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir, Map.of("group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "1",
            "transaction.state.log.num.partitions", "1"));
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

    @Test
    void producerConsumerTransactionsAndAdminUseKafka44sNewestVersions() throws Exception {
        try (Admin admin = Admin.create(base())) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        Properties producerProperties = base();
        producerProperties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProperties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties)) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i)).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }

        Properties consumerProperties = base();
        consumerProperties.put(ConsumerConfig.GROUP_ID_CONFIG, "readers");
        // The consumer rebalance protocol (KIP-848) commits and fetches offsets by topic id; the classic one stays on v9.
        consumerProperties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        consumerProperties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProperties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumerProperties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProperties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties)) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
            while (values.size() < 10 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                records.forEach(record -> values.add(record.value()));
            }
            consumer.commitSync(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(10)));
            assertThat(consumer.committed(java.util.Set.of(new TopicPartition(TOPIC, 0))).get(new TopicPartition(TOPIC, 0)).offset())
                .isEqualTo(10);
        }
        assertThat(values).hasSize(10);

        Properties transactional = new Properties();
        transactional.putAll(producerProperties);
        transactional.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-newest");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(transactional)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, "t", "in-transaction"));
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(11)),
                new org.apache.kafka.clients.consumer.ConsumerGroupMetadata("tx-readers"));
            producer.commitTransaction();
        }

        try (Admin admin = Admin.create(base())) {
            admin.deleteConsumerGroups(List.of("readers")).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }

        PrometheusText scrape = MetricsScrape.parsed(server.server().metricsPort());
        scrape.samples("kafka_network_requestmetrics_requests_total").forEach(sample ->
            System.out.println("used " + sample.label("request") + " v" + sample.label("version") + " x" + sample.value()));
        assertThat(requests(scrape, "ApiVersions", 5)).as("ApiVersions v5").isPositive();
        assertThat(requests(scrape, "Produce", 13)).as("Produce v13 (topic ids)").isPositive();
        assertThat(requests(scrape, "Fetch", 18)).as("Fetch v18").isPositive();
        assertThat(requests(scrape, "OffsetCommit", 10)).as("OffsetCommit v10 (topic ids)").isPositive();
        assertThat(requests(scrape, "OffsetFetch", 10)).as("OffsetFetch v10 (topic ids)").isPositive();
        assertThat(requests(scrape, "TxnOffsetCommit", 6)).as("TxnOffsetCommit v6 (topic ids)").isPositive();
        assertThat(requests(scrape, "EndTxn", 5)).as("EndTxn v5 (transactions v2)").isPositive();
        assertThat(requests(scrape, "DeleteGroups", 3)).as("DeleteGroups v3").isPositive();
        // Transactions v2: the client adds no partitions itself.
        assertThat(scrape.sum("kafka_network_requestmetrics_requests_total", "request", "AddPartitionsToTxn")).isZero();
    }

    private static double requests(PrometheusText scrape, String request, int version) {
        return scrape.sum("kafka_network_requestmetrics_requests_total", "request", request, "version", Integer.toString(version));
    }
}
