package io.strata.server;

import io.strata.server.replica.LogFlusher;
import io.strata.storage.UnifiedLog;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code strata.fsync=on-ack}: a produce (acks=1 or all) is answered only after an fsync covers
 * it, the fsync runs off the request handler threads (a slow one does not stop other requests),
 * and a failed one answers KAFKA_STORAGE_ERROR, is counted and takes the log directory offline
 * (here the only one: the broker halts).
 */
class FsyncOnAckTest {
    @TempDir
    Path dataDir;

    private TestBroker broker;
    /** A failed fsync takes the only log directory offline: the broker halts (observed here instead). */
    private final List<String> halts = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of("strata.fsync", "on-ack", "num.io.threads", "2"), io.strata.common.Time.SYSTEM,
            server -> server.setHalter((status, reason) -> halts.add(reason)));
    }

    @AfterEach
    void stop() {
        producers.forEach(producer -> producer.close(Duration.ofSeconds(5)));
        broker.close();
    }

    private KafkaProducer<byte[], byte[]> producer(String acks) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, acks);
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        properties.put(ProducerConfig.RETRIES_CONFIG, "0");
        properties.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties);
        producers.add(producer);
        return producer;
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, int i) {
        return new ProducerRecord<>(topic, 0, null, ("record-" + i).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aProduceIsAcknowledgedOnlyAfterAnFsyncCoversIt() throws Exception {
        for (String acks : List.of("1", "all")) {
            String topic = "durable-" + acks;
            broker.createTopic(topic, 1, Map.of());
            UnifiedLog log = broker.log(topic, 0);
            KafkaProducer<byte[], byte[]> producer = producer(acks);
            List<String> uncovered = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                sent.add(producer.send(record(topic, i), (metadata, error) -> {
                    // The producer's I/O thread, as the answer arrives: the fsync must already cover the record.
                    if (error == null && log.recoveryPoint() <= metadata.offset()) {
                        uncovered.add(metadata.offset() + " (recovery point " + log.recoveryPoint() + ")");
                    }
                }));
            }
            for (Future<RecordMetadata> future : sent) {
                future.get(30, TimeUnit.SECONDS);
            }
            assertThat(uncovered).as("acks=" + acks + ": records acknowledged before an fsync covered them").isEmpty();
            assertThat(log.highWatermark()).isEqualTo(50);
        }
    }

    @Test
    void theHandlerThreadsServeOtherRequestsWhileAnFsyncIsSlow() throws Exception {
        broker.createTopic("slow", 1, Map.of());
        UnifiedLog log = broker.log("slow", 0);
        CountDownLatch fsyncEntered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        log.setBeforeFsync(target -> {
            fsyncEntered.countDown();
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try {
            // One produce per connection, on more connections than there are handler threads.
            for (int i = 0; i < 3; i++) {
                sent.add(producer("all").send(record("slow", i)));
            }
            assertThat(fsyncEntered.await(30, TimeUnit.SECONDS)).as("the fsync started").isTrue();
            // The fsync is stuck: other requests are still served.
            assertThat(broker.admin().describeCluster().nodes().get(5, TimeUnit.SECONDS)).hasSize(1);
            broker.createTopic("meanwhile", 1, Map.of());
            assertThat(sent).noneMatch(Future::isDone);
            assertThat(log.highWatermark()).as("nothing visible before the fsync").isZero();
        } finally {
            release.countDown();
        }
        for (Future<RecordMetadata> future : sent) {
            assertThat(future.get(30, TimeUnit.SECONDS).offset()).isBetween(0L, 2L);
        }
        assertThat(log.recoveryPoint()).isEqualTo(3);
    }

    @Test
    void aFailedFsyncAnswersKafkaStorageErrorIsCountedAndHaltsABrokerWithOneLogDir() throws Exception {
        broker.createTopic("failing", 1, Map.of());
        UnifiedLog log = broker.log("failing", 0);
        AtomicBoolean failNext = new AtomicBoolean(true);
        AtomicLong failedTarget = new AtomicLong(-1);
        log.setBeforeFsync(target -> {
            if (failNext.getAndSet(false)) {
                failedTarget.set(target);
                throw new IOException("injected fsync failure");
            }
        });
        KafkaProducer<byte[], byte[]> producer = producer("all");
        assertThatThrownBy(() -> producer.send(record("failing", 0)).get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(KafkaStorageException.class);
        assertThat(failedTarget.get()).isEqualTo(1);
        assertThat(broker.server().backgroundErrors().count(LogFlusher.TASK)).isEqualTo(1);
        assertThat(log.highWatermark()).as("not visible: never fsynced").isZero();

        // Kafka's rule: an I/O failure takes the directory offline; it holds the metadata log (and is the only one): the broker halts.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (halts.isEmpty()) {
            assertThat(System.nanoTime()).as("the broker halts").isLessThan(deadline);
            Thread.sleep(10);
        }
        assertThat(halts.get(0)).contains("the metadata log directory");
        assertThat(broker.server().replicaManager().logManager().logDirFailureChannel().hasOfflineLogDir(log.dir().getParent())).isTrue();
    }
}
