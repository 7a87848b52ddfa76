package io.strata.chaos.incident;

import io.strata.chaos.cluster.ChaosCluster;
import io.strata.chaos.net.RootNetwork;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The partition explosion incident: a 3-node cluster (combined roles, each node in its own network
 * namespace) holding {@code chaos.explosion.partitions} partitions at RF 3 (default 2,000 in CI; the
 * figures of docs/chaos-results.md are for 10,000), every replica on every node. Measured and written to
 * {@code target/chaos-runs/explosion/figures.properties}: the time to create them until every one has a
 * leader and a full ISR; each node's resident memory and open file descriptors; after a kill -9 of a node,
 * the time until every partition it led has another leader (and acks=all writes to a sample succeed);
 * the restarted node's time to ready and until it is back in every ISR. Asserts only outcomes (every
 * partition led, full ISRs again), each within a deadline; the durations are figures, not assertions.
 * Root only.
 */
class PartitionExplosionIncidentTest {
    private static final int RUN = 230;
    private static final int PARTITIONS = Integer.getInteger("chaos.explosion.partitions", 2_000);
    private static final int PARTITIONS_PER_TOPIC = 1_000;
    private static final Duration DEADLINE = Duration.ofMinutes(Math.max(3, PARTITIONS / 1_000));
    private static final long POLL_MS = 500;
    private static final int VICTIM = 1;

    private ChaosCluster cluster;
    private final Map<String, String> figures = new LinkedHashMap<>();

    @AfterEach
    void close() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void tenThousandPartitionsStartFailOverAndRecover() throws Exception {
        Assumptions.assumeTrue(RootNetwork.available(), RootNetwork.REASON);
        Path jar;
        try {
            jar = ChaosCluster.defaultJar();
        } catch (IllegalStateException e) {
            Assumptions.abort(e.getMessage());
            return;
        }
        Path runDir = Path.of("target", "chaos-runs", "explosion").toAbsolutePath();
        deleteRecursively(runDir);
        Files.createDirectories(runDir);
        figures.put("partitions", Integer.toString(PARTITIONS));
        cluster = new ChaosCluster(RUN, 3, runDir, jar, List.of("-Xms256m", "-Xmx1g"), Map.of(), 11);
        long startNs = System.nanoTime();
        cluster.start();
        cluster.awaitReady(Duration.ofSeconds(60));
        figures.put("empty_cluster_ready_ms", Long.toString(msSince(startNs)));

        List<String> topics = new ArrayList<>();
        try (Admin admin = Admin.create(adminProperties(cluster.bootstrapServers()))) {
            long createNs = System.nanoTime();
            List<NewTopic> newTopics = new ArrayList<>();
            for (int created = 0; created < PARTITIONS; created += PARTITIONS_PER_TOPIC) {
                String topic = "explosion-" + topics.size();
                topics.add(topic);
                newTopics.add(new NewTopic(topic, Math.min(PARTITIONS_PER_TOPIC, PARTITIONS - created), (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")));
            }
            admin.createTopics(newTopics).all().get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            figures.put("create_acked_ms", Long.toString(msSince(createNs)));
            awaitEveryPartition(admin, topics, info -> info.leader() != null && info.isr().size() == 3, "a leader and a full ISR");
            figures.put("create_to_all_full_isr_ms", Long.toString(msSince(createNs)));
            for (int node = 1; node <= 3; node++) {
                figures.put("node" + node + "_rss_mib", Long.toString(rssKib(cluster.pid(node)) / 1024));
                figures.put("node" + node + "_open_fds", Long.toString(openFds(cluster.pid(node))));
            }

            Map<String, TopicDescription> before = describe(admin, topics);
            long ledByVictim = before.values().stream().flatMap(d -> d.partitions().stream())
                .filter(p -> p.leader() != null && p.leader().id() == VICTIM).count();
            figures.put("partitions_led_by_victim", Long.toString(ledByVictim));
            assertThat(ledByVictim).as("partitions led by node %d", VICTIM).isPositive();

            long killNs = System.nanoTime();
            cluster.kill9(VICTIM);
            try (Admin survivors = Admin.create(adminProperties(cluster.address(2) + ":" + ChaosCluster.BROKER_PORT + ","
                    + cluster.address(3) + ":" + ChaosCluster.BROKER_PORT))) {
                awaitEveryPartition(survivors, topics, info -> info.leader() != null && info.leader().id() != VICTIM,
                    "a leader other than node " + VICTIM);
                figures.put("kill9_to_all_led_elsewhere_ms", Long.toString(msSince(killNs)));
                List<RecordMetadata> written = produceSample(topics);
                assertThat(written).hasSize(topics.size() * 10);
                figures.put("kill9_to_sample_acked_ms", Long.toString(msSince(killNs)));

                long restartNs = System.nanoTime();
                cluster.startNode(VICTIM);
                cluster.awaitReady(VICTIM, DEADLINE);
                figures.put("restart_to_ready_ms", Long.toString(msSince(restartNs)));
                awaitEveryPartition(survivors, topics, info -> info.isr().size() == 3, "node " + VICTIM + " back in the ISR");
                figures.put("restart_to_all_full_isr_ms", Long.toString(msSince(restartNs)));
                figures.put("node" + VICTIM + "_rss_after_restart_mib", Long.toString(rssKib(cluster.pid(VICTIM)) / 1024));
            }
        } finally {
            writeFigures(runDir.resolve("figures.properties"));
        }
    }

    private void awaitEveryPartition(Admin admin, List<String> topics, Predicate<TopicPartitionInfo> condition, String what) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        long missing = -1;
        while (System.nanoTime() < deadline) {
            try {
                missing = describe(admin, topics).values().stream().flatMap(d -> d.partitions().stream()).filter(condition.negate()).count();
                if (missing == 0) {
                    return;
                }
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                missing = -1; // a node being killed or elected: ask again
            }
            Thread.sleep(POLL_MS);
        }
        throw new AssertionError(missing + " partitions still without " + what + " after " + DEADLINE + "\nnode logs:\n"
            + cluster.logTail(1) + "\n" + cluster.logTail(2) + "\n" + cluster.logTail(3));
    }

    private static Map<String, TopicDescription> describe(Admin admin, List<String> topics) throws Exception {
        return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS);
    }

    /** Ten acks=all records to each topic's first partitions, through the survivors. */
    private List<RecordMetadata> produceSample(List<String> topics) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.address(2) + ":" + ChaosCluster.BROKER_PORT);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        List<RecordMetadata> written = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (String topic : topics) {
                for (int partition = 0; partition < 10; partition++) {
                    sends.add(producer.send(new ProducerRecord<>(topic, partition, null, "after-failover-" + partition)));
                }
            }
            for (Future<RecordMetadata> send : sends) {
                written.add(send.get(90, TimeUnit.SECONDS));
            }
        }
        return written;
    }

    private static Properties adminProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return properties;
    }

    private static long msSince(long startNs) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
    }

    /** VmRSS of a process, from /proc. */
    static long rssKib(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.UTF_8)) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no VmRSS in /proc/" + pid + "/status");
    }

    static long openFds(long pid) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return fds.count();
        }
    }

    private void writeFigures(Path file) throws IOException {
        StringBuilder text = new StringBuilder("# PartitionExplosionIncidentTest figures\n");
        figures.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
        Files.writeString(file, text.toString(), StandardCharsets.UTF_8);
        System.out.println(text);
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
