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
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An idempotent KafkaProducer with retries, talking to a real Strata node through a
 * {@link DroppingProxy} that swallows about one Produce response in five and cuts the
 * connection, as a network failure right after the broker appended would. Each lost response
 * makes the client resend up to {@code max.in.flight} requests whose batches the broker has
 * (at least partly) appended already; the broker must answer those as duplicates with their
 * original offsets. Afterwards a consumer on a second listener, which bypasses the proxy, reads
 * every partition from the beginning and checks: no value twice, every acknowledged value at
 * the offset the producer was given, and each partition in send order.
 *
 * <p>The node has two listeners: {@code PROXIED} advertises the proxy's port, so the producer
 * stays behind the proxy after its first Metadata response; {@code DIRECT} advertises itself.
 */
class IdempotentProducerProxyTest {
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 20_000;
    private static final int DROP_ONE_IN = 5;
    private static final int MAX_DROPS = 200;
    private static final int MIN_DROPS = 10;

    @TempDir
    Path dataDir;

    @ParameterizedTest(name = "max.in.flight={0} compression={1} seed={2}")
    @CsvSource({"5,none,20261129", "1,lz4,7", "5,lz4,31337"})
    void retriedBatchesWhoseResponsesWereLostAreWrittenOnce(int maxInFlight, String compression, long seed) throws Exception {
        String topic = "idempotent-" + maxInFlight + "-" + compression;
        try (DroppingProxy proxy = new DroppingProxy(seed, DROP_ONE_IN, MAX_DROPS);
             StrataTestServer server = new StrataTestServer(dataDir, Map.of(
                 "listeners", "PROXIED://127.0.0.1:0,DIRECT://127.0.0.1:0",
                 "advertised.listeners", "PROXIED://127.0.0.1:" + proxy.port() + ",DIRECT://127.0.0.1:0",
                 "listener.security.protocol.map", "PROXIED:PLAINTEXT,DIRECT:PLAINTEXT"))) {
            proxy.start(new InetSocketAddress("127.0.0.1", server.server().boundPort("PROXIED")));
            String direct = "127.0.0.1:" + server.server().boundPort("DIRECT");
            createTopic(direct, topic);

            Sent sent = produceThroughProxy("127.0.0.1:" + proxy.port(), topic, maxInFlight, compression);
            proxy.stopDropping();
            String context = "seed=" + seed + ", dropped=" + proxy.produceResponsesDropped() + ", forwarded="
                + proxy.produceResponsesForwarded() + ", connections=" + proxy.connectionsAccepted();
            assertThat(proxy.failures()).as(context).isEmpty();
            assertThat(sent.failures).as("sends the client gave up on (" + context + ")").isEmpty();
            assertThat(proxy.produceResponsesDropped()).as(context).isGreaterThanOrEqualTo(MIN_DROPS);

            List<List<ConsumerRecord<byte[], byte[]>>> log = readEveryPartition(direct, topic);
            checkWrittenOnceInOrder(log, sent, context);
            System.out.printf("%s: %d records checked, %s%n", topic, RECORDS, context);
        }
    }

    /** What the producer was told: the offset of each acknowledged value (-1: none) and the error of each failed one. */
    private record Sent(AtomicLongArray offsets, Map<Integer, Exception> failures) {
    }

