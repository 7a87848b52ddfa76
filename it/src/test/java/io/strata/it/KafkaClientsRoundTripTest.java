package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java client against a real Strata node: topics through Admin, every acks setting and
 * compression type through KafkaProducer, and KafkaConsumer with assign, seek,
 * seekToBeginning and offsetsForTimes, checking every record (key, value, headers,
 * timestamp) and its offset.
 */
class KafkaClientsRoundTripTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private Properties clientProperties() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        return properties;
    }

    private KafkaProducer<byte[], byte[]> producer(Map<String, Object> overrides) {
        Properties properties = clientProperties();
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.putAll(overrides);
        return new KafkaProducer<>(properties);
    }

    private KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> overrides) {
        Properties properties = clientProperties();
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.putAll(overrides);
        return new KafkaConsumer<>(properties);
    }

    private void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = Admin.create(clientProperties())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    private static byte[] bytes(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    /** Reads until {@code expected} records arrived or the deadline passed. */
    static List<ConsumerRecord<byte[], byte[]>> drain(KafkaConsumer<byte[], byte[]> consumer, int expected, Duration timeout) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (records.size() < expected && System.nanoTime() < deadline) {
            ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
            batch.forEach(records::add);
        }
        return records;
    }

    @ParameterizedTest(name = "acks={0} compression={1}")
    @CsvSource({"all,none", "all,gzip", "all,snappy", "all,lz4", "all,zstd", "1,none", "1,lz4", "0,none", "0,zstd"})
    void everyAcksSettingAndCompressionTypeRoundTrips(String acks, String compression) throws Exception {
        String topic = "rt-" + acks + "-" + compression;
        createTopic(topic, 3);
        int count = 2000;
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of(ProducerConfig.ACKS_CONFIG, acks,
            ProducerConfig.COMPRESSION_TYPE_CONFIG, compression, ProducerConfig.LINGER_MS_CONFIG, 5,
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, acks.equals("all")))) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                List<Header> headers = List.of(new RecordHeader("h", bytes("hv" + i)));
                sent.add(producer.send(new ProducerRecord<>(topic, i % 3, 1_700_000_000_000L + i, i % 7 == 0 ? null : bytes("key-" + i),
                    i % 11 == 0 ? null : bytes("value-" + i), headers)));
            }
            producer.flush();
            for (Future<RecordMetadata> future : sent) {
                future.get();
            }
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            List<TopicPartition> partitions = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1), new TopicPartition(topic, 2));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            List<ConsumerRecord<byte[], byte[]>> records = drain(consumer, count, Duration.ofSeconds(30));
            assertThat(records).hasSize(count);
            long[] nextOffset = new long[3];
            for (ConsumerRecord<byte[], byte[]> record : records) {
                assertThat(record.offset()).isEqualTo(nextOffset[record.partition()]++);
                int i = (int) (record.timestamp() - 1_700_000_000_000L);
                assertThat(record.partition()).isEqualTo(i % 3);
                assertThat(record.key()).isEqualTo(i % 7 == 0 ? null : bytes("key-" + i));
                assertThat(record.value()).isEqualTo(i % 11 == 0 ? null : bytes("value-" + i));
                assertThat(record.headers().lastHeader("h").value()).isEqualTo(bytes("hv" + i));
            }
            Map<TopicPartition, Long> endOffsets = consumer.endOffsets(partitions);
            for (TopicPartition partition : partitions) {
                assertThat(endOffsets.get(partition)).isEqualTo(nextOffset[partition.partition()]);
            }
        }
    }

    @Test
    void seekAndOffsetsForTimesFindTheRightRecords() throws Exception {
        createTopic("times", 1);
        TopicPartition partition = new TopicPartition("times", 0);
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of(ProducerConfig.BATCH_SIZE_CONFIG, 200))) {
            for (int i = 0; i < 500; i++) {
                producer.send(new ProducerRecord<>("times", 0, 1_700_000_000_000L + i * 10L, null, bytes("v" + i)));
            }
            producer.flush();
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            consumer.assign(List.of(partition));
            Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(Map.of(partition, 1_700_000_000_000L + 2_345L));
            assertThat(found.get(partition).offset()).isEqualTo(235);
            assertThat(found.get(partition).timestamp()).isEqualTo(1_700_000_000_000L + 2_350L);
            assertThat(consumer.offsetsForTimes(Map.of(partition, 1_800_000_000_000L)).get(partition)).isNull();
            assertThat(consumer.beginningOffsets(List.of(partition)).get(partition)).isZero();
            assertThat(consumer.endOffsets(List.of(partition)).get(partition)).isEqualTo(500);

            consumer.seek(partition, 321);
            ConsumerRecord<byte[], byte[]> first = drain(consumer, 1, Duration.ofSeconds(10)).get(0);
            assertThat(first.offset()).isEqualTo(321);
            assertThat(first.value()).isEqualTo(bytes("v321"));
            consumer.seekToEnd(List.of(partition));
            assertThat(consumer.position(partition)).isEqualTo(500);
        }
    }

    @Test
    void aMillionRecordsSurviveARestartRecordByRecord() throws Exception {
        createTopic("million", 4);
        int count = 1_000_000;
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 10,
            ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"))) {
            for (int i = 0; i < count; i++) {
                byte[] value = i % 1000 == 0 ? null : bytes(Integer.toString(i));
                producer.send(new ProducerRecord<>("million", i % 4, (long) i, bytes("k" + i), value,
                    List.of(new RecordHeader("n", bytes(Integer.toString(i % 97))))));
            }
            producer.flush();
        }
        server.restart();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000,
            ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 8 * 1024 * 1024))) {
            List<TopicPartition> partitions = Arrays.asList(new TopicPartition("million", 0), new TopicPartition("million", 1),
                new TopicPartition("million", 2), new TopicPartition("million", 3));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long[] expectedNext = {0, 1, 2, 3};
            int seen = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (seen < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    long i = expectedNext[record.partition()];
                    assertThat(record.timestamp()).isEqualTo(i);
                    assertThat(record.offset()).isEqualTo(i / 4);
                    assertThat(record.key()).isEqualTo(bytes("k" + i));
                    assertThat(record.value()).isEqualTo(i % 1000 == 0 ? null : bytes(Long.toString(i)));
                    assertThat(record.headers().lastHeader("n").value()).isEqualTo(bytes(Long.toString(i % 97)));
                    expectedNext[record.partition()] += 4;
                    seen++;
                }
            }
            assertThat(seen).isEqualTo(count);
        }
    }
}
