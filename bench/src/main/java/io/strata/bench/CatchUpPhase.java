package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
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
 *   <li>Reported: the bytes it is behind ({@code catchup_lag_mb}: its leaders' segment bytes minus
 *       its own, read from the nodes' log dirs, {@code --data-dirs}); restart → every
 *       partition's ISR holds it again ({@code catchup_isr_s}, and the lag over that time,
 *       {@code catchup_total_mb_s}, JVM start included); restart → the first new byte in its log
 *       dir ({@code catchup_first_byte_s}); first byte → all bytes ({@code catchup_copy_s}) and
 *       the copy rate over that time ({@code catchup_mb_s}, MB = 10^6 bytes). The log dir is
 *       sampled every {@link #DISK_POLL_INTERVAL_MS} ms, so a copy shorter than that reads as
 *       one interval.</li>
 * </ol>
 * A {@link FencingWatch} runs throughout ({@code catchup_live_fenced}).
 *
 * <p>Not thread-safe; the phase's thread runs it (the producer's callbacks only count).
 */
final class CatchUpPhase {
    private static final int PARTITIONS = 6;

    /** Pause between two samples of the restarted follower's log dir. */
    private static final long DISK_POLL_INTERVAL_MS = 20;

    private final BenchCluster cluster;
    private final ReplicaCheck replicas;

    CatchUpPhase(BenchCluster cluster) {
        this.cluster = cluster;
        this.replicas = new ReplicaCheck(cluster);
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
                measureCatchUp(survivors, topic, victim);
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

    /** Per partition, the bytes its leader holds: what the victim must reach. */
    private long[] leaderBytes(Admin survivors, String topic, int victim) throws IOException {
        TopicDescription description = BenchCluster.describeOrNull(survivors, topic);
        if (description == null) {
            throw new IllegalStateException("no description of " + topic + " after the produce");
        }
        long[] bytes = new long[PARTITIONS];
        for (TopicPartitionInfo partition : description.partitions()) {
            int leader = partition.leader() == null ? -1 : partition.leader().id();
            if (leader < 0 || leader == victim) {
                throw new IllegalStateException("partition " + partition.partition() + " of " + topic + " has leader " + leader
                    + " with node" + victim + " down");
            }
            bytes[partition.partition()] = replicas.diskBytes(leader, topic, partition.partition());
        }
        return bytes;
    }

    /**
     * Restarts the victim and samples its log dir every {@link #DISK_POLL_INTERVAL_MS} and the
     * ISR every {@link BenchCluster#POLL_INTERVAL_MS} until both are complete.
     */
    private void measureCatchUp(Admin survivors, String topic, int victim) throws Exception {
        long[] targetBytes = leaderBytes(survivors, topic, victim);
        long startBytes = 0;
        long target = 0;
        for (int partition = 0; partition < PARTITIONS; partition++) {
            startBytes += Math.min(targetBytes[partition], replicas.diskBytes(victim, topic, partition));
            target += targetBytes[partition];
        }
        long lagBytes = target - startBytes;
        long restartNanos = System.nanoTime();
        cluster.restart(victim);
        long deadlineNanos = restartNanos + TimeUnit.MILLISECONDS.toNanos(BenchCluster.CONDITION_TIMEOUT_MS);
        long firstByteNanos = -1;
        long copiedNanos = -1;
        long isrNanos = -1;
        long lastIsrPollNanos = 0;
        TopicDescription last = null;
        while ((copiedNanos < 0 || isrNanos < 0) && System.nanoTime() < deadlineNanos) {
            long bytes = 0;
            boolean complete = true;
            for (int partition = 0; partition < PARTITIONS; partition++) {
                long partitionBytes = Math.min(targetBytes[partition], replicas.diskBytes(victim, topic, partition));
                bytes += partitionBytes;
                complete &= partitionBytes >= targetBytes[partition];
            }
            long nowNanos = System.nanoTime();
            if (firstByteNanos < 0 && bytes > startBytes) {
                firstByteNanos = nowNanos;
            }
            if (copiedNanos < 0 && complete) {
                copiedNanos = nowNanos;
            }
            if (isrNanos < 0 && nowNanos - lastIsrPollNanos >= TimeUnit.MILLISECONDS.toNanos(BenchCluster.POLL_INTERVAL_MS)) {
                lastIsrPollNanos = nowNanos;
                last = BenchCluster.describeOrNull(survivors, topic);
                if (cluster.fullyReplicated(last)) {
                    isrNanos = System.nanoTime();
                }
            }
            Thread.sleep(DISK_POLL_INTERVAL_MS);
        }
        cluster.result("catchup_lag_mb", String.format(Locale.ROOT, "%.1f", lagBytes / 1e6));
        if (isrNanos < 0) {
            cluster.notMeasured("catchup_isr_s", "node" + victim + " not back in every ISR after " + BenchCluster.CONDITION_TIMEOUT_MS
                + " ms: " + BenchCluster.summary(last));
        } else {
            cluster.result("catchup_isr_s", BenchCluster.seconds(isrNanos - restartNanos));
            cluster.result("catchup_total_mb_s", rate(lagBytes, isrNanos - restartNanos));
        }
        if (firstByteNanos < 0 || copiedNanos < 0) {
            cluster.notMeasured("catchup_mb_s", "node" + victim + "'s log dir did not reach its leaders' " + target + " bytes (first byte "
                + (firstByteNanos < 0 ? "never" : "seen") + ")");
            return;
        }
        cluster.result("catchup_first_byte_s", BenchCluster.seconds(firstByteNanos - restartNanos));
        cluster.result("catchup_copy_s", BenchCluster.seconds(copiedNanos - firstByteNanos));
        cluster.result("catchup_mb_s", rate(lagBytes, Math.max(TimeUnit.MILLISECONDS.toNanos(DISK_POLL_INTERVAL_MS), copiedNanos - firstByteNanos)));
    }

    private static String rate(long bytes, long nanos) {
        return String.format(Locale.ROOT, "%.1f", bytes / 1e6 / (nanos / 1e9));
    }
}
