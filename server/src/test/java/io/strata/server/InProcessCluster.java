package io.strata.server;

import io.strata.common.Time;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.protocol.Uuids;
import io.strata.server.config.ServerConfig;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringJoiner;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A cluster of {@code nodes} combined broker,controller Strata nodes in this JVM, ids 1 to
 * {@code nodes}, every one a voter of the metadata quorum: each its own data directory under
 * {@code dir}, a PLAINTEXT listener on an ephemeral port (advertised as bound) and a CONTROLLER
 * listener on a port picked free beforehand (the voters' addresses must be known before any node
 * starts). The nodes start concurrently, since each start-up waits for a quorum leader.
 *
 * <p>Not thread-safe: one test thread starts, uses and closes it.
 */
final class InProcessCluster implements AutoCloseable {
    /** How long the nodes get to form the quorum, register and be unfenced. */
    static final long START_TIMEOUT_MS = 60_000;

    private final List<StrataServer> servers = new ArrayList<>();
    private final List<ServerConfig> configs = new ArrayList<>();

    private InProcessCluster() {
    }

    /**
     * Starts {@code nodes} nodes with {@code overrides} on top of the cluster settings (e.g. {@code
     * offsets.topic.num.partitions}); closes the ones that started if any fails.
     */
    static InProcessCluster start(Path dir, int nodes, Map<String, String> overrides) throws Exception {
        return start(dir, nodes, overrides, id -> Map.of());
    }

    /** {@link #start(Path, int, Map)} with {@code perNode.apply(id)} over each node's settings (e.g. its {@code broker.rack}). */
    static InProcessCluster start(Path dir, int nodes, Map<String, String> overrides,
                                  java.util.function.IntFunction<Map<String, String>> perNode) throws Exception {
        List<Integer> controllerPorts = new ArrayList<>();
        for (int id = 1; id <= nodes; id++) {
            controllerPorts.add(freePort());
        }
        StringJoiner voters = new StringJoiner(",");
        for (int id = 1; id <= nodes; id++) {
            voters.add(id + "@127.0.0.1:" + controllerPorts.get(id - 1));
        }
        // A fixed seed: the id only has to be a valid one shared by the nodes (each cluster has fresh directories).
        Random random = new Random(nodes * 31L + dir.hashCode());
        String clusterId = Uuids.toBase64(new UUID(random.nextLong() & ~(1L << 63), random.nextLong()));
        InProcessCluster cluster = new InProcessCluster();
        for (int id = 1; id <= nodes; id++) {
            Map<String, String> properties = new HashMap<>();
            properties.put("process.roles", "broker,controller");
            properties.put("node.id", Integer.toString(id));
            properties.put("listeners", "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:" + controllerPorts.get(id - 1));
            properties.put("advertised.listeners", "PLAINTEXT://127.0.0.1:0");
            properties.put("controller.listener.names", "CONTROLLER");
            properties.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            properties.put("controller.quorum.voters", voters.toString());
            properties.put("cluster.id", clusterId);
            properties.put("log.dirs", dir.resolve("node-" + id).toString());
            properties.put("metrics.listener", "http://127.0.0.1:0");
            properties.put("num.io.threads", "2");
            properties.put("num.network.threads", "1");
            // The nodes of a test stop together: a controlled shutdown would wait for a quorum that is stopping as well.
            properties.put("controlled.shutdown.enable", "false");
            properties.putAll(overrides);
            properties.putAll(perNode.apply(id));
            ServerConfig config = ServerConfig.fromMap(properties);
            cluster.configs.add(config);
            cluster.servers.add(new StrataServer(config, Time.SYSTEM));
        }
        ExecutorService starters = Executors.newFixedThreadPool(nodes);
        try {
            List<Future<?>> started = new ArrayList<>();
            for (StrataServer server : cluster.servers) {
                started.add(starters.submit(() -> {
                    server.startup();
                    return null;
                }));
            }
            for (Future<?> future : started) {
                future.get(START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        } catch (Exception e) {
            cluster.close();
            throw e;
        } finally {
            starters.shutdownNow();
        }
        return cluster;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    /** Every node's PLAINTEXT address, for {@code bootstrap.servers}. */
    String bootstrap() {
        StringJoiner joiner = new StringJoiner(",");
        servers.forEach(server -> joiner.add("127.0.0.1:" + server.boundPort("PLAINTEXT")));
        return joiner.toString();
    }

    /**
     * Stops node {@code id} if it runs and starts it again on the same directories and controller port
     * (its PLAINTEXT port is a new ephemeral one); returns once its start-up finished.
     */
    StrataServer restart(int id) throws Exception {
        servers.get(id - 1).close();
        StrataServer restarted = new StrataServer(configs.get(id - 1), Time.SYSTEM);
        servers.set(id - 1, restarted);
        restarted.startup();
        return restarted;
    }

    /** Node {@code id} (1-based). */
    StrataServer server(int id) {
        return servers.get(id - 1);
    }

    int size() {
        return servers.size();
    }

    /** The leader of {@code topic}-{@code partition} in node 1's image, or -1 if the image has no such partition or it has no leader. */
    int leader(String topic, int partition) {
        MetadataImage image = server(1).metadata().image();
        TopicImage topicImage = image.topic(topic);
        PartitionRegistration registration = topicImage == null ? null : topicImage.partition(partition);
        return registration == null || !registration.hasLeader() ? -1 : registration.leader();
    }

    /**
     * Waits until every node's image has {@code partitions} partitions of {@code topic}, each with
     * the same leader everywhere, and that leader's node opened the partition as its leader.
     */
    void awaitLeaders(String topic, int partitions, long timeoutMs) throws InterruptedException {
        awaitCondition(() -> {
            for (int partition = 0; partition < partitions; partition++) {
                int leader = leader(topic, partition);
                if (leader < 0) {
                    return false;
                }
                for (StrataServer server : servers) {
                    TopicImage image = server.metadata().image().topic(topic);
                    PartitionRegistration registration = image == null ? null : image.partition(partition);
                    if (registration == null || registration.leader() != leader) {
                        return false;
                    }
                }
                io.strata.server.replica.Partition opened = server(leader).replicaManager()
                    .partition(new io.strata.storage.TopicPartition(topic, partition));
                if (opened == null || opened.leaderId() != leader) {
                    return false;
                }
            }
            return true;
        }, timeoutMs, "the leaders of " + partitions + " partitions of " + topic + " on every node");
    }

    static void awaitCondition(BooleanSupplier condition, long timeoutMs, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeoutMs + " ms waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Closes every node, concurrently (a controlled shutdown needs the quorum, which the other nodes form). */
    @Override
    public void close() {
        ExecutorService stoppers = Executors.newFixedThreadPool(Math.max(1, servers.size()));
        try {
            List<Future<?>> stopped = new ArrayList<>();
            for (StrataServer server : servers) {
                stopped.add(stoppers.submit(server::close));
            }
            for (Future<?> future : stopped) {
                try {
                    future.get(START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    // keep closing the others; the test reports its own failure
                }
            }
        } finally {
            stoppers.shutdownNow();
        }
    }
}
