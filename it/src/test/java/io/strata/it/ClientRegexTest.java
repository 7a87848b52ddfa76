package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidRegularExpression;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Regular expressions that clients send (KIP-848 subscription patterns, ListTransactions'
 * TransactionalIdPattern) are matched with RE2/J as in Kafka: a pattern that backtracks
 * catastrophically in java.util.regex is answered at once against names of the longest legal
 * length, the coordinator keeps serving other groups, and a pattern RE2 refuses gets
 * INVALID_REGULAR_EXPRESSION.
 */
class ClientRegexTest {
    /** Hours of backtracking in java.util.regex on "aaa...a-000" (JDK 17 memoizes the plain (a+)+$, not this). */
    private static final String PATHOLOGICAL = "((a+)+)+$";
    private static final int MAX_NAME_LENGTH = 249;
    /** Far above the few hundred milliseconds an answer takes, far below the hours the backtracking would. */
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @TempDir
    Path dataDir;

    private StrataTestServer server;
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        // One __consumer_offsets partition: every group lives on the same coordinator shard.
        server = new StrataTestServer(dataDir, Map.of("offsets.topic.num.partitions", "1",
            "group.consumer.heartbeat.interval.ms", "500", "group.consumer.min.heartbeat.interval.ms", "100"));
    }

    @AfterEach
    void stop() {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            try {
                cleanup.get(i).close();
            } catch (Exception e) {
                // best effort: the test already failed or passed
            }
        }
        server.close();
    }

    private <T extends AutoCloseable> T closeLater(T closeable) {
        cleanup.add(closeable);
        return closeable;
    }

    private Properties base() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        return properties;
    }

    private KafkaConsumer<String, String> consumer(String group) {
        Properties properties = base();
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return closeLater(new KafkaConsumer<>(properties));
    }

    private static String longName(String suffix) {
        return "a".repeat(MAX_NAME_LENGTH - suffix.length()) + suffix;
    }

    /** Polls until the consumer is assigned exactly {@code expected}; fails at the deadline. */
    private static void pollUntilAssigned(KafkaConsumer<String, String> consumer, Set<TopicPartition> expected, long deadlineNs) {
        while (!consumer.assignment().equals(expected)) {
            assertThat(System.nanoTime()).as("assigned %s by now, have %s", expected, consumer.assignment()).isLessThan(deadlineNs);
            consumer.poll(Duration.ofMillis(100));
        }
    }

    @Test
    void aPathologicalSubscriptionPatternIsResolvedAtOnceAndOtherGroupsKeepMakingProgress() throws Exception {
        Admin admin = closeLater(Admin.create(base()));
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            topics.add(new NewTopic(longName(String.format("-%03d", i)), 1, (short) 1));
        }
        topics.add(new NewTopic(longName(""), 1, (short) 1));
        topics.add(new NewTopic("plain", 1, (short) 1));
        admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);

        KafkaConsumer<String, String> pathological = consumer("pathological");
        pathological.subscribe(new SubscriptionPattern(PATHOLOGICAL));
        long deadlineNs = System.nanoTime() + DEADLINE.toNanos();
        pollUntilAssigned(pathological, Set.of(new TopicPartition(longName(""), 0)), deadlineNs);

        // Another group on the same coordinator shard joins, is assigned and commits meanwhile.
        KafkaConsumer<String, String> other = consumer("other");
        other.subscribe(List.of("plain"));
        TopicPartition plain = new TopicPartition("plain", 0);
        pollUntilAssigned(other, Set.of(plain), System.nanoTime() + DEADLINE.toNanos());
        other.commitSync(Map.of(plain, new OffsetAndMetadata(0)), DEADLINE);
        assertThat(admin.listConsumerGroupOffsets("other").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS))
            .containsEntry(plain, new OffsetAndMetadata(0));
        pathological.poll(Duration.ofMillis(100));
        assertThat(pathological.assignment()).containsExactly(new TopicPartition(longName(""), 0));
    }

    @Test
    void aSubscriptionPatternRe2RefusesFailsThePollWithInvalidRegularExpression() {
        KafkaConsumer<String, String> consumer = consumer("lookahead");
        consumer.subscribe(new SubscriptionPattern("orders(?=-eu)"));
        long deadlineNs = System.nanoTime() + DEADLINE.toNanos();
        assertThatThrownBy(() -> {
            while (System.nanoTime() < deadlineNs) {
                consumer.poll(Duration.ofMillis(100));
            }
        }).isInstanceOf(InvalidRegularExpression.class).hasMessageContaining("is not a valid regular expression");
    }

    @Test
    void listTransactionsMatchesAPathologicalPatternAtOnceAndRefusesAnInvalidOne() throws Exception {
        Set<String> matching = new TreeSet<>();
        for (int i = 0; i < 6; i++) {
            // Ids of the longest topic-name length; the ones ending in a digit must not match.
            String id = i % 2 == 0 ? longName("-" + i) : "a".repeat(MAX_NAME_LENGTH - i);
            Properties properties = base();
            properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
            properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
                producer.initTransactions();
            }
            if (i % 2 != 0) {
                matching.add(id);
            }
        }
        Admin admin = closeLater(Admin.create(base()));
        long startNs = System.nanoTime();
        Set<String> listed = new TreeSet<>();
        for (TransactionListing listing : admin.listTransactions(new ListTransactionsOptions()
                .filterOnTransactionalIdPattern(PATHOLOGICAL).timeoutMs((int) DEADLINE.toMillis())).all().get()) {
            listed.add(listing.transactionalId());
        }
        assertThat(listed).isEqualTo(matching);
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(DEADLINE);

        assertThatThrownBy(() -> admin.listTransactions(new ListTransactionsOptions()
                .filterOnTransactionalIdPattern("(a)\\1").timeoutMs((int) DEADLINE.toMillis())).all().get())
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidRegularExpression.class);
        // The coordinator still answers.
        assertThat(admin.listTransactions().all().get(30, TimeUnit.SECONDS)).hasSize(6);
    }
}
