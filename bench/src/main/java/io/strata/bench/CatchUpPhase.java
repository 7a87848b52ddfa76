package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeLogDirsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code catchup} phase: how fast a restarted follower that is {@code --catchup-mb} behind
 * gets back into the ISR.
 *
 * <ol>
 *   <li>The victim is the highest node id that is not the active controller (no controller
 *       failover in the figure). A fresh 6-partition RF 3 topic ({@code min.insync.replicas=2})
 *       is assigned so that the victim is never a partition's preferred leader.</li>
 *   <li>The victim is stopped with SIGTERM (a clean shutdown: the ISR shrinks to 2 at once);
 *       then {@code --catchup-mb} MB of {@code --record-size} records are produced with acks=all
 *       (idempotent, batch.size 256 KiB, linger 10 ms), then the node is started again.</li>
 *   <li>Reported: the bytes it is behind (the leaders' replica sizes minus its own, from
 *       DescribeLogDirs before the stop and after the produce); restart → every partition's ISR
 *       holds it again ({@code catchup_isr_s}); restart → its first DescribeLogDirs answer
 *       ({@code catchup_serving_s}); and the rate over the time in between
 *       ({@code catchup_mb_s}, MB = 10^6 bytes), plus the rate over the whole time
 *       ({@code catchup_total_mb_s}).</li>
 * </ol>
 * A {@link FencingWatch} runs throughout ({@code catchup_live_fenced}).
 *
 * <p>Not thread-safe; the phase's thread runs it (the producer's callbacks only count).
 */
final class CatchUpPhase {
    private static final int PARTITIONS = 6;

    private final BenchCluster cluster;

    CatchUpPhase(BenchCluster cluster) {
        this.cluster = cluster;
    }

