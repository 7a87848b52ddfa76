package io.strata.server;

import io.strata.common.Time;
import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.TopicPartition;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A broker whose log directory fills up for real: a 2 MiB tmpfs (root only; skipped elsewhere).
 * With its only log directory full the broker halts (the halter is observed instead); with two
 * (JBOD) the full one goes offline, its partition answers KAFKA_STORAGE_ERROR, the other keeps
 * working, DescribeLogDirs shows the failure and the controller takes the replica offline.
 */
class LogDirFailureServerTest {
    private static final long TIMEOUT_MS = 30_000;
    /** No index entries (so no page of a memory-mapped index is first touched on the full tmpfs, which would be a SIGBUS). */
    private static final Map<String, String> TOPIC_CONFIGS = Map.of("index.interval.bytes", Integer.toString(Integer.MAX_VALUE));

    @TempDir
    Path root;
    private final List<Path> mounts = new ArrayList<>();
    private final List<String> halts = new CopyOnWriteArrayList<>();
    private TestBroker broker;

    @AfterEach
    void tearDown() throws Exception {
        if (broker != null) {
            broker.close();
        }
        for (Path mount : mounts) {
            run("umount", mount.toString());
        }
    }

    @Test
    void brokerWhoseOnlyLogDirectoryFillsUpHalts() throws Exception {
        Path full = tmpfs("full");
        broker = start(Map.of("log.dirs", full.toString(), "metadata.log.dir", root.resolve("metadata").toString()));
        broker.createTopic("orders", 1, TOPIC_CONFIGS);

        fillUntilStorageError(0);

        waitFor(() -> !halts.isEmpty(), "the broker halts");
        assertThat(halts.get(0)).contains("every log directory failed").contains(full.toString());
        assertThat(broker.server().replicaManager().logManager().onlineLogDirs()).isEmpty();
    }

    @Test
    void fullDirectoryOfJbodBrokerGoesOfflineAndTheOtherKeepsWorking() throws Exception {
        Path healthy = root.resolve("healthy");
        Path full = tmpfs("full");
        broker = start(Map.of("log.dirs", healthy + "," + full, "metrics.enabled", "true", "metrics.listener", "http://127.0.0.1:0"));
        broker.createTopic("orders", 2, TOPIC_CONFIGS);
        ReplicaManager replicas = broker.server().replicaManager();
        int onFull = partitionIn(replicas, full);
        int onHealthy = 1 - onFull;
        assertThat(partitionIn(replicas, healthy)).isEqualTo(onHealthy);

        fillUntilStorageError(onFull);

        TopicPartition offline = new TopicPartition("orders", onFull);
        waitFor(() -> replicas.isOffline(offline), "the partition in the full directory goes offline");
        assertThat(replicas.leadershipError(offline)).isEqualTo(ErrorCode.KAFKA_STORAGE_ERROR);
        broker.produce("orders", onHealthy, 5); // acks=all on the healthy directory still works
        assertThat(broker.log("orders", onHealthy).logEndOffset()).isEqualTo(5L);

        Map<String, LogDirDescription> dirs = broker.admin().describeLogDirs(List.of(1)).allDescriptions().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
            .get(1);
        LogDirDescription fullDescription = dirs.get(full.toAbsolutePath().normalize().toString());
        assertThat(fullDescription.error()).isInstanceOf(KafkaStorageException.class);
        assertThat(fullDescription.replicaInfos()).isEmpty();
        LogDirDescription healthyDescription = dirs.get(healthy.toAbsolutePath().normalize().toString());
        assertThat(healthyDescription.error()).isNull();
        assertThat(healthyDescription.replicaInfos()).containsKey(new org.apache.kafka.common.TopicPartition("orders", onHealthy));

        // The controller learnt it (OfflineLogDirs, then AssignReplicasToDirs): this broker no longer leads the partition.
        waitFor(() -> {
            PartitionRegistration registration = replicas.image().topic("orders").partition(onFull);
            return registration.leader() != 1;
        }, "the controller takes the offline replica's leadership away");
        assertThat(halts).as("the metadata directory and another log directory are healthy: no halt").isEmpty();
        String metrics = scrapeMetrics();
        assertThat(metrics).contains("kafka_log_logmanager_offlinelogdirectorycount 1")
            .contains("kafka_server_replicamanager_offlinereplicacount 1")
            .contains("kafka_log_logmanager_logdirectoryoffline{log_directory=\"" + full.toAbsolutePath().normalize() + "\"} 1")
            .contains("kafka_log_logmanager_logdirectoryoffline{log_directory=\"" + healthy.toAbsolutePath().normalize() + "\"} 0");
        assertThat(replicas.logManager().logDirFailureChannel().offlineLogDirs()).containsExactly(full.toAbsolutePath().normalize());
    }

    private String scrapeMetrics() throws Exception {
        java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
        java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(
            java.net.URI.create("http://127.0.0.1:" + broker.server().metricsPort() + "/metrics")).build();
        return client.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    }

    private TestBroker start(Map<String, String> overrides) throws Exception {
        return new TestBroker(root.resolve("unused"), overrides, Time.SYSTEM, server -> server.setHalter((status, reason) -> halts.add(reason)));
    }

    /** Writes 64 KiB records to the partition (acks=1, no retries) until the broker answers KAFKA_STORAGE_ERROR. */
    private void fillUntilStorageError(int partition) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "1");
        properties.put(ProducerConfig.RETRIES_CONFIG, "0");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        byte[] value = new byte[64 * 1024];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            // 2 MiB of tmpfs holds fewer than 32 such records; 200 is a bound, not a goal.
            for (int i = 0; i < 200; i++) {
                try {
                    producer.send(new ProducerRecord<>("orders", partition, null, value)).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(KafkaStorageException.class);
                    return;
                }
            }
        }
        throw new AssertionError("200 records of 64 KiB fit on a 2 MiB tmpfs: no KAFKA_STORAGE_ERROR");
    }

    private static int partitionIn(ReplicaManager replicas, Path dir) {
        for (int partition = 0; partition < 2; partition++) {
            Path parent = replicas.partition(new TopicPartition("orders", partition)).log().dir().getParent();
            if (parent.toAbsolutePath().normalize().equals(dir.toAbsolutePath().normalize())) {
                return partition;
            }
        }
        throw new AssertionError("no partition of orders in " + dir);
    }

    /** A 2 MiB tmpfs mounted at {@code root/name}; skips the test unless running as root with mount available. */
    private Path tmpfs(String name) throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "mounting a tmpfs needs root (CI runs as root)");
        Path dir = Files.createDirectories(root.resolve(name));
        Assumptions.assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir.toString()) == 0,
            "mount -t tmpfs failed (no CAP_SYS_ADMIN in this container?)");
        mounts.add(dir);
        return dir;
    }

    private static int run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return -1;
        }
        if (process.exitValue() != 0) {
            System.err.println(String.join(" ", command) + ": " + output);
        }
        return process.exitValue();
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(20);
        }
    }
}
