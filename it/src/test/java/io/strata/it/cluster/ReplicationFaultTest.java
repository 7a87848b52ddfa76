package io.strata.it.cluster;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 13's real-process check: 3 combined nodes, a topic with RF 3 and min.insync.replicas 2,
 * an idempotent acks=all Java producer writing all the time while the leader of partition 0 is
 * killed with -9 and restarted, then paused with SIGSTOP past the broker session timeout and
 * resumed, several rounds each. A final drain must find every acknowledged record exactly once,
 * at the offset its acknowledgement named, and no record twice. Rounds: system property
 * {@code strata.replication.rounds} (2 each in CI; the long campaign runs more).
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class ReplicationFaultTest {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationFaultTest.class);
    private static final String TOPIC = "replicated";
    private static final int PARTITIONS = 3;
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    /** Acknowledged writes each fault round must see after the fault, on every partition, before the node comes back. */
    private static final int ACKS_PER_ROUND = 100;

    @TempDir
    Path dir;

    private ClusterHarness cluster;

    @BeforeEach
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 3, Map.of("default.replication.factor", "3", "min.insync.replicas", "2",
            "replica.lag.time.max.ms", "10000"));
        cluster.start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** One acknowledged write: its value, the offset the leader gave it, and when it was sent (System.nanoTime). */
    private record Ack(String value, long offset, long sentNanos) {
    }

    @Test
    void everyAcknowledgedWriteSurvivesKilledAndPausedLeaders() throws Exception {
        int rounds = Integer.getInteger("strata.replication.rounds", 2);
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3)
                .configs(Map.of("min.insync.replicas", "2")))).all().get(30, TimeUnit.SECONDS);
            awaitFullIsr(admin);
            Map<Integer, List<Ack>> acked = new ConcurrentHashMap<>();
            AtomicLong ackCount = new AtomicLong();
            AtomicReference<Throwable> fatal = new AtomicReference<>();
            AtomicBoolean running = new AtomicBoolean(true);
            Thread producerThread = new Thread(() -> produce(acked, ackCount, fatal, running), "replication-fault-producer");
            producerThread.start();
            try {
                awaitAcks(acked, ACKS_PER_ROUND, "acknowledged writes before any fault");
                for (int round = 1; round <= rounds; round++) {
                    int victim = leaderOf(admin, 0);
                    Map<Integer, Integer> before = counts(acked);
                    long killedAt = System.nanoTime();
                    cluster.node(victim).kill9();
                    long firstAck = awaitFirstAckAfter(acked, killedAt, "an ack on partition 0 after kill -9 of leader " + victim);
                    awaitAcksAfter(acked, before, "acks after kill -9 of leader " + victim + " (round " + round + ")");
                    System.out.printf("round %d: kill -9 of leader %d: next ack on partition 0 after %d ms%n", round, victim, firstAck);
                    cluster.node(victim).start();
                    awaitFullIsr(admin);

                    victim = leaderOf(admin, 0);
                    before = counts(acked);
                    long pausedAt = System.nanoTime();
                    cluster.node(victim).pause();
                    try {
                        firstAck = awaitFirstAckAfter(acked, pausedAt, "an ack on partition 0 after SIGSTOP of leader " + victim);
                        awaitAcksAfter(acked, before, "acks after SIGSTOP of leader " + victim + " (round " + round + ")");
                        System.out.printf("round %d: SIGSTOP of leader %d: next ack on partition 0 after %d ms%n", round, victim, firstAck);
                    } finally {
                        cluster.node(victim).resume();
                    }
                    awaitFullIsr(admin);
                }
            } finally {
                running.set(false);
                producerThread.join(TimeUnit.MINUTES.toMillis(3));
            }
            assertThat(fatal.get()).as("the producer failed").isNull();
            assertThat(producerThread.isAlive()).as("the producer stopped").isFalse();
            drainAndCheck(acked);
        }
    }

    /** Writes "p-n" values to partition p (n counting per partition) until told to stop; records every acknowledgement. */
    private void produce(Map<Integer, List<Ack>> acked, AtomicLong ackCount, AtomicReference<Throwable> fatal, AtomicBoolean running) {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        Semaphore inFlight = new Semaphore(500);
        long[] next = new long[PARTITIONS];
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            while (running.get() && fatal.get() == null) {
                for (int partition = 0; partition < PARTITIONS; partition++) {
                    if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        continue;
                    }
                    String value = partition + "-" + next[partition]++;
                    int p = partition;
                    long sentNanos = System.nanoTime();
                    producer.send(new ProducerRecord<>(TOPIC, partition, null, value), (metadata, exception) -> {
                        inFlight.release();
                        if (exception != null) {
                            // Never acknowledged: the drain may find it once or not at all, never twice.
                            LOG.warn("write {} failed: {}", value, exception.toString());
                            return;
                        }
                        acked.computeIfAbsent(p, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                            .add(new Ack(value, metadata.offset(), sentNanos));
                        ackCount.incrementAndGet();
                    });
                }
            }
            producer.flush();
        } catch (Throwable e) {
            fatal.set(e);
        }
    }

    private static Map<Integer, Integer> counts(Map<Integer, List<Ack>> acked) {
        Map<Integer, Integer> counts = new HashMap<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            List<Ack> list = acked.get(partition);
            counts.put(partition, list == null ? 0 : list.size());
        }
        return counts;
    }

    private static void awaitAcks(Map<Integer, List<Ack>> acked, int atLeast, String what) throws InterruptedException {
        ClusterHarness.waitUntil(() -> counts(acked).values().stream().allMatch(count -> count >= atLeast), DEADLINE, what);
    }

    private static void awaitAcksAfter(Map<Integer, List<Ack>> acked, Map<Integer, Integer> before, String what) throws InterruptedException {
        ClusterHarness.waitUntil(() -> {
            Map<Integer, Integer> now = counts(acked);
            return now.entrySet().stream().allMatch(entry -> entry.getValue() >= before.get(entry.getKey()) + ACKS_PER_ROUND);
        }, DEADLINE, what);
    }

    /**
     * Waits for the acknowledgement of a write to partition 0 sent after {@code sinceNanos} (acks of
     * writes already in flight at the fault do not count); returns the milliseconds since then.
     */
    private static long awaitFirstAckAfter(Map<Integer, List<Ack>> acked, long sinceNanos, String what) throws InterruptedException {
        ClusterHarness.waitUntil(() -> {
            List<Ack> acks = acked.get(0);
            synchronized (acks) {
                for (int i = acks.size() - 1; i >= 0; i--) {
                    if (acks.get(i).sentNanos() > sinceNanos) {
                        return true;
                    }
                }
            }
            return false;
        }, DEADLINE, what);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNanos);
    }

    private static int leaderOf(Admin admin, int partition) throws Exception {
        int[] leader = {-1};
        ClusterHarness.waitUntil(() -> {
            TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC);
            TopicPartitionInfo info = description.partitions().get(partition);
            leader[0] = info.leader() == null ? -1 : info.leader().id();
            return leader[0] >= 0;
        }, DEADLINE, "a leader of " + TOPIC + "-" + partition);
        return leader[0];
    }

    /** Waits until every partition has all 3 replicas in its ISR again. */
    private static void awaitFullIsr(Admin admin) throws InterruptedException {
        ClusterHarness.waitUntil(() -> {
            TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC);
            return description.partitions().stream().allMatch(info -> info.leader() != null && info.isr().size() == 3);
        }, DEADLINE, "every partition of " + TOPIC + " has 3 in-sync replicas");
    }

    /** Reads every partition to its end and checks the acknowledged writes against it. */
    private void drainAndCheck(Map<Integer, List<Ack>> acked) {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                partitions.add(new TopicPartition(TOPIC, partition));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            Map<Integer, Map<String, Long>> seen = new HashMap<>();
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp, Duration.ofSeconds(30)) < ends.get(tp))) {
                assertThat(System.nanoTime()).as("drained every partition to its end offset %s in time", ends).isLessThan(deadline);
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    Long earlier = seen.computeIfAbsent(record.partition(), k -> new HashMap<>()).put(record.value(), record.offset());
                    assertThat(earlier).as("%s is in partition %d twice (offsets %s and %d)", record.value(), record.partition(), earlier,
                        record.offset()).isNull();
                }
            }
            long total = 0;
            for (int partition = 0; partition < PARTITIONS; partition++) {
                List<Ack> acks;
                synchronized (acked.get(partition)) {
                    acks = new ArrayList<>(acked.get(partition));
                }
                Map<String, Long> found = seen.getOrDefault(partition, Map.of());
                long lastOffset = -1;
                acks.sort(java.util.Comparator.comparingLong(Ack::offset));
                for (Ack ack : acks) {
                    assertThat(found.get(ack.value())).as("acknowledged %s of partition %d at offset %d", ack.value(), partition, ack.offset())
                        .isEqualTo(ack.offset());
                    assertThat(ack.offset()).as("acknowledged offsets of partition %d increase", partition).isGreaterThan(lastOffset);
                    lastOffset = ack.offset();
                }
                // Within a partition an idempotent producer's writes land in the order it sent them.
                long lastSequence = -1;
                for (Ack ack : acks) {
                    long sequence = Long.parseLong(ack.value().substring(ack.value().indexOf('-') + 1));
                    assertThat(sequence).as("partition %d: %s after sequence %d", partition, ack.value(), lastSequence).isGreaterThan(lastSequence);
                    lastSequence = sequence;
                }
                total += acks.size();
            }
            System.out.printf("drained %d partitions: %d acknowledged writes all found once%n", PARTITIONS, total);
            assertThat(total).isGreaterThan((long) ACKS_PER_ROUND * PARTITIONS);
        }
    }
}
