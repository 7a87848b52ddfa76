package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Kafka Streams word count with processing.guarantee=exactly_once_v2: the Streams instance
 * is killed (closed without a clean commit, its state thrown away) in the middle and started
 * again; the final counts are exact.
 */
class KafkaStreamsEosTest {
    @TempDir
    Path dataDir;
    @TempDir
    Path stateDir;

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

    private KafkaStreams streams(String stateSubdir) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("words-in", Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.split(" ")))
            .groupBy((key, word) -> word)
            .count()
            .toStream()
            .to("counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        Properties properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, "wordcount-eos");
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        properties.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        properties.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        properties.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(stateSubdir).toString());
        properties.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        properties.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        properties.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10_000);
        return new KafkaStreams(builder.build(), properties);
    }

    private void produceLines(int from, int to) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>("words-in", "line-" + i, "alpha beta w" + (i % 10)));
            }
        }
    }

    /** The latest committed count per word, read with read_committed. */
    private Map<String, Long> latestCounts() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        Map<String, Long> counts = new HashMap<>();
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(properties)) {
            List<TopicPartition> partitions = consumer.partitionsFor("counts-out").stream()
                .map(info -> new TopicPartition(info.topic(), info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline && partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                for (ConsumerRecord<String, Long> record : consumer.poll(Duration.ofMillis(200))) {
                    counts.put(record.key(), record.value());
                }
            }
        }
        return counts;
    }

    private Map<String, Long> awaitCounts(long expectedAlpha) {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        Map<String, Long> counts = Map.of();
        while (System.nanoTime() < deadline) {
            counts = latestCounts();
            // Words are counted by different tasks committing separate transactions: wait for every word to catch up.
            // Exactness is asserted by the caller (a duplicate would push a count above its expected value).
            Map<String, Long> seen = counts;
            boolean caughtUp = seen.getOrDefault("alpha", 0L) >= expectedAlpha && seen.getOrDefault("beta", 0L) >= expectedAlpha
                && java.util.stream.IntStream.range(0, 10).allMatch(w -> seen.getOrDefault("w" + w, 0L) >= expectedAlpha / 10);
            if (caughtUp) {
                return counts;
            }
        }
        return counts;
    }

    @Test
    void wordCountsAreExactAcrossAKilledAndRestartedInstance() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap()))) {
            admin.createTopics(List.of(new NewTopic("words-in", 2, (short) 1), new NewTopic("counts-out", 2, (short) 1))).all().get();
        }
        produceLines(0, 500);
        KafkaStreams first = streams("first");
        first.start();
        awaitCounts(500);
        produceLines(500, 1000);
        // Kill: close without waiting, and throw away the local state, as a crashed machine would.
        first.close(Duration.ZERO);
        KafkaStreams second = streams("second");
        second.start();
        try {
            Map<String, Long> counts = awaitCounts(1000);
            assertThat(counts.get("alpha")).isEqualTo(1000L);
            assertThat(counts.get("beta")).isEqualTo(1000L);
            for (int w = 0; w < 10; w++) {
                assertThat(counts.get("w" + w)).as("count of w%d", w).isEqualTo(100L);
            }
            // exactly_once_v2 ran on transactions v2: implicit partitions (Produce v12, TxnOffsetCommit v5) and EndTxn v5.
            TransactionsTest.assertTransactionsV2Used(server, true);
        } finally {
            second.close(Duration.ofSeconds(30));
        }
    }
}
