package io.strata.server;

import io.strata.server.replica.LogDirMover;
import io.strata.storage.EpochEntry;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.LogDirNotFoundException;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static io.strata.server.InProcessCluster.awaitCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * AlterReplicaLogDirs (key 34) on one in-process broker with two data directories, through
 * Kafka's Admin client: a partition moves while an idempotent acks=all producer keeps writing
 * (every acknowledged record is read back once and in order, the directory moved on disk, the
 * future replica is seen in DescribeLogDirs with its lag meanwhile); Kafka's error codes; a move
 * interrupted by a restart resumes and completes.
 */
class AlterReplicaLogDirsTest {
    private static final String TOPIC = "moves";
    private static final int NODE_ID = 1;
    private static final long TIMEOUT_MS = 60_000;
    private static final String THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    private static final TopicPartitionReplica REPLICA = new TopicPartitionReplica(TOPIC, 0, NODE_ID);

    @TempDir
    Path firstDir;
    @TempDir
    Path secondDir;
    private TestBroker broker;

    @AfterEach
    void close() {
        if (broker != null) {
            broker.close();
        }
    }

    private TestBroker start(Map<String, String> extra) throws Exception {
        Map<String, String> overrides = new java.util.HashMap<>(extra);
        overrides.put("log.dirs", firstDir + "," + secondDir);
        return new TestBroker(firstDir, overrides);
    }

