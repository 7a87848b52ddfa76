package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * The {@code latency} phase: end-to-end latency with acks=all at a fixed rate below saturation.
 *
 * <p>A producer (acks=all, idempotent, Kafka's other defaults) bootstrapped from node 1 sends
 * {@code --latency-rate} records a second of {@code --record-size} bytes for
 * {@code --latency-warmup-seconds} + {@code --latency-seconds} to a fresh 6-partition RF 3 topic;
 * a consumer bootstrapped from node 2 (assigned every partition, from the end) receives them.
 * Record {@code i} is due at {@code start + i / rate}; its value starts with that due time
 * ({@link System#nanoTime()}, 8 bytes) and {@code i} (8 bytes). Latency = receive − due, so a
 * producer that falls behind its schedule shows in the figure (no coordinated omission). Only
 * the records after the warm-up count: p50 / p99 / p99.9 / max and how many never arrived. With
 * {@code --data-dirs}, {@link ReplicaCheck} then reports whether every node holds the topic's data.
 *
 * <p>Threads: the phase's thread sends; one consumer thread polls. Memory is one {@code long} per
 * record ({@link #RECORDS_MAX} at most).
 */
final class LatencyPhase {
    /** Most records one run may send: bounds the latency array (8 bytes each). */
    static final int RECORDS_MAX = 20_000_000;
    private static final int PARTITIONS = 6;
    /** How long the consumer may still take for the last records after the producer flushed. */
    private static final long DRAIN_TIMEOUT_MS = 60_000;

    private final BenchCluster cluster;

    LatencyPhase(BenchCluster cluster) {
        this.cluster = cluster;
    }

    void run() throws Exception {
        int rate = cluster.intOption("latency-rate", 1_000);
        int seconds = cluster.intOption("latency-seconds", 30);
        int warmupSeconds = cluster.intOption("latency-warmup-seconds", 5);
        int recordSize = cluster.intOption("record-size", 1024);
        long total = (long) rate * (seconds + warmupSeconds);
        if (rate <= 0 || seconds <= 0 || warmupSeconds < 0 || recordSize < 16 || total > RECORDS_MAX) {
            throw new IllegalArgumentException("latency options out of range: rate=" + rate + " seconds=" + seconds
                + " warmupSeconds=" + warmupSeconds + " recordSize=" + recordSize + " (>= 16) records=" + total + " (<= " + RECORDS_MAX + ")");
        }
        String topic = "latency-" + System.nanoTime();
        try (Admin admin = cluster.admin(cluster.allBootstrap())) {
            cluster.createTopic(admin, topic, PARTITIONS);
            String failure = cluster.awaitFullyReplicated(admin, topic);
            if (failure != null) {
                cluster.notMeasured("latency_p99_ms", failure);
                return;
            }
        }
        long[] latencyNanos = new long[(int) total];
        Receiver receiver = new Receiver(topic, latencyNanos);
        receiver.start();
        try {
            if (!receiver.awaitAssigned()) {
                cluster.notMeasured("latency_p99_ms", "the consumer found no positions on " + topic + ": " + receiver.failure);
                return;
            }
            long sendErrors = send(topic, rate, (int) total, recordSize);
            boolean drained = receiver.awaitReceived(total);
            receiver.stop(); // the array is read after the consumer thread ended
            report(latencyNanos, (int) ((long) rate * warmupSeconds), total, sendErrors, drained, rate, recordSize);
            if (cluster.option("data-dirs", null) != null) {
                String unreplicated = new ReplicaCheck(cluster).awaitReplicated(topic, PARTITIONS);
                cluster.result("latency_replicated", unreplicated == null ? "yes" : "no");
                if (unreplicated != null) {
                    cluster.result("latency_replicated_detail", unreplicated);
                }
            }
        } finally {
            receiver.stop();
        }
    }

    /** Sends {@code total} records on schedule; the number of failed sends. */
    private long send(String topic, int rate, int total, int recordSize) {
        AtomicLong errors = new AtomicLong();
        long intervalNanos = TimeUnit.SECONDS.toNanos(1) / rate;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProperties(cluster.listener(1)))) {
            long startNanos = System.nanoTime();
            for (int index = 0; index < total; index++) {
                long dueNanos = startNanos + index * intervalNanos;
                long waitNanos = dueNanos - System.nanoTime();
                if (waitNanos > 0) {
                    LockSupport.parkNanos(waitNanos);
                }
                byte[] value = new byte[recordSize];
                ByteBuffer.wrap(value).putLong(dueNanos).putLong(index);
                producer.send(new ProducerRecord<>(topic, value), (metadata, exception) -> {
                    if (exception != null) {
                        errors.incrementAndGet();
                    }
                });
            }
            producer.flush();
        }
        return errors.get();
    }

    private void report(long[] latencyNanos, int warmup, long total, long sendErrors, boolean drained, int rate, int recordSize) {
        long[] measured = Arrays.stream(latencyNanos, warmup, latencyNanos.length).filter(nanos -> nanos > 0).sorted().toArray();
        long missing = (total - warmup) - measured.length;
        cluster.result("latency_setup", rate + "_rec_s_x_" + recordSize + "_B_" + (total - warmup) + "_measured_" + warmup + "_warmup");
        if (measured.length == 0) {
            cluster.notMeasured("latency_p99_ms", "no record arrived (send errors " + sendErrors + ")");
            return;
        }
        cluster.result("latency_p50_ms", BenchCluster.millis(BenchCluster.percentile(measured, 50)));
        cluster.result("latency_p99_ms", BenchCluster.millis(BenchCluster.percentile(measured, 99)));
        cluster.result("latency_p999_ms", BenchCluster.millis(BenchCluster.percentile(measured, 99.9)));
        cluster.result("latency_max_ms", BenchCluster.millis(measured[measured.length - 1]));
        cluster.result("latency_missing", Long.toString(missing));
        cluster.result("latency_send_errors", Long.toString(sendErrors));
        if (!drained) {
            cluster.result("latency_note", "not_every_record_arrived_within_" + DRAIN_TIMEOUT_MS + "_ms");
        }
    }

    private static Properties producerProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        properties.put(ProducerConfig.CLIENT_ID_CONFIG, "replication-bench-latency");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return properties;
    }

    /**
     * The consumer thread: assigned every partition from its end, it stores each record's latency
     * at its index. The phase's thread reads {@link #received} and, after {@link #stop}, the array.
     */
    private final class Receiver {
        private final String topic;
        private final long[] latencyNanos;
        private final Thread thread;
        private final AtomicLong received = new AtomicLong();
        private final java.util.concurrent.CountDownLatch assigned = new java.util.concurrent.CountDownLatch(1);
        private volatile boolean stopped;
        private volatile Throwable failure;

        Receiver(String topic, long[] latencyNanos) {
            this.topic = topic;
            this.latencyNanos = latencyNanos;
            this.thread = new Thread(this::runLoop, "latency-consumer");
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        boolean awaitAssigned() throws InterruptedException {
            return assigned.await(60, TimeUnit.SECONDS) && failure == null;
        }

        boolean awaitReceived(long total) throws InterruptedException {
            long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_TIMEOUT_MS);
            while (received.get() < total && failure == null && System.nanoTime() < deadlineNanos) {
                Thread.sleep(BenchCluster.POLL_INTERVAL_MS);
            }
            return received.get() >= total;
        }

        void stop() throws InterruptedException {
            stopped = true;
            thread.join(TimeUnit.SECONDS.toMillis(30));
            if (failure != null) {
                throw new IllegalStateException("the latency consumer failed after " + received.get() + " records", failure);
            }
        }

        private void runLoop() {
            Properties properties = new Properties();
            properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.listener(2));
            properties.put(ConsumerConfig.CLIENT_ID_CONFIG, "replication-bench-latency");
            properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties)) {
                List<TopicPartition> partitions = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p)).toList();
                consumer.assign(partitions);
                consumer.seekToEnd(partitions);
                partitions.forEach(consumer::position); // resolves the end offsets before the first record is sent
                assigned.countDown();
                while (!stopped) {
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                        long nowNanos = System.nanoTime();
                        ByteBuffer value = ByteBuffer.wrap(record.value());
                        long dueNanos = value.getLong();
                        int index = (int) value.getLong();
                        if (latencyNanos[index] == 0) {
                            latencyNanos[index] = Math.max(1, nowNanos - dueNanos);
                            received.incrementAndGet();
                        }
                    }
                }
            } catch (Throwable t) {
                failure = t;
            } finally {
                assigned.countDown();
            }
        }
    }
}
