package io.strata.it;

import io.strata.storage.LogManager;
import io.strata.storage.UnifiedLog;
import io.strata.storage.cleaner.LogCleaner;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compacted topic through the real clients: an idempotent producer overwrites a few keys many
 * times (and deletes some), the broker's cleaner thread compacts the closed segments, and a
 * consumer reading from the beginning sees every key's latest value at the offset it was
 * produced at, and far fewer records than were produced.
 */
class LogCompactionTest {
    private static final String TOPIC = "compacted";
    private static final long WAIT_MS = 60_000;

    @TempDir
    Path dataDir;

    @Test
    void aConsumerOfACompactedTopicSeesTheLatestValueOfEveryKey() throws Exception {
        try (StrataTestServer server = new StrataTestServer(dataDir, Map.of("log.cleaner.backoff.ms", "50",
            "log.cleaner.dedupe.buffer.size", Integer.toString(8 << 20)))) {
            Properties admin = new Properties();
            admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
            try (Admin client = Admin.create(admin)) {
                client.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(Map.of("cleanup.policy", "compact",
                    "segment.bytes", "4096", "min.cleanable.dirty.ratio", "0.01")))).all().get(30, TimeUnit.SECONDS);
            }

            Map<String, String> latest = new HashMap<>();
            Map<String, Long> latestOffsets = new HashMap<>();
            int produced = 3000;
            Properties producerProperties = new Properties();
            producerProperties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
            producerProperties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProperties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProperties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            producerProperties.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties)) {
                Random random = new Random(17);
                for (int i = 0; i < produced; i++) {
                    String key = "key-" + random.nextInt(20);
                    String value = random.nextInt(25) == 0 ? null : "value-" + i;
                    RecordMetadata metadata = producer.send(new ProducerRecord<>(TOPIC, key, value)).get(30, TimeUnit.SECONDS);
                    latest.put(key, value);
                    latestOffsets.put(key, metadata.offset());
                }
            }

            LogManager logManager = server.server().logManager();
            UnifiedLog log = logManager.getLog(new io.strata.storage.TopicPartition(TOPIC, 0));
            long cleanUpTo = log.activeSegment().baseOffset();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (cleanedUpTo(logManager, log) < cleanUpTo) {
                assertThat(System.nanoTime()).as("the cleaner reaches offset %d", cleanUpTo).isLessThan(deadline);
                Thread.onSpinWait();
                Thread.yield();
            }

            Properties consumerProperties = new Properties();
            consumerProperties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
            consumerProperties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            consumerProperties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            List<ConsumerRecord<String, String>> consumed = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties)) {
                TopicPartition partition = new TopicPartition(TOPIC, 0);
                consumer.assign(List.of(partition));
                consumer.seekToBeginning(List.of(partition));
                long end = consumer.endOffsets(List.of(partition)).get(partition);
                assertThat(end).isEqualTo(produced);
                while (consumer.position(partition) < end) {
                    consumer.poll(Duration.ofMillis(500)).forEach(consumed::add);
                }
            }

            Map<String, String> seen = new HashMap<>();
            Map<String, Long> seenOffsets = new HashMap<>();
            for (ConsumerRecord<String, String> record : consumed) {
                seen.put(record.key(), record.value());
                seenOffsets.put(record.key(), record.offset());
            }
            assertThat(seen).isEqualTo(latest);
            assertThat(seenOffsets).isEqualTo(latestOffsets);
            assertThat(consumed.size()).as("records left after compaction").isLessThan(produced / 2);
        }
    }

    /**
     * With log.cleaner.backoff.ms at Kafka's default (15 s), the cleaner thread goes idle for
     * 15 s as soon as it starts with nothing to clean (the topic is new). Records that roll
     * segments then make the log cleanable, and it must be compacted well before that backoff
     * ends: the roll wakes the cleaner, it does not wait for a fixed poll. Waits with a deadline
     * of half the backoff after the last record, so a cleaner that only polls cannot pass.
     */
    @Test
    void aLogThatBecomesCleanableIsCompactedLongBeforeTheBackoffElapses() throws Exception {
        long backoffMs = 15_000;
        try (StrataTestServer server = new StrataTestServer(dataDir, Map.of("log.cleaner.backoff.ms", Long.toString(backoffMs),
            "log.cleaner.dedupe.buffer.size", Integer.toString(8 << 20)))) {
            Properties admin = new Properties();
            admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
            try (Admin client = Admin.create(admin)) {
                client.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(Map.of("cleanup.policy", "compact",
                    "segment.bytes", "4096", "min.cleanable.dirty.ratio", "0.01")))).all().get(30, TimeUnit.SECONDS);
            }
            LogManager logManager = server.server().logManager();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (logManager.cleaner() == null) {
                assertThat(System.nanoTime()).as("the cleaner starts with the compacted topic").isLessThan(deadline);
                Thread.onSpinWait();
                Thread.yield();
            }
            long cleanerStartedNanos = System.nanoTime();

            Properties producerProperties = new Properties();
            producerProperties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
            producerProperties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProperties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProperties.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties)) {
                for (int i = 0; i < 400; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, "key-" + (i % 10), "value-" + i)).get(30, TimeUnit.SECONDS);
                }
            }
            UnifiedLog log = logManager.getLog(new io.strata.storage.TopicPartition(TOPIC, 0));
            long cleanUpTo = log.activeSegment().baseOffset();
            assertThat(cleanUpTo).as("the records rolled segments").isGreaterThan(0);
            long producedNanos = System.nanoTime();
            assertThat(TimeUnit.NANOSECONDS.toMillis(producedNanos - cleanerStartedNanos))
                .as("producing ends well inside the cleaner's first backoff, or the test proves nothing").isLessThan(backoffMs / 2);

            long promptDeadline = producedNanos + TimeUnit.MILLISECONDS.toNanos(backoffMs / 2);
            while (cleanedUpTo(logManager, log) < cleanUpTo) {
                assertThat(System.nanoTime()).as("the cleaner reaches offset %d before half of log.cleaner.backoff.ms has passed", cleanUpTo)
                    .isLessThan(promptDeadline);
                Thread.onSpinWait();
                Thread.yield();
            }
            assertThat(log.logSegments().iterator().next().size()).as("the first segment was compacted").isLessThan(4096);
        }
    }

    private static long cleanedUpTo(LogManager logManager, UnifiedLog log) {
        LogCleaner cleaner = logManager.cleaner();
        if (cleaner == null) {
            return -1;
        }
        return cleaner.manager().allCleanerCheckpoints().getOrDefault(log.topicPartition(), -1L);
    }
}