    private void createTopic() throws Exception {
        // No delay before the old directory is deleted, so the test sees it gone.
        broker.admin().createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(Map.of("file.delete.delay.ms", "0"))))
            .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private UnifiedLog currentLog() {
        return broker.server().replicaManager().partition(PARTITION).log();
    }

    private LogManager logManager() {
        return broker.server().replicaManager().logManager();
    }

    private Path otherDir(Path dir) {
        return dir.equals(firstDir) ? secondDir : firstDir;
    }

    private void alter(Path target) throws Exception {
        broker.admin().alterReplicaLogDirs(Map.of(REPLICA, target.toString())).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private Throwable alterFailure(TopicPartitionReplica replica, String path) {
        try {
            broker.admin().alterReplicaLogDirs(Map.of(replica, path)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            throw new AssertionError("AlterReplicaLogDirs of " + replica + " to " + path + " succeeded");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private ReplicaLogDirInfo replicaLogDirs() throws Exception {
        return broker.admin().describeReplicaLogDirs(List.of(REPLICA)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(REPLICA);
    }

    private ReplicaInfo describedReplica(Path dir) throws Exception {
        Map<String, LogDirDescription> dirs = broker.admin().describeLogDirs(List.of(NODE_ID)).allDescriptions()
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(NODE_ID);
        LogDirDescription description = dirs.get(dir.toAbsolutePath().normalize().toString());
        assertThat(description).as("DescribeLogDirs lists " + dir + ": " + dirs.keySet()).isNotNull();
        return description.replicaInfos().get(new org.apache.kafka.common.TopicPartition(TOPIC, 0));
    }

    private void setThrottle(long bytesPerSecond) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(NODE_ID));
        broker.admin().incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(THROTTLE,
            Long.toString(bytesPerSecond)), AlterConfigOp.OpType.SET)))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private void awaitMovedTo(Path target) throws InterruptedException {
        awaitCondition(() -> logManager().getFutureLog(PARTITION) == null && currentLog().dir().getParent().equals(target),
            TIMEOUT_MS, "the move of " + PARTITION + " to " + target);
    }

    /** Every directory entry of {@code dir} that belongs to the partition (current, future or awaiting deletion). */
    private static List<String> partitionEntries(Path dir) throws Exception {
        try (var entries = Files.list(dir)) {
            return entries.map(path -> path.getFileName().toString()).filter(name -> name.startsWith(TOPIC + "-0")).toList();
        }
    }

    private KafkaProducer<byte[], byte[]> producer() {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(properties);
    }

    private List<String> readAll() {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties)) {
            org.apache.kafka.common.TopicPartition partition = new org.apache.kafka.common.TopicPartition(TOPIC, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (consumer.position(partition) < end) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("could not read to offset " + end + "; at " + consumer.position(partition));
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(new String(record.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return values;
    }

    @Test
    void partitionMovesWhileAnAcksAllProducerWritesAndNoAcknowledgedRecordIsLost() throws Exception {
        broker = start(Map.of(THROTTLE, "2000"));
        createTopic();
        List<String> acked = java.util.Collections.synchronizedList(new ArrayList<>());
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            List<java.util.concurrent.Future<?>> sends = new ArrayList<>();
            for (int i = 0; i < 3000; i++) {
                String value = "before-" + i + "-padding-padding-padding";
                sends.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8))));
                acked.add(value);
            }
            for (java.util.concurrent.Future<?> send : sends) {
                send.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }
        Path source = currentLog().dir().getParent();
        Path target = otherDir(source);
        List<EpochEntry> epochsBefore = currentLog().leaderEpochCache().epochEntries();

        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> producer = producer()) {
                for (int i = 0; producing.get(); i++) {
                    String value = "during-" + i;
                    producer.send(new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8))).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    acked.add(value);
                }
            } catch (Throwable e) {
                producerFailure.set(e);
            }
        }, "alter-log-dirs-test-producer");
        writer.start();
        try {
            alter(target);
            // Throttled to 2 kB/s (after a first burst of one quota window): the future replica is seen mid-move, with its lag.
            awaitCondition(() -> logManager().getFutureLog(PARTITION) != null, TIMEOUT_MS, "the future log");
            ReplicaLogDirInfo during = replicaLogDirs();
            assertThat(during.getCurrentReplicaLogDir()).isEqualTo(source.toString());
            assertThat(during.getFutureReplicaLogDir()).isEqualTo(target.toString());
            assertThat(during.getFutureReplicaOffsetLag()).isGreaterThanOrEqualTo(0L);
            ReplicaInfo future = describedReplica(target);
            assertThat(future.isFuture()).isTrue();
            assertThat(future.offsetLag()).isGreaterThanOrEqualTo(0L);
            assertThat(describedReplica(source).isFuture()).isFalse();

            setThrottle(Long.MAX_VALUE); // lifted live: the move completes while the producer still writes
            awaitMovedTo(target);
            int ackedAtSwap = acked.size();
            awaitCondition(() -> acked.size() > ackedAtSwap + 50 || producerFailure.get() != null, TIMEOUT_MS, "writes after the swap");
        } finally {
            producing.set(false);
            writer.join(TIMEOUT_MS);
        }
        assertThat(producerFailure.get()).as("the producer saw no error").isNull();

        List<String> read = readAll();
        assertThat(read).as("every acknowledged record once, in order").containsExactlyElementsOf(acked);
        assertThat(currentLog().leaderEpochCache().epochEntries()).isEqualTo(epochsBefore);
        assertThat(partitionEntries(target)).containsExactly(TOPIC + "-0");
        awaitCondition(() -> {
            try {
                return partitionEntries(source).isEmpty();
            } catch (Exception e) {
                return false;
            }
        }, TIMEOUT_MS, "the old directory deleted");
        ReplicaInfo after = describedReplica(target);
        assertThat(after.isFuture()).isFalse();
        assertThat(after.offsetLag()).isZero();
        assertThat(replicaLogDirs().getFutureReplicaLogDir()).isNull();
        LogDirMover mover = broker.server().replicaManager().logDirMover();
        assertThat(mover.completed()).isEqualTo(1);
        assertThat(mover.failures()).isZero();
        assertThat(mover.bytesCopied()).isPositive();
    }

    @Test
    void answersKafkasErrorCodesAndSameDirectoryIsANoOpThatAbortsAPendingMove() throws Exception {
        broker = start(Map.of(THROTTLE, "1"));
        createTopic();
        broker.produce(TOPIC, 200);
        Path source = currentLog().dir().getParent();
        Path target = otherDir(source);

        assertThat(alterFailure(REPLICA, secondDir.resolve("not-a-log-dir").toString())).isInstanceOf(LogDirNotFoundException.class);
        assertThat(alterFailure(REPLICA, "relative/dir")).isInstanceOf(LogDirNotFoundException.class);
        assertThat(alterFailure(new TopicPartitionReplica("no-such-topic", 0, NODE_ID), target.toString()))
            .isInstanceOf(UnknownTopicOrPartitionException.class);

        // In the image but hosted by another broker: REPLICA_NOT_AVAILABLE, and the directory is kept for when it comes here.
        broker.registerBroker(2, "127.0.0.1", 1, null);
        broker.admin().createTopics(List.of(new NewTopic("elsewhere", Map.of(0, List.of(2))))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        assertThat(alterFailure(new TopicPartitionReplica("elsewhere", 0, NODE_ID), target.toString()))
            .isInstanceOf(ReplicaNotAvailableException.class);
        assertThat(logManager().preferredLogDir(new TopicPartition("elsewhere", 0))).isEqualTo(target);

        // Same directory: nothing to do.
        alter(source);
        assertThat(logManager().getFutureLog(PARTITION)).isNull();

        // A move throttled to 1 byte/s stays pending; asking for the current directory again aborts it.
        alter(target);
        assertThat(logManager().getFutureLog(PARTITION)).isNotNull();
        assertThat(partitionEntries(target)).anyMatch(name -> name.endsWith(LogManager.FUTURE_DIR_SUFFIX));
        alter(source);
        assertThat(logManager().getFutureLog(PARTITION)).isNull();
        assertThat(partitionEntries(target)).noneMatch(name -> name.endsWith(LogManager.FUTURE_DIR_SUFFIX));
        assertThat(currentLog().dir().getParent()).isEqualTo(source);
        assertThat(readAll()).hasSize(200);
    }

    @Test
    void moveInterruptedByARestartResumesAndCompletes() throws Exception {
        broker = start(Map.of(THROTTLE, "1"));
        createTopic();
        broker.produce(TOPIC, 300);
        Path source = currentLog().dir().getParent();
        Path target = otherDir(source);
        alter(target);
        awaitCondition(() -> logManager().getFutureLog(PARTITION) != null && logManager().getFutureLog(PARTITION).logEndOffset() > 0,
            TIMEOUT_MS, "a first chunk copied");
        assertThat(logManager().getFutureLog(PARTITION).logEndOffset()).as("throttled: not caught up").isLessThan(300L);
        broker.close();

        broker = start(Map.of());
        awaitMovedTo(target);
        assertThat(currentLog().logEndOffset()).isEqualTo(300L);
        assertThat(readAll()).hasSize(300).startsWith("record-0").endsWith("record-299");
        assertThat(partitionEntries(target)).containsExactly(TOPIC + "-0");
        assertThat(describedReplica(target).isFuture()).isFalse();
    }

    @Test
    void deletingTheTopicWhileMovingAbortsTheMoveAndDeletesTheFutureLog() throws Exception {
        broker = start(Map.of(THROTTLE, "1"));
        createTopic();
        broker.produce(TOPIC, 100);
        Path target = otherDir(currentLog().dir().getParent());
        alter(target);
        awaitCondition(() -> broker.server().replicaManager().logDirMover().state(PARTITION) == LogDirMover.State.COPYING, TIMEOUT_MS,
            "the move running");
        broker.admin().deleteTopics(List.of(TOPIC)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        awaitCondition(() -> broker.server().replicaManager().partition(PARTITION) == null && logManager().getFutureLog(PARTITION) == null,
            TIMEOUT_MS, "the partition and its future log gone");
        LogDirMover mover = broker.server().replicaManager().logDirMover();
        assertThat(mover.state(PARTITION)).isNull();
        assertThat(mover.aborted()).isEqualTo(1);
        assertThat(mover.failures()).isZero();
        awaitCondition(() -> {
            try {
                return partitionEntries(firstDir).isEmpty() && partitionEntries(secondDir).isEmpty();
            } catch (Exception e) {
                return false;
            }
        }, TIMEOUT_MS, "no directory of the partition left");
    }
}