    void run() throws Exception {
        long megabytes = cluster.intOption("catchup-mb", 1024);
        int recordSize = cluster.intOption("record-size", 1024);
        if (megabytes <= 0 || recordSize <= 0) {
            throw new IllegalArgumentException("catch-up options out of range: catchupMb=" + megabytes + " recordSize=" + recordSize);
        }
        try (FencingWatch watch = new FencingWatch(cluster); Admin admin = cluster.admin(cluster.allBootstrap())) {
            int controller = admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS).leaderId();
            int victim = cluster.nodeCount() == controller ? cluster.nodeCount() - 1 : cluster.nodeCount();
            String topic = "catchup-" + System.nanoTime();
            BenchCluster.createTopic(admin, topic, assignment(victim));
            String failure = cluster.awaitFullyReplicated(admin, topic);
            if (failure != null) {
                cluster.notMeasured("catchup_isr_s", failure);
                return;
            }
            Map<TopicPartition, Long> victimSizes = replicaSizes(admin, victim, topic);
            ProcessHandle process = cluster.process(victim);
            watch.expectDown(victim);
            process.destroy(); // SIGTERM: a clean shutdown
            process.onExit().get(60, TimeUnit.SECONDS);
            try (Admin survivors = cluster.admin(cluster.bootstrapExcept(victim))) {
                String produced = produce(topic, megabytes * 1_000_000L, recordSize);
                if (produced != null) {
                    cluster.notMeasured("catchup_isr_s", produced);
                    return;
                }
                long lagBytes = lagBytes(survivors, topic, victim, victimSizes);
                long restartNanos = System.nanoTime();
                cluster.restart(victim);
                measureCatchUp(survivors, topic, victim, lagBytes, restartNanos);
                watch.expectUp(victim);
            }
            watch.report(cluster, "catchup");
        }
    }

    private Map<Integer, List<Integer>> assignment(int victim) {
        List<Integer> others = new ArrayList<>();
        for (int id = 1; id <= cluster.nodeCount(); id++) {
            if (id != victim) {
                others.add(id);
            }
        }
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            List<Integer> replicas = new ArrayList<>();
            for (int index = 0; index < others.size(); index++) {
                replicas.add(others.get((partition + index) % others.size()));
            }
            replicas.add(victim);
            assignment.put(partition, replicas);
        }
        return assignment;
    }

    /** Produces {@code bytes} of values with acks=all; null, or why it failed. */
    private String produce(String topic, long bytes, int recordSize) throws InterruptedException {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.allBootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        properties.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        properties.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        properties.put(ProducerConfig.CLIENT_ID_CONFIG, "replication-bench-catchup");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        long records = Math.max(1, bytes / recordSize);
        byte[] value = new byte[recordSize];
        new Random(13).nextBytes(value);
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        long startNanos = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            for (long index = 0; index < records; index++) {
                producer.send(new ProducerRecord<>(topic, value), (metadata, exception) -> {
                    if (exception != null) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, exception.toString());
                    }
                });
            }
            producer.flush();
        }
        long elapsedNanos = System.nanoTime() - startNanos;
        cluster.result("catchup_produce_mb_s", String.format(Locale.ROOT, "%.1f", records * recordSize / 1e6 / (elapsedNanos / 1e9)));
        return errors.get() == 0 ? null : errors.get() + " of " + records + " sends failed; first: " + firstError.get();
    }

    /** Σ over partitions of (leader's replica size − the victim's size before it stopped). */
    private long lagBytes(Admin survivors, String topic, int victim, Map<TopicPartition, Long> victimSizes) throws Exception {
        TopicDescription description = BenchCluster.describeOrNull(survivors, topic);
        if (description == null) {
            return -1;
        }
        Map<Integer, Map<TopicPartition, Long>> sizesByNode = new HashMap<>();
        long lag = 0;
        for (TopicPartitionInfo partition : description.partitions()) {
            int leader = partition.leader() == null ? -1 : partition.leader().id();
            if (leader < 0 || leader == victim) {
                return -1;
            }
            Map<TopicPartition, Long> sizes = sizesByNode.get(leader);
            if (sizes == null) {
                sizes = replicaSizes(survivors, leader, topic);
                sizesByNode.put(leader, sizes);
            }
            TopicPartition topicPartition = new TopicPartition(topic, partition.partition());
            lag += sizes.getOrDefault(topicPartition, 0L) - victimSizes.getOrDefault(topicPartition, 0L);
        }
        return lag;
    }

    private static Map<TopicPartition, Long> replicaSizes(Admin admin, int nodeId, String topic) throws Exception {
        Map<TopicPartition, Long> sizes = new HashMap<>();
        Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(nodeId)).descriptions().get(nodeId).get(30, TimeUnit.SECONDS);
        for (LogDirDescription dir : dirs.values()) {
            for (Map.Entry<TopicPartition, ReplicaInfo> replica : dir.replicaInfos().entrySet()) {
                if (replica.getKey().topic().equals(topic)) {
                    sizes.merge(replica.getKey(), replica.getValue().size(), Long::sum);
                }
            }
        }
        return sizes;
    }

    private void measureCatchUp(Admin survivors, String topic, int victim, long lagBytes, long restartNanos) throws Exception {
        long deadlineNanos = restartNanos + TimeUnit.MILLISECONDS.toNanos(BenchCluster.CONDITION_TIMEOUT_MS);
        long servingNanos = -1;
        TopicDescription last = null;
        while (System.nanoTime() < deadlineNanos) {
            if (servingNanos < 0 && answersDescribeLogDirs(survivors, victim)) {
                servingNanos = System.nanoTime();
            }
            last = BenchCluster.describeOrNull(survivors, topic);
            if (cluster.fullyReplicated(last)) {
                long isrNanos = System.nanoTime();
                if (servingNanos < 0) {
                    servingNanos = isrNanos;
                }
                cluster.result("catchup_lag_mb", lagBytes < 0 ? "UNKNOWN" : String.format(Locale.ROOT, "%.1f", lagBytes / 1e6));
                cluster.result("catchup_isr_s", BenchCluster.seconds(isrNanos - restartNanos));
                cluster.result("catchup_serving_s", BenchCluster.seconds(servingNanos - restartNanos));
                if (lagBytes > 0) {
                    cluster.result("catchup_mb_s", rate(lagBytes, Math.max(1, isrNanos - servingNanos)));
                    cluster.result("catchup_total_mb_s", rate(lagBytes, isrNanos - restartNanos));
                }
                return;
            }
            Thread.sleep(BenchCluster.POLL_INTERVAL_MS);
        }
        cluster.notMeasured("catchup_isr_s", "node" + victim + " not back in every ISR after " + BenchCluster.CONDITION_TIMEOUT_MS
            + " ms: " + BenchCluster.summary(last));
    }

    private static boolean answersDescribeLogDirs(Admin admin, int nodeId) {
        try {
            admin.describeLogDirs(List.of(nodeId), new DescribeLogDirsOptions().timeoutMs(1_000))
                .descriptions().get(nodeId).get(2, TimeUnit.SECONDS);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private static String rate(long bytes, long nanos) {
        return String.format(Locale.ROOT, "%.1f", bytes / 1e6 / (nanos / 1e9));
    }
}