    private static void createTopic(String bootstrap, String topic) throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(properties)) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }
    }

    private static Sent produceThroughProxy(String bootstrap, String topic, int maxInFlight, String compression) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.RETRIES_CONFIG, Integer.MAX_VALUE);
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 180_000);
        properties.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, maxInFlight);
        properties.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        properties.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        // Small batches (about 40 records): some 200 Produce requests, so the proxy drops about 40 responses and
        // fewer than MIN_DROPS only with negligible probability.
        properties.put(ProducerConfig.BATCH_SIZE_CONFIG, 512);
        properties.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 10);
        properties.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 100);
        properties.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        AtomicLongArray offsets = new AtomicLongArray(RECORDS);
        Map<Integer, Exception> failures = new ConcurrentHashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            for (int i = 0; i < RECORDS; i++) {
                int value = i;
                offsets.set(value, -1L);
                producer.send(new ProducerRecord<>(topic, partitionOf(value), null, encode(value)), (metadata, exception) -> {
                    if (exception != null) {
                        failures.put(value, exception);
                    } else {
                        offsets.set(value, metadata.offset());
                    }
                });
            }
            // flush() returns once every send has completed, successfully or not.
            producer.flush();
        }
        for (int i = 0; i < RECORDS; i++) {
            assertThat(offsets.get(i) >= 0 || failures.containsKey(i)).as("send of value %d completed", i).isTrue();
        }
        return new Sent(offsets, failures);
    }

    private static int partitionOf(int value) {
        return value % PARTITIONS;
    }

    private static byte[] encode(int value) {
        return Integer.toString(value).getBytes(StandardCharsets.UTF_8);
    }

    private static int decode(byte[] value) {
        return Integer.parseInt(new String(value, StandardCharsets.UTF_8));
    }

    /** Every record of every partition, read from the beginning up to the log end offsets taken first. */
    private static List<List<ConsumerRecord<byte[], byte[]>>> readEveryPartition(String bootstrap, String topic) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        List<TopicPartition> partitions = new ArrayList<>();
        List<List<ConsumerRecord<byte[], byte[]>>> log = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
            log.add(new ArrayList<>());
        }
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties)) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> endOffsets = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!reachedEnd(consumer, endOffsets) && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    log.get(record.partition()).add(record);
                }
            }
            assertThat(reachedEnd(consumer, endOffsets)).as("read up to the log end offsets %s within 60 s", endOffsets).isTrue();
        }
        return log;
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> endOffsets) {
        for (Map.Entry<TopicPartition, Long> end : endOffsets.entrySet()) {
            if (consumer.position(end.getKey()) < end.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static void checkWrittenOnceInOrder(List<List<ConsumerRecord<byte[], byte[]>>> log, Sent sent, String context) {
        long[] offsetInLog = new long[RECORDS];
        Arrays.fill(offsetInLog, -1L);
        List<String> duplicates = new ArrayList<>();
        int duplicateCount = 0;
        int recordsRead = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            int previous = -1;
            for (ConsumerRecord<byte[], byte[]> record : log.get(p)) {
                recordsRead++;
                int value = decode(record.value());
                assertThat(value).as("value at %s-%d offset %d (%s)", record.topic(), p, record.offset(), context).isBetween(0, RECORDS - 1);
                assertThat(partitionOf(value)).as("partition of value %d", value).isEqualTo(p);
                if (offsetInLog[value] >= 0) {
                    if (duplicateCount++ < 20) {
                        duplicates.add(value + " at offsets " + offsetInLog[value] + " and " + record.offset());
                    }
                    continue;
                }
                offsetInLog[value] = record.offset();
                assertThat(value).as("value after %d in partition %d at offset %d (%s)", previous, p, record.offset(), context)
                    .isGreaterThan(previous);
                previous = value;
            }
        }
        assertThat(duplicates).as("values written twice: %d, the first 20 shown (%s)", duplicateCount, context).isEmpty();
        Map<Integer, Long> misplaced = new HashMap<>();
        for (int value = 0; value < RECORDS; value++) {
            long acknowledged = sent.offsets.get(value);
            if (acknowledged >= 0 && offsetInLog[value] != acknowledged) {
                misplaced.put(value, offsetInLog[value]);
            }
            if (sent.failures.containsKey(value)) {
                assertThat(offsetInLog[value]).as("value %d whose send failed is not in the log", value).isEqualTo(-1L);
            }
        }
        assertThat(misplaced).as("acknowledged values missing (-1) or not at the acknowledged offset (%s)", context).isEmpty();
        assertThat(recordsRead).isEqualTo(RECORDS - sent.failures.size());
    }
}
