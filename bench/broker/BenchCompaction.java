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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The compaction promptness load of bench/compaction-bench.sh, against one broker (Kafka or
 * Strata), with kafka-clients only. Prints one {@code RESULT key=value ...} line per run.
 *
 * <pre>
 *   BenchCompaction cleanable  BOOTSTRAP TOPIC_PREFIX RUNS SEED
 *   BenchCompaction tombstones BOOTSTRAP TOPIC_PREFIX RUNS DELETE_RETENTION_MS FILL_BYTES_PER_SEC SEED
 * </pre>
 *
 * <b>cleanable</b>: a compacted topic (segment.bytes 1 MiB, min.cleanable.dirty.ratio 0.5, the
 * broker's cleaner settings) gets 1 KiB records over 100 keys, one record per batch, up to the
 * last one that fits the first segment; after a pause of 1-5 s (so the runs fall at different
 * points of the cleaner's backoff) one more record rolls the segment. Its acknowledgement is the
 * moment the log becomes cleanable (dirty ratio 1.0). The log size (DescribeLogDirs, every 20 ms)
 * dropping below the rolled segment's size is compaction done. Both brokers roll by Kafka's rule
 * (a batch that would take the segment past segment.bytes goes to a new one), and store a
 * one-record batch with the same size, so the roll falls on the same record.
 *
 * <b>tombstones</b>: 100 keys written, then deleted (100 tombstones), then filler records on 100
 * other keys up to and including the roll; a background producer then keeps writing filler at
 * FILL_BYTES_PER_SEC (a segment rolls every couple of seconds, as on a live topic). The first
 * cleaning (first record of the log at or past the first tombstone) starts delete.retention.ms
 * (Kafka stamps the delete horizon then); the tombstones are gone when the first record of the
 * log is past the last tombstone. Reports both times.
 */
public final class BenchCompaction {
    private static final int SEGMENT_BYTES = 1 << 20;
    private static final int KEYS = 100;
    private static final long TIMEOUT_MS = 120_000;
    private static final byte[] VALUE = new byte[1000];

    public static void main(String[] args) throws Exception {
        Arrays.fill(VALUE, (byte) 'v');
        String mode = args[0];
        String bootstrap = args[1];
        String prefix = args[2];
        int runs = Integer.parseInt(args[3]);
        if (mode.equals("cleanable")) {
            Random random = new Random(Long.parseLong(args[4]));
            for (int run = 1; run <= runs; run++) {
                cleanable(bootstrap, prefix + "-c" + run, run, 1000 + random.nextInt(4000));
            }
        } else if (mode.equals("tombstones")) {
            long deleteRetentionMs = Long.parseLong(args[4]);
            long fillBytesPerSec = Long.parseLong(args[5]);
            Random random = new Random(Long.parseLong(args[6]));
            for (int run = 1; run <= runs; run++) {
                tombstones(bootstrap, prefix + "-t" + run, run, deleteRetentionMs, fillBytesPerSec, 1000 + random.nextInt(4000));
            }
        } else {
            throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    /** Keys of one length, so every one-record batch has the same size and the roll falls where it is computed. */
    private static String key(long i) {
        return String.format("key-%02d", i % KEYS);
    }

    private static String filler(long i) {
        return String.format("filler-%02d", i % KEYS);
    }

    private static Admin admin(String bootstrap) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(properties);
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, int lingerMs) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(lingerMs));
        properties.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(properties, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static void createTopic(Admin admin, String topic, Map<String, String> extra) throws Exception {
        Map<String, String> configs = new java.util.HashMap<>(Map.of("cleanup.policy", "compact", "segment.bytes",
            Integer.toString(SEGMENT_BYTES), "min.cleanable.dirty.ratio", "0.5"));
        configs.putAll(extra);
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get(60, TimeUnit.SECONDS);
    }

    private static long logSize(Admin admin, String topic) throws Exception {
        return sizeOf(admin, new TopicPartition(topic, 0));
    }

    private static long sizeOf(Admin admin, TopicPartition partition) throws Exception {
        long size = -1;
        for (var dir : admin.describeLogDirs(List.of(1)).allDescriptions().get(30, TimeUnit.SECONDS).get(1).values()) {
            var info = dir.replicaInfos().get(partition);
            if (info != null) {
                size = Math.max(size, 0) + info.size();
            }
        }
        return size;
    }

    private static long send(KafkaProducer<byte[], byte[]> producer, String topic, String key, byte[] value) throws Exception {
        return producer.send(new ProducerRecord<>(topic, 0, key.getBytes(StandardCharsets.UTF_8), value)).get(60, TimeUnit.SECONDS).offset();
    }

    private static void cleanable(String bootstrap, String topic, int run, int pauseMs) throws Exception {
        try (Admin admin = admin(bootstrap); KafkaProducer<byte[], byte[]> producer = producer(bootstrap, 0)) {
            createTopic(admin, topic, Map.of());
            send(producer, topic, key(0), VALUE);
            long batchBytes = logSize(admin, topic);
            // The record that rolls: the first with size + batch > segment.bytes.
            long roller = SEGMENT_BYTES / batchBytes;
            while (roller * batchBytes + batchBytes <= SEGMENT_BYTES) {
                roller++;
            }
            for (long i = 1; i < roller; i++) {
                send(producer, topic, key(i), VALUE);
            }
            long filled = logSize(admin, topic);
            if (filled != roller * batchBytes) {
                // Not one same-sized batch per record: the roll would not fall where it is computed.
                System.out.println("RESULT run=" + run + " status=unexpected_size filled=" + filled + " expected=" + roller * batchBytes);
                return;
            }
            Thread.sleep(pauseMs);
            send(producer, topic, key(roller), VALUE);
            long cleanableNanos = System.nanoTime();
            long deadline = cleanableNanos + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            long size;
            while ((size = logSize(admin, topic)) > filled / 2) {
                if (System.nanoTime() > deadline) {
                    System.out.println("RESULT run=" + run + " status=timeout batch_bytes=" + batchBytes);
                    return;
                }
                Thread.sleep(20);
            }
            double seconds = (System.nanoTime() - cleanableNanos) / 1e9;
            System.out.printf("RESULT run=%d cleanable_to_compacted_s=%.3f pause_ms=%d batch_bytes=%d segment_bytes_before=%d size_after=%d%n",
                run, seconds, pauseMs, batchBytes, filled, size);
        }
    }

    /** The offset of the first record of the log, or -1 if none came within a few seconds. */
    private static long firstOffset(KafkaConsumer<byte[], byte[]> consumer, TopicPartition partition) {
        consumer.seekToBeginning(List.of(partition));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                return record.offset();
            }
        }
        return -1;
    }

    private static void tombstones(String bootstrap, String topic, int run, long deleteRetentionMs, long fillBytesPerSec, int pauseMs)
        throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        Properties consumerProperties = new Properties();
        consumerProperties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProperties.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "16384");
        consumerProperties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (Admin admin = admin(bootstrap); KafkaProducer<byte[], byte[]> producer = producer(bootstrap, 0);
             KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProperties, new ByteArrayDeserializer(),
                 new ByteArrayDeserializer())) {
            createTopic(admin, topic, Map.of("delete.retention.ms", Long.toString(deleteRetentionMs)));
            for (int i = 0; i < KEYS; i++) {
                send(producer, topic, key(i), VALUE);
            }
            long firstTombstone = -1;
            long lastTombstone = -1;
            for (int i = 0; i < KEYS; i++) {
                lastTombstone = send(producer, topic, key(i), null);
                firstTombstone = firstTombstone < 0 ? lastTombstone : firstTombstone;
            }
            long before = logSize(admin, topic);
            send(producer, topic, filler(0), VALUE);
            long batchBytes = logSize(admin, topic) - before;
            long size = before + batchBytes;
            int i = 1;
            for (; size + batchBytes <= SEGMENT_BYTES; i++) {
                send(producer, topic, filler(i), VALUE);
                size += batchBytes;
            }
            Thread.sleep(pauseMs);
            send(producer, topic, filler(i), VALUE);
            long rolledNanos = System.nanoTime();

            AtomicBoolean stop = new AtomicBoolean();
            int start = i + 1;
            Thread filler = new Thread(() -> fill(bootstrap, topic, fillBytesPerSec, start, stop), "filler");
            filler.setDaemon(true);
            filler.start();
            consumer.assign(List.of(partition));
            try {
                long deadline = rolledNanos + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS + deleteRetentionMs);
                long firstCleanNanos = -1;
                while (System.nanoTime() < deadline) {
                    long first = firstOffset(consumer, partition);
                    long now = System.nanoTime();
                    if (firstCleanNanos < 0 && first >= firstTombstone) {
                        firstCleanNanos = now;
                    }
                    if (first > lastTombstone) {
                        System.out.printf("RESULT run=%d roll_to_first_clean_s=%.3f retention_start_to_tombstones_gone_s=%.3f"
                                + " beyond_delete_retention_s=%.3f delete_retention_ms=%d pause_ms=%d%n", run, (firstCleanNanos - rolledNanos) / 1e9,
                            (now - firstCleanNanos) / 1e9, (now - firstCleanNanos) / 1e9 - deleteRetentionMs / 1000.0, deleteRetentionMs, pauseMs);
                        return;
                    }
                    Thread.sleep(50);
                }
                System.out.println("RESULT run=" + run + " status=timeout");
            } finally {
                stop.set(true);
                filler.join();
            }
        }
    }

    /** Overwrites the filler keys at about {@code bytesPerSec} until stopped. */
    private static void fill(String bootstrap, String topic, long bytesPerSec, int start, AtomicBoolean stop) {
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, 5)) {
            long startNanos = System.nanoTime();
            long sent = 0;
            for (int i = start; !stop.get(); i++) {
                producer.send(new ProducerRecord<>(topic, 0, (filler(i)).getBytes(StandardCharsets.UTF_8), VALUE));
                sent += VALUE.length;
                long aheadMs = sent * 1000 / bytesPerSec - (System.nanoTime() - startNanos) / 1_000_000;
                if (aheadMs > 0) {
                    Thread.sleep(aheadMs);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
