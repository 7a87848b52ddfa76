package io.strata.server;

import io.strata.server.api.InternalTopics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnstableOffsetCommitException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions of a Java producer against a 3-node cluster (every node broker and controller,
 * RF 1 partitions spread over the three): the transaction coordinator of the producer's id is one
 * node, and the partitions it writes are led by all three, so the partition leaders must reach the
 * coordinator on another node to add (transactions v2) or verify (v1, {@link TransactionsV1AcrossNodesTest})
 * their partitions, and the coordinator must send the markers to the other leaders. With
 * sendOffsetsToTransaction the group's coordinator is a third party: TxnOffsetCommit reaches it,
 * it adds its {@code __consumer_offsets} partition to the transaction on the transaction
 * coordinator's node, and the markers the transaction coordinator sends it publish (commit) or drop
 * (abort) the offsets.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransactionsAcrossNodesTest {
    static final int NODES = 3;
    static final int PARTITIONS = 6;
    static final long TIMEOUT_MS = 30_000;

    private Path dir;
    private InProcessCluster cluster;
    private Admin admin;

    /** Extra node settings (a subclass formats the cluster with another transaction.version). */
    Map<String, String> overrides() {
        return Map.of();
    }

    @BeforeAll
    void startCluster() throws Exception {
        dir = Files.createTempDirectory("strata-txn-cluster");
        Map<String, String> settings = new HashMap<>();
        settings.put("offsets.topic.num.partitions", Integer.toString(PARTITIONS));
        settings.put("transaction.state.log.num.partitions", Integer.toString(PARTITIONS));
        settings.put("group.initial.rebalance.delay.ms", "0");
        // The nodes stop together: a controlled shutdown would wait for a controller that is stopping too.
        settings.put("controlled.shutdown.enable", "false");
        settings.putAll(overrides());
        cluster = InProcessCluster.start(dir, NODES, settings);
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(TIMEOUT_MS));
        admin = Admin.create(properties);
        admin.createTopics(List.of(new NewTopic("orders", PARTITIONS, (short) 1), new NewTopic("input", PARTITIONS, (short) 1),
            new NewTopic("output", PARTITIONS, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        for (String topic : List.of("orders", "input", "output")) {
            cluster.awaitLeaders(topic, PARTITIONS, TIMEOUT_MS);
        }
        // The internal topics are created by the first FindCoordinator of each kind.
        admin.listConsumerGroupOffsets("probe").partitionsToOffsetAndMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        try {
            admin.describeTransactions(List.of("probe")).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException expected) {
            // TRANSACTIONAL_ID_NOT_FOUND: the coordinator that answered it exists now
        }
        cluster.awaitLeaders(InternalTopics.CONSUMER_OFFSETS, PARTITIONS, TIMEOUT_MS);
        cluster.awaitLeaders(InternalTopics.TRANSACTION_STATE, PARTITIONS, TIMEOUT_MS);
    }

    @AfterAll
    void stopCluster() throws IOException {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
        if (dir != null) {
            try (Stream<Path> paths = Files.walk(dir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void aTransactionOverPartitionsOfEveryNodeCommitsAndAnAbortedOneStaysHidden() throws Exception {
        assertThat(leaders("orders")).as("the partitions are led by every node").containsExactlyInAnyOrder(1, 2, 3);
        String transactionalId = transactionalIdCoordinatedBy(1, "orders-txn-");
        try (KafkaProducer<String, String> producer = producer(transactionalId)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                producer.send(new ProducerRecord<>("orders", partition, "k", "committed-" + partition));
            }
            producer.commitTransaction();
            producer.beginTransaction();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                producer.send(new ProducerRecord<>("orders", partition, "k", "aborted-" + partition));
            }
            producer.abortTransaction();
            // The producer goes on after an abort: the next transaction's partitions are added (or verified) again.
            producer.beginTransaction();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                producer.send(new ProducerRecord<>("orders", partition, "k", "after-abort-" + partition));
            }
            producer.commitTransaction();
        }
        List<String> expected = new ArrayList<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            expected.add("committed-" + partition);
            expected.add("after-abort-" + partition);
        }
        assertThat(readCommitted("orders")).containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void sendOffsetsToTransactionCommitsTheOffsetsOfAGroupCoordinatedByAnotherNode() throws Exception {
        String transactionalId = transactionalIdCoordinatedBy(2, "ctp-txn-");
        String groupId = groupCoordinatedBy(3, "ctp-group-");
        assertThat(groupCoordinator(groupId)).isNotEqualTo(transactionCoordinator(transactionalId));
        try (KafkaProducer<String, String> seed = plainProducer()) {
            for (int partition = 0; partition < PARTITIONS; partition++) {
                seed.send(new ProducerRecord<>("input", partition, "k", "in-" + partition));
            }
            seed.flush();
        }
        Map<TopicPartition, OffsetAndMetadata> afterFirst = new HashMap<>();
        try (KafkaProducer<String, String> producer = producer(transactionalId);
             KafkaConsumer<String, String> consumer = consumer(groupId)) {
            producer.initTransactions();
            List<TopicPartition> inputs = partitionsOf("input");
            consumer.assign(inputs);
            consumer.seekToBeginning(inputs);

            // Committed: the output and the group's offsets become visible together.
            List<ConsumerRecord<String, String>> batch = pollAtLeast(consumer, PARTITIONS);
            producer.beginTransaction();
            for (ConsumerRecord<String, String> record : batch) {
                producer.send(new ProducerRecord<>("output", record.partition(), record.key(), "out-" + record.value()));
                afterFirst.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
            }
            producer.sendOffsetsToTransaction(afterFirst, new ConsumerGroupMetadata(groupId));
            producer.commitTransaction();
            assertThat(stableOffsets(groupId)).isEqualTo(afterFirst);

            // Aborted: neither the output nor the offsets.
            try (KafkaProducer<String, String> seed = plainProducer()) {
                for (int partition = 0; partition < PARTITIONS; partition++) {
                    seed.send(new ProducerRecord<>("input", partition, "k", "in-again-" + partition));
                }
                seed.flush();
            }
            List<ConsumerRecord<String, String>> second = pollAtLeast(consumer, PARTITIONS);
            Map<TopicPartition, OffsetAndMetadata> afterSecond = new HashMap<>();
            producer.beginTransaction();
            for (ConsumerRecord<String, String> record : second) {
                producer.send(new ProducerRecord<>("output", record.partition(), record.key(), "out-" + record.value()));
                afterSecond.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
            }
            producer.sendOffsetsToTransaction(afterSecond, new ConsumerGroupMetadata(groupId));
            producer.abortTransaction();
        }
        // Stable: the abort's markers reached the group coordinator, which dropped the pending offsets.
        assertThat(stableOffsets(groupId)).isEqualTo(afterFirst);
        List<String> expected = new ArrayList<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            expected.add("out-in-" + partition);
        }
        assertThat(readCommitted("output")).containsExactlyInAnyOrderElementsOf(expected);
    }

    // ---------------------------------------------------------------- helpers

    private Set<Integer> leaders(String topic) {
        Set<Integer> leaders = new HashSet<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            leaders.add(cluster.leader(topic, partition));
        }
        return leaders;
    }

    private int transactionCoordinator(String transactionalId) {
        return cluster.leader(InternalTopics.TRANSACTION_STATE, cluster.server(1).transactionCoordinator().partitionFor(transactionalId));
    }

    private int groupCoordinator(String groupId) {
        return cluster.leader(InternalTopics.CONSUMER_OFFSETS, cluster.server(1).groupCoordinator().partitionFor(groupId));
    }

    /** A transactional id whose {@code __transaction_state} shard (the partition FindCoordinator uses) is led by {@code node}. */
    private String transactionalIdCoordinatedBy(int node, String prefix) {
        for (int i = 0; i < 10_000; i++) {
            if (transactionCoordinator(prefix + i) == node) {
                return prefix + i;
            }
        }
        throw new AssertionError("node " + node + " leads no __transaction_state partition");
    }

    private String groupCoordinatedBy(int node, String prefix) {
        for (int i = 0; i < 10_000; i++) {
            if (groupCoordinator(prefix + i) == node) {
                return prefix + i;
            }
        }
        throw new AssertionError("node " + node + " leads no __consumer_offsets partition");
    }

    private static List<TopicPartition> partitionsOf(String topic) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            partitions.add(new TopicPartition(topic, partition));
        }
        return partitions;
    }

    private KafkaProducer<String, String> producer(String transactionalId) {
        Properties properties = producerProperties();
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        return new KafkaProducer<>(properties);
    }

    private KafkaProducer<String, String> plainProducer() {
        return new KafkaProducer<>(producerProperties());
    }

    private Properties producerProperties() {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(TIMEOUT_MS));
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(TIMEOUT_MS));
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return properties;
    }

    private KafkaConsumer<String, String> consumer(String groupId) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        if (groupId != null) {
            properties.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        }
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(TIMEOUT_MS));
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(properties);
    }

    private static List<ConsumerRecord<String, String>> pollAtLeast(KafkaConsumer<String, String> consumer, int count) {
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (records.size() < count) {
            assertThat(System.nanoTime()).as("%d records within %d ms, got %s", count, TIMEOUT_MS, records).isLessThan(deadline);
            consumer.poll(Duration.ofMillis(100)).forEach(records::add);
        }
        return records;
    }

    /** Every committed value of {@code topic}, read with read_committed up to each partition's last stable offset. */
    private List<String> readCommitted(String topic) {
        List<String> values = new ArrayList<>();
        List<TopicPartition> partitions = partitionsOf(topic);
        try (KafkaConsumer<String, String> consumer = consumer(null)) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (partitions.stream().anyMatch(partition -> consumer.position(partition) < ends.get(partition))) {
                assertThat(System.nanoTime()).as("reading %s up to %s", topic, ends).isLessThan(deadline);
                consumer.poll(Duration.ofMillis(100)).forEach(record -> values.add(record.value()));
            }
        }
        return values;
    }

    /**
     * The group's committed offsets once no transaction of it is pending: with requireStable the
     * coordinator answers UNSTABLE_OFFSET_COMMIT until the transaction's marker reached it, which
     * the Admin client passes on; asked again until the deadline.
     */
    private Map<TopicPartition, OffsetAndMetadata> stableOffsets(String groupId) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        Map<TopicPartition, OffsetAndMetadata> offsets = null;
        while (offsets == null) {
            try {
                offsets = admin.listConsumerGroupOffsets(groupId, new ListConsumerGroupOffsetsOptions().requireStable(true))
                    .partitionsToOffsetAndMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnstableOffsetCommitException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(10);
            }
        }
        Map<TopicPartition, OffsetAndMetadata> withoutMetadata = new HashMap<>();
        offsets.forEach((partition, offset) -> withoutMetadata.put(partition, offset == null ? null : new OffsetAndMetadata(offset.offset())));
        return withoutMetadata;
    }
}
