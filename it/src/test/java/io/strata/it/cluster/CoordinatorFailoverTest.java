package io.strata.it.cluster;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The group and transaction coordinators with {@code __consumer_offsets} and
 * {@code __transaction_state} at RF 3 (Kafka's defaults) on 3 nodes: killing the coordinator's
 * node with -9 moves the coordinator to a replica that has every committed offset and every
 * committed transaction, so a consumer group resumes where it committed and a transactional
 * producer's committed transactions are all read once with read_committed, its aborted ones never.
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class CoordinatorFailoverTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);

    @TempDir
    Path dir;

    private ClusterHarness cluster;

    @BeforeEach
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 3, Map.of("offsets.topic.replication.factor", "3", "transaction.state.log.replication.factor", "3",
            "transaction.state.log.min.isr", "2", "default.replication.factor", "3", "min.insync.replicas", "2"));
        cluster.start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void committedOffsetsSurviveTheGroupCoordinatorsNode() throws Exception {
        String topic = "events";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 3))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            for (int i = 0; i < 3_000; i++) {
                producer.send(new ProducerRecord<>(topic, i % 3, null, "e-" + i));
            }
            producer.flush();
        }
        Map<TopicPartition, OffsetAndMetadata> committed;
        int coordinator;
        try (KafkaConsumer<String, String> consumer = consumer("group-a", Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "100"))) {
            consumer.subscribe(List.of(topic));
            int read = 0;
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (read < 1_500) {
                assertThat(System.nanoTime()).as("read 1,500 records in time").isLessThan(deadline);
                read += consumer.poll(Duration.ofMillis(200)).count();
                consumer.commitSync();
            }
            committed = consumer.committed(Set.copyOf(consumer.assignment()));
            try (Admin admin = cluster.admin()) {
                coordinator = admin.describeConsumerGroups(List.of("group-a")).all().get(10, TimeUnit.SECONDS).get("group-a").coordinator().id();
            }
        }
        cluster.node(coordinator).kill9();
        // A new member of the group, through a surviving node, starts where the group committed.
        ClusterHarness.Node survivor = cluster.nodes().stream().filter(node -> node.id() != coordinator).findFirst().orElseThrow();
        Properties properties = ClusterHarness.clientProperties(survivor.bootstrap());
        try (Admin admin = Admin.create(properties)) {
            Map<TopicPartition, OffsetAndMetadata>[] after = new Map[1];
            ClusterHarness.waitUntil(() -> {
                after[0] = admin.listConsumerGroupOffsets("group-a").partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
                return after[0] != null && !after[0].isEmpty();
            }, DEADLINE, "the group's offsets from its new coordinator");
            assertThat(after[0]).as("committed offsets after kill -9 of coordinator %d", coordinator).isEqualTo(committed);
        }
    }

    @Test
    void committedTransactionsSurviveTheTransactionCoordinatorsNode() throws Exception {
        String topic = "ledger";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 3))).all().get(30, TimeUnit.SECONDS);
        }
        Set<String> committed = new HashSet<>();
        Set<String> aborted = new HashSet<>();
        try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "ledger-writer",
            ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000", ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000"))) {
            producer.initTransactions();
            for (int txn = 0; txn < 10; txn++) {
                if (txn == 5) {
                    // The node leading the transaction coordinator's partition of this id (the coordinator of its __transaction_state partition).
                    int coordinator = transactionCoordinator();
                    cluster.node(coordinator).kill9();
                }
                producer.beginTransaction();
                List<String> values = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    String value = "t" + txn + "-" + i;
                    values.add(value);
                    producer.send(new ProducerRecord<>(topic, i % 3, null, value));
                }
                if (txn % 4 == 3) {
                    producer.abortTransaction();
                    aborted.addAll(values);
                } else {
                    commitRetrying(producer);
                    committed.addAll(values);
                }
            }
        }
        Map<String, Integer> seen = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = consumer("reader", Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            List<TopicPartition> partitions = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1), new TopicPartition(topic, 2));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp, Duration.ofSeconds(30)) < ends.get(tp))) {
                assertThat(System.nanoTime()).as("read %s to its end in time", topic).isLessThan(deadline);
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    seen.merge(record.value(), 1, Integer::sum);
                }
            }
        }
        assertThat(seen.keySet()).as("read_committed sees the committed transactions").containsExactlyInAnyOrderElementsOf(committed);
        assertThat(seen.values()).as("each record once").containsOnly(1);
        assertThat(aborted).doesNotContainAnyElementsOf(seen.keySet());
    }

    /** commitTransaction may time out while the coordinator moves; Kafka's producer lets it be called again until it completes. */
    private static void commitRetrying(KafkaProducer<String, String> producer) {
        for (int attempt = 1; ; attempt++) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                if (attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    /** The node that coordinates transactional id "ledger-writer", as a live broker answers FindCoordinator. */
    private int transactionCoordinator() throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.describeTransactions(List.of("ledger-writer")).description("ledger-writer").get(10, TimeUnit.SECONDS).coordinatorId();
        }
    }

    private KafkaProducer<String, String> producer(Map<String, String> overrides) {
        Properties properties = ClusterHarness.clientProperties(cluster.liveBootstrapServers());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.putAll(overrides);
        return new KafkaProducer<>(properties);
    }

    private KafkaConsumer<String, String> consumer(String group, Map<String, String> overrides) {
        Properties properties = ClusterHarness.clientProperties(cluster.liveBootstrapServers());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.putAll(overrides);
        return new KafkaConsumer<>(properties);
    }
}
