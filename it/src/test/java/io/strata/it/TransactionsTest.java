package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
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
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Transactions with the Java client: commit/abort visibility, offsets in transactions, zombie fencing. */
class TransactionsTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir, Map.of("group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "3",
            "transaction.state.log.num.partitions", "3"));
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

    private KafkaProducer<String, String> transactionalProducer(String transactionalId) {
        Properties properties = base();
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(properties);
    }

    private KafkaConsumer<String, String> consumer(String isolation, String group) {
        Properties properties = base();
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (group != null) {
            properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return new KafkaConsumer<>(properties);
    }

    private void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = Admin.create(base())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    private static List<String> readAll(KafkaConsumer<String, String> consumer, List<TopicPartition> partitions, long expectedEnd) {
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        List<String> values = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                values.add(record.value());
            }
            long position = 0;
            for (TopicPartition partition : partitions) {
                position += consumer.position(partition);
            }
            if (position >= expectedEnd) {
                break;
            }
        }
        return values;
    }

    private static final String REQUESTS = "kafka_network_requestmetrics_requests_total";

    /**
     * The client used transactions v2 (KIP-890 part 2): Produce v12+ and EndTxn v5 reached the
     * broker, and no AddPartitionsToTxn or AddOffsetsToTxn (partitions joined implicitly).
     * kafka-clients 4.4 sends Produce v13 and TxnOffsetCommit v6 (topic ids), both transactions v2 as well.
     */
    static void assertTransactionsV2Used(StrataTestServer server, boolean offsetsCommitted) throws Exception {
        io.strata.server.metrics.PrometheusText scrape = MetricsScrape.awaitScrape(server.server().metricsPort(), 10_000,
            "Produce v12+ and EndTxn v5 requests", metrics -> metrics.sum(REQUESTS, "request", "Produce", "version", "12")
                + metrics.sum(REQUESTS, "request", "Produce", "version", "13") > 0
                && metrics.sum(REQUESTS, "request", "EndTxn", "version", "5") > 0
                && (!offsetsCommitted || metrics.sum(REQUESTS, "request", "TxnOffsetCommit", "version", "5")
                    + metrics.sum(REQUESTS, "request", "TxnOffsetCommit", "version", "6") > 0));
        assertThat(scrape.sum(REQUESTS, "request", "AddPartitionsToTxn")).isZero();
        assertThat(scrape.sum(REQUESTS, "request", "AddOffsetsToTxn")).isZero();
        assertThat(scrape.sum(REQUESTS, "request", "EndTxn")).isEqualTo(scrape.sum(REQUESTS, "request", "EndTxn", "version", "5"));
    }

    @Test
    void theJavaClientUsesTransactionsV2AndEveryEndTxnBumpsTheEpoch() throws Exception {
        createTopic("v2", 1);
        try (KafkaProducer<String, String> producer = transactionalProducer("v2-id")) {
            producer.initTransactions();
            for (int txn = 0; txn < 3; txn++) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("v2", "v" + txn));
                if (txn == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
        try (Admin admin = Admin.create(base())) {
            var description = admin.describeTransactions(List.of("v2-id")).description("v2-id").get();
            // InitProducerId gave epoch 0; each of the three EndTxn bumped it once.
            assertThat(description.producerEpoch()).isEqualTo(3);
        }
        try (KafkaConsumer<String, String> consumer = consumer("read_committed", null)) {
            TopicPartition partition = new TopicPartition("v2", 0);
            assertThat(readAll(consumer, List.of(partition), consumer.endOffsets(List.of(partition)).get(partition))).containsExactly("v0", "v2");
        }
        assertTransactionsV2Used(server, false);
    }

    @Test
    void readCommittedSeesExactlyTheCommittedTransactionsInOrder() throws Exception {
        createTopic("txn-out", 2);
        Random random = new Random(42);
        List<String> committed = new ArrayList<>();
        int all = 0;
        try (KafkaProducer<String, String> producer = transactionalProducer("tx-1")) {
            producer.initTransactions();
            for (int txn = 0; txn < 1_000; txn++) {
                producer.beginTransaction();
                List<String> values = new ArrayList<>();
                for (int i = 0; i < 1 + random.nextInt(5); i++) {
                    String value = txn + "-" + i;
                    values.add(value);
                    producer.send(new ProducerRecord<>("txn-out", i % 2, null, value));
                }
                all += values.size();
                producer.flush(); // aborted records reach the log too, so read_committed must filter them
                if (random.nextBoolean()) {
                    producer.commitTransaction();
                    committed.addAll(values);
                } else {
                    producer.abortTransaction();
                }
            }
        }
        List<TopicPartition> partitions = List.of(new TopicPartition("txn-out", 0), new TopicPartition("txn-out", 1));
        try (KafkaConsumer<String, String> consumer = consumer("read_committed", null)) {
            long end = consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
            List<String> seen = readAll(consumer, partitions, end);
            assertThat(seen).containsExactlyInAnyOrderElementsOf(committed);
            // Within a partition, committed records keep their order.
            List<String> partitionZero = seen.stream().filter(v -> v.endsWith("-0") || v.endsWith("-2") || v.endsWith("-4")).toList();
            assertThat(partitionZero).isEqualTo(committed.stream().filter(partitionZero::contains).toList());
        }
        try (KafkaConsumer<String, String> consumer = consumer("read_uncommitted", null)) {
            long end = consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
            assertThat(readAll(consumer, partitions, end)).hasSize(all);
        }
    }

    @Test
    void offsetsSentToATransactionBecomeVisibleOnlyOnCommit() throws Exception {
        createTopic("in", 1);
        createTopic("out", 1);
        try (KafkaProducer<String, String> plain = transactionalProducer("seed")) {
            plain.initTransactions();
            plain.beginTransaction();
            for (int i = 0; i < 10; i++) {
                plain.send(new ProducerRecord<>("in", Integer.toString(i)));
            }
            plain.commitTransaction();
        }
        TopicPartition in = new TopicPartition("in", 0);
        try (KafkaProducer<String, String> producer = transactionalProducer("ctp");
             KafkaConsumer<String, String> consumer = consumer("read_committed", "ctp-group")) {
            producer.initTransactions();
            consumer.subscribe(List.of("in"));
            List<ConsumerRecord<String, String>> records = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (records.size() < 10 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            assertThat(records).hasSize(10);
            ConsumerGroupMetadata group = consumer.groupMetadata();

            producer.beginTransaction();
            producer.send(new ProducerRecord<>("out", "aborted"));
            producer.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(5)), group);
            producer.abortTransaction();
            try (Admin admin = Admin.create(base())) {
                assertThat(admin.listConsumerGroupOffsets("ctp-group").partitionsToOffsetAndMetadata().get()).doesNotContainKey(in);
            }

            producer.beginTransaction();
            producer.send(new ProducerRecord<>("out", "committed"));
            producer.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(10)), group);
            producer.commitTransaction();
            try (Admin admin = Admin.create(base())) {
                assertThat(admin.listConsumerGroupOffsets("ctp-group").partitionsToOffsetAndMetadata().get().get(in).offset()).isEqualTo(10);
            }
        }
        assertTransactionsV2Used(server, true);
        server.restart();
        try (Admin admin = Admin.create(base())) {
            assertThat(admin.listConsumerGroupOffsets("ctp-group").partitionsToOffsetAndMetadata().get().get(in).offset()).isEqualTo(10);
        }
        try (KafkaConsumer<String, String> consumer = consumer("read_committed", null)) {
            TopicPartition out = new TopicPartition("out", 0);
            assertThat(readAll(consumer, List.of(out), consumer.endOffsets(List.of(out)).get(out))).containsExactly("committed");
        }
    }

    @Test
    void aSecondProducerWithTheSameTransactionalIdFencesTheFirst() throws Exception {
        createTopic("fenced", 1);
        try (KafkaProducer<String, String> zombie = transactionalProducer("same-id")) {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>("fenced", "zombie-open")).get();
            try (KafkaProducer<String, String> successor = transactionalProducer("same-id")) {
                successor.initTransactions();
                successor.beginTransaction();
                successor.send(new ProducerRecord<>("fenced", "successor")).get();
                successor.commitTransaction();
            }
            assertThatThrownBy(() -> zombie.send(new ProducerRecord<>("fenced", "zombie-late")).get())
                .rootCause().isInstanceOfAny(ProducerFencedException.class, org.apache.kafka.common.errors.InvalidProducerEpochException.class);
            assertThatThrownBy(zombie::commitTransaction).isInstanceOf(KafkaException.class);
        }
        try (KafkaConsumer<String, String> consumer = consumer("read_committed", null)) {
            TopicPartition partition = new TopicPartition("fenced", 0);
            assertThat(readAll(consumer, List.of(partition), consumer.endOffsets(List.of(partition)).get(partition))).containsExactly("successor");
        }
    }
}
