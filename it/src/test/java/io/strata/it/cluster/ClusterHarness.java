package io.strata.it.cluster;

import io.strata.it.ServerProcessMain;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A Strata cluster of real node processes on 127.0.0.1 for tests: every node is a child JVM
 * running {@link ServerProcessMain} ({@code -Xmx256m}, this JVM's class path), with its files
 * under one directory (a test's {@code @TempDir}):
 * <pre>
 *   DIR/logback.xml            the children's logging (io.strata at INFO, the rest at WARN)
 *   DIR/node-ID/data/          the node's log.dirs (formatted with the cluster's id on first start)
 *   DIR/node-ID/server.log     its stdout and stderr, appended to across restarts
 * </pre>
 * Two layouts: {@link #combined} (every node {@code process.roles=broker,controller} and a voter)
 * and {@link #split} (controller-only voters 1..C, broker-only nodes C+1..C+B). Every port is
 * picked once, up front, and kept across restarts: a combined node has a PLAINTEXT and a
 * CONTROLLER listener, a controller only CONTROLLER, a broker only PLAINTEXT. The voters are
 * {@code id@127.0.0.1:controllerPort}; all nodes share one {@code cluster.id}.
 *
 * <p>Timings are shortened where Kafka allows, so that fencing is seen within seconds
 * ({@link #SESSION_TIMEOUT_MS}); the quorum keeps Kafka's election and fetch timeouts, because
 * on a loaded two-core CI machine shorter ones elect spuriously.
 *
 * <p>Ready means the child printed {@code PORT <port>} (ServerProcessMain: {@code startup()}
 * returned). Nodes are started together and awaited together, since a node of a real quorum may
 * not finish starting before a majority runs.
 *
 * <p>Not thread-safe, except {@link Node#isAlive} and the read-only accessors: one test thread
 * starts, kills and restarts nodes. It kills only the processes it started; {@link #close} kills
 * every one still running.
 */
public final class ClusterHarness implements AutoCloseable {
    /** broker.session.timeout.ms of every node: a killed broker is fenced this long after its last heartbeat. */
    public static final int SESSION_TIMEOUT_MS = 3000;
    /** broker.heartbeat.interval.ms: well under the session timeout, as Kafka's 2000 is under 9000. */
    public static final int HEARTBEAT_INTERVAL_MS = 500;
    /** How long {@link #start} and {@link Node#restart} wait for every started node to report ready. */
    public static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    /** How long a graceful {@link Node#stop} may take before the node is killed (controlled shutdown moves leaders first). */
    public static final Duration STOP_GRACE = Duration.ofSeconds(20);
    /** Lines of each node's log shown when a test fails. */
    public static final int LOG_TAIL_LINES = 40;
    /** Partitions of __consumer_offsets and __transaction_state: few, so that a start is cheap. */
    public static final int INTERNAL_TOPIC_PARTITIONS = 6;

    private final Path dir;
    private final String clusterId;
    private final Map<String, String> overrides;
    /** Settings of single nodes (e.g. {@code broker.rack}), applied over {@link #overrides}. */
    private final Map<Integer, Map<String, String>> nodeOverrides = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<Integer, Node> nodes = new TreeMap<>();
    /** KIP-853: controller.quorum.bootstrap.servers instead of voters; node 1 formatted --standalone, the other controllers --no-initial-controllers. */
    private boolean dynamic;

    private ClusterHarness(Path dir, int controllers, int brokers, boolean combined, Map<String, String> overrides) {
        this.dir = dir;
        this.clusterId = Uuid.randomUuid().toString();
        this.overrides = Map.copyOf(overrides);
        int total = combined ? controllers : controllers + brokers;
        List<Integer> ports = freePorts(combined ? 2 * total : total);
        int next = 0;
        for (int id = 1; id <= total; id++) {
            boolean controller = combined || id <= controllers;
            boolean broker = combined || id > controllers;
            int brokerPort = broker ? ports.get(next++) : -1;
            int controllerPort = controller ? ports.get(next++) : -1;
            nodes.put(id, new Node(id, broker, controller, brokerPort, controllerPort));
        }
    }

    /** {@code count} combined broker,controller nodes, all voters. */
    public static ClusterHarness combined(Path dir, int count) {
        return combined(dir, count, Map.of());
    }

    /** {@code count} combined nodes with {@code overrides} applied to every node's configuration. */
    public static ClusterHarness combined(Path dir, int count, Map<String, String> overrides) {
        if (count < 1) {
            throw new IllegalArgumentException("a cluster needs at least one node: count=" + count);
        }
        return new ClusterHarness(dir, count, 0, true, overrides);
    }

    /** {@code controllers} controller-only voters (ids 1..controllers) and {@code brokers} broker-only nodes after them. */
    public static ClusterHarness split(Path dir, int controllers, int brokers) {
        return split(dir, controllers, brokers, Map.of());
    }

    public static ClusterHarness split(Path dir, int controllers, int brokers, Map<String, String> overrides) {
        if (controllers < 1 || brokers < 1) {
            throw new IllegalArgumentException("a split cluster needs controllers and brokers: controllers=" + controllers + " brokers=" + brokers);
        }
        return new ClusterHarness(dir, controllers, brokers, false, overrides);
    }

    /**
     * A dynamic quorum (KIP-853): {@code controllers} controller-only nodes and {@code brokers} brokers,
     * all with {@code controller.quorum.bootstrap.servers} (every controller) and no voters; node 1 is
     * formatted {@code --standalone} (the only voter), the other controllers {@code --no-initial-controllers}
     * (observers until they are added), the brokers plainly, before the first start.
     */
    public static ClusterHarness dynamicSplit(Path dir, int controllers, int brokers) {
        ClusterHarness harness = split(dir, controllers, brokers, Map.of());
        harness.dynamic = true;
        return harness;
    }

    /**
     * Settings for node {@code id} only, over the cluster-wide overrides (e.g. its {@code broker.rack});
     * they take effect at the node's next (re)start.
     */
    public ClusterHarness nodeConfig(int id, Map<String, String> settings) {
        if (!nodes.containsKey(id)) {
            throw new IllegalArgumentException("no node " + id + " in the cluster: nodes=" + nodes.keySet());
        }
        nodeOverrides.put(id, Map.copyOf(settings));
        return this;
    }

    /** Starts every node and waits until all of them report ready; on failure the exception carries every node's log tail. */
    public ClusterHarness start() throws IOException, InterruptedException {
        Files.createDirectories(dir);
        if (dynamic) {
            for (Node node : nodes.values()) {
                node.formatIfNeeded();
            }
        }
        Files.writeString(dir.resolve("logback.xml"), LOGBACK, StandardCharsets.UTF_8);
        long startNanos = System.nanoTime();
        for (Node node : nodes.values()) {
            node.launch();
        }
        awaitAllReady(nodes.values());
        System.out.printf("cluster of %d nodes (%s) ready in %d ms in %s%n", nodes.size(), voters(),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), dir);
        return this;
    }

    private void awaitAllReady(Iterable<Node> starting) throws InterruptedException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        for (Node node : starting) {
            while (!node.reportedReady()) {
                if (!node.isAlive()) {
                    throw new AssertionError("node " + node.id + " exited with " + node.process.exitValue() + " before it was ready\n" + logTails());
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("node " + node.id + " not ready within " + READY_TIMEOUT + "\n" + logTails());
                }
                Thread.sleep(50);
            }
        }
    }

    public String clusterId() {
        return clusterId;
    }

    public Path dir() {
        return dir;
    }

    public Node node(int id) {
        Node node = nodes.get(id);
        if (node == null) {
            throw new IllegalArgumentException("no node " + id + " in this cluster: ids=" + nodes.keySet());
        }
        return node;
    }

    public List<Node> nodes() {
        return List.copyOf(nodes.values());
    }

    /** The nodes with the broker role. */
    public List<Node> brokers() {
        return nodes.values().stream().filter(Node::isBroker).toList();
    }

    /** The nodes with the controller role: the voters. */
    public List<Node> controllers() {
        return nodes.values().stream().filter(Node::isController).toList();
    }

    /** Every broker's PLAINTEXT address, comma-separated. */
    public String bootstrapServers() {
        return join(brokers().stream().map(Node::bootstrap).toList());
    }

    /** The brokers still running, comma-separated: what a client that must not wait for a dead node bootstraps from. */
    public String liveBootstrapServers() {
        return join(brokers().stream().filter(Node::isAlive).map(Node::bootstrap).toList());
    }

    /** Every controller's CONTROLLER address, comma-separated ({@code bootstrap.controllers}, KIP-919). */
    public String controllerBootstrapServers() {
        return join(controllers().stream().map(node -> "127.0.0.1:" + node.controllerPort).toList());
    }

    /** The voters as written to every node: {@code id@127.0.0.1:port,...}. */
    public String voters() {
        return join(controllers().stream().map(node -> node.id + "@127.0.0.1:" + node.controllerPort).toList());
    }

    /** An Admin client bootstrapped from every live broker. The caller closes it. */
    public Admin admin() {
        return admin(liveBootstrapServers());
    }

    /** An Admin client bootstrapped from {@code bootstrap} only (one node's listener). The caller closes it. */
    public static Admin admin(String bootstrap) {
        Properties properties = clientProperties(bootstrap);
        return Admin.create(properties);
    }

    /** An Admin client talking to the controllers directly ({@code bootstrap.controllers}, KIP-919). The caller closes it. */
    public Admin controllerAdmin() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, controllerBootstrapServers());
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(properties);
    }

    /** Client settings for {@code bootstrap} with timeouts short enough to retry within a test's deadline. */
    public static Properties clientProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        properties.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        properties.put(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG, "500");
        properties.put(AdminClientConfig.METADATA_MAX_AGE_CONFIG, "1000");
        return properties;
    }

    /** The metadata quorum as a live broker describes it (DescribeQuorum through the broker bootstrap). */
    public QuorumInfo describeQuorum() throws Exception {
        try (Admin admin = admin()) {
            return admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS);
        }
    }

    /** The metadata quorum as the controllers describe it (DescribeQuorum through {@code bootstrap.controllers}). */
    public QuorumInfo describeQuorumThroughControllers() throws Exception {
        try (Admin admin = controllerAdmin()) {
            return admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Waits until a live voter leads the quorum, as seen through the broker bootstrap (falling
     * back to the controllers' listeners when no broker answers, as in a split cluster with every
     * broker down), and returns its id.
     */
    public int awaitActiveController(Duration timeout) throws InterruptedException {
        int[] leader = {-1};
        waitUntil(() -> {
            leader[0] = activeControllerOrMinusOne();
            return leader[0] >= 0 && nodes.containsKey(leader[0]) && node(leader[0]).isController() && node(leader[0]).isAlive();
        }, timeout, "a live voter leads the metadata quorum");
        return leader[0];
    }

    /** The quorum leader's id as a live broker (else a controller) reports it now, or -1 if none answers or there is none. */
    public int activeControllerOrMinusOne() {
        try {
            if (!liveBootstrapServers().isEmpty()) {
                return describeQuorum().leaderId();
            }
            return describeQuorumThroughControllers().leaderId();
        } catch (Exception e) {
            return -1;
        }
    }

    /** A condition polled by {@link #waitUntil}; may throw, which counts as not yet. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /**
     * Polls {@code condition} (every 100 ms) until it holds; at the deadline fails with
     * {@code description} and the last exception the condition threw, if any.
     */
    public static void waitUntil(Condition condition, Duration timeout, String description) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (true) {
            try {
                if (condition.holds()) {
                    return;
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() > deadline) {
                AssertionError failure = new AssertionError("timed out after " + timeout + " waiting until " + description
                    + (last == null ? "" : "; last error: " + last));
                if (last != null) {
                    failure.initCause(last);
                }
                throw failure;
            }
            Thread.sleep(100);
        }
    }

    /** The last {@link #LOG_TAIL_LINES} lines of every node's log, each under a header naming the node and whether it runs. */
    public String logTails() {
        StringBuilder text = new StringBuilder();
        for (Node node : nodes.values()) {
            text.append("===== node ").append(node.id).append(" (").append(node.roles()).append(", ")
                .append(node.process == null ? "never started" : node.isAlive() ? "running, pid " + node.process.pid()
                    : "exited " + node.process.exitValue()).append(") ").append(node.logFile()).append(" =====\n")
                .append(node.logTail(LOG_TAIL_LINES)).append('\n');
        }
        return text.toString();
    }

    /** Kills every node still running (SIGKILL) and waits for them to go. */
    @Override
    public void close() {
        for (Node node : nodes.values()) {
            node.kill9();
        }
    }

    /** One node: its fixed ports, its directory and its current process (replaced on restart). */
    public final class Node {
        private final int id;
        private final boolean broker;
        private final boolean controller;
        private final int brokerPort;
        private final int controllerPort;
        private volatile Process process;
        /** Length of the log file when the current process started: its PORT line comes after it. */
        private long logOffsetAtLaunch;

        private Node(int id, boolean broker, boolean controller, int brokerPort, int controllerPort) {
            this.id = id;
            this.broker = broker;
            this.controller = controller;
            this.brokerPort = brokerPort;
            this.controllerPort = controllerPort;
        }

        public int id() {
            return id;
        }

        public boolean isBroker() {
            return broker;
        }

        public boolean isController() {
            return controller;
        }

        public String roles() {
            return broker && controller ? "broker,controller" : broker ? "broker" : "controller";
        }

        /** The PLAINTEXT port (brokers only). */
        public int brokerPort() {
            if (!broker) {
                throw new IllegalStateException("node " + id + " is controller-only: no broker listener");
            }
            return brokerPort;
        }

        /** The CONTROLLER port (controllers only). */
        public int controllerPort() {
            if (!controller) {
                throw new IllegalStateException("node " + id + " is broker-only: no controller listener");
            }
            return controllerPort;
        }

        /** {@code 127.0.0.1:brokerPort}: this node alone as a client's bootstrap. */
        public String bootstrap() {
            return "127.0.0.1:" + brokerPort();
        }

        public Path dataDir() {
            return dir.resolve("node-" + id).resolve("data");
        }

        public Path logFile() {
            return dir.resolve("node-" + id).resolve("server.log");
        }

        public boolean isAlive() {
            Process current = process;
            return current != null && current.isAlive();
        }

        /**
         * Waits up to {@code timeout} for the current process to end by itself (e.g. a halt) and
         * returns its exit status; throws if it is still running then or none was started.
         */
        public int awaitExit(Duration timeout) {
            Process current = process;
            if (current == null) {
                throw new IllegalStateException("node " + id + " was never started");
            }
            if (!waitForExit(current, timeout)) {
                throw new AssertionError("node " + id + " (process " + current.pid() + ") still runs after " + timeout);
            }
            return current.exitValue();
        }

        /** The process id of the current process, or -1 if none was started. */
        public long pid() {
            Process current = process;
            return current == null ? -1 : current.pid();
        }

        /** This node's configuration, as key=value settings for ServerProcessMain. */
        Map<String, String> config() {
            Map<String, String> config = new LinkedHashMap<>();
            config.put("node.id", Integer.toString(id));
            config.put("process.roles", roles());
            List<String> listeners = new ArrayList<>();
            if (broker) {
                listeners.add("PLAINTEXT://127.0.0.1:" + brokerPort);
            }
            if (controller) {
                listeners.add("CONTROLLER://127.0.0.1:" + controllerPort);
            }
            config.put("listeners", String.join(",", listeners));
            if (broker) {
                config.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
                config.put("inter.broker.listener.name", "PLAINTEXT");
            }
            config.put("controller.listener.names", "CONTROLLER");
            config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            if (dynamic) {
                config.put("controller.quorum.bootstrap.servers", controllerBootstrapServers());
            } else {
                config.put("controller.quorum.voters", voters());
            }
            config.put("cluster.id", clusterId);
            config.put("log.dirs", dataDir().toAbsolutePath().toString());
            config.put("metrics.listener", "http://127.0.0.1:0");
            config.put("broker.session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS));
            config.put("broker.heartbeat.interval.ms", Integer.toString(HEARTBEAT_INTERVAL_MS));
            config.put("initial.broker.registration.timeout.ms", "60000");
            config.put("offsets.topic.num.partitions", Integer.toString(INTERNAL_TOPIC_PARTITIONS));
            config.put("offsets.topic.replication.factor", "1");
            config.put("transaction.state.log.num.partitions", Integer.toString(INTERNAL_TOPIC_PARTITIONS));
            config.put("transaction.state.log.replication.factor", "1");
            config.put("transaction.state.log.min.isr", "1");
            config.put("group.initial.rebalance.delay.ms", "0");
            config.putAll(overrides);
            config.putAll(nodeOverrides.getOrDefault(id, Map.of()));
            return config;
        }

        /** {@code strata format} of a dynamic cluster's node (in this JVM), once. */
        void formatIfNeeded() throws IOException {
            if (Files.exists(dataDir().resolve("meta.properties"))) {
                return;
            }
            io.strata.server.StorageFormatter.Mode mode = !controller ? io.strata.server.StorageFormatter.Mode.STATIC
                : id == 1 ? io.strata.server.StorageFormatter.Mode.STANDALONE : io.strata.server.StorageFormatter.Mode.NO_INITIAL_CONTROLLERS;
            io.strata.server.StorageFormatter.format(io.strata.server.config.ServerConfig.load(null, config()), clusterId, mode, List.of(), false,
                System.currentTimeMillis());
        }

        private void launch() throws IOException {
            if (isAlive()) {
                throw new IllegalStateException("node " + id + " is already running as process " + process.pid());
            }
            Files.createDirectories(dataDir());
            Path log = logFile();
            if (!Files.exists(log)) {
                Files.createFile(log);
            }
            logOffsetAtLaunch = Files.size(log);
            Files.writeString(log, "===== " + java.time.Instant.now() + " starting node " + id + " (" + roles() + ")\n",
                StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
            List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-Xmx256m",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlogback.configurationFile=" + dir.resolve("logback.xml").toAbsolutePath(),
                "-cp", System.getProperty("java.class.path"), ServerProcessMain.class.getName()));
            config().forEach((key, value) -> command.add(key + "=" + value));
            process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        }

        private boolean reportedReady() {
            try (var channel = Files.newByteChannel(logFile())) {
                channel.position(logOffsetAtLaunch);
                String text = new String(java.nio.channels.Channels.newInputStream(channel).readAllBytes(), StandardCharsets.UTF_8);
                return text.lines().anyMatch(line -> line.startsWith("PORT "));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Starts this (stopped or killed) node again on the same ports and data and waits until it is ready. */
        public void start() throws IOException, InterruptedException {
            long startNanos = System.nanoTime();
            launch();
            awaitAllReady(List.of(this));
            System.out.printf("node %d ready in %d ms%n", id, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        }

        /** Starts this node without waiting for it (a node of a quorum that lost its majority does not finish starting). */
        public void launchWithoutWaiting() throws IOException {
            launch();
        }

        /** Waits until this node, launched earlier, reports ready. */
        public void awaitReady() throws InterruptedException {
            awaitAllReady(List.of(this));
        }

        /**
         * kill -9: {@link Process#destroyForcibly} is SIGKILL on Linux (ProcessImpl.destroy(true)
         * → kill(pid, SIGKILL)); no shutdown hook, no controlled shutdown, unflushed data lost.
         * Waits until the process is gone. Does nothing if it is not running.
         */
        public void kill9() {
            Process current = process;
            if (current == null || !current.isAlive()) {
                return;
            }
            current.destroyForcibly();
            if (!waitForExit(current, Duration.ofSeconds(30))) {
                throw new AssertionError("node " + id + " (process " + current.pid() + ") still runs 30 s after SIGKILL");
            }
            // 128 + 9: the child died of SIGKILL, not of a shutdown of its own.
            if (current.exitValue() != 128 + 9) {
                throw new AssertionError("node " + id + " exited with " + current.exitValue() + ", not 137 (SIGKILL)");
            }
        }

        /**
         * SIGSTOP: the process stops answering but keeps its sockets open, as in a long GC pause
         * or a stuck disk (a killed process's sockets close at once). {@link #resume} continues it;
         * {@link #kill9} and {@link #stop} work on a paused process too (stop resumes it first).
         */
        public void pause() {
            signal("STOP");
        }

        /** SIGCONT: continues a process {@link #pause paused} before. */
        public void resume() {
            signal("CONT");
        }

        private void signal(String name) {
            Process current = process;
            if (current == null || !current.isAlive()) {
                throw new AssertionError("node " + id + " is not running: cannot send SIG" + name);
            }
            try {
                Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(current.pid())).redirectErrorStream(true).start();
                if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                    throw new AssertionError("kill -" + name + " " + current.pid() + " failed");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted sending SIG" + name, e);
            }
        }

        /**
         * Graceful stop: closes the child's stdin, on which ServerProcessMain closes the server
         * (controlled shutdown) and exits; killed after {@link #STOP_GRACE}.
         */
        public void stop() {
            Process current = process;
            if (current == null || !current.isAlive()) {
                return;
            }
            if (current.isAlive()) {
                signalQuietly(current, "CONT"); // a paused child would never read its closed stdin
            }
            try {
                current.getOutputStream().close();
            } catch (IOException e) {
                // The pipe is already gone: the child is exiting anyway.
            }
            if (!waitForExit(current, STOP_GRACE)) {
                current.destroyForcibly();
                waitForExit(current, Duration.ofSeconds(30));
                throw new AssertionError("node " + id + " did not stop within " + STOP_GRACE + "; killed\n" + logTail(LOG_TAIL_LINES));
            }
        }

        /** Graceful stop, then start on the same ports and data. */
        public void restart() throws IOException, InterruptedException {
            stop();
            start();
        }

        private static void signalQuietly(Process current, String name) {
            try {
                new ProcessBuilder("kill", "-" + name, Long.toString(current.pid())).start().waitFor(10, TimeUnit.SECONDS);
            } catch (IOException e) {
                // the process is gone already
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private boolean waitForExit(Process current, Duration timeout) {
            try {
                return current.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return !current.isAlive();
            }
        }

        String logTail(int lines) {
            try {
                List<String> all = Files.readAllLines(logFile(), StandardCharsets.UTF_8);
                return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
            } catch (IOException | UncheckedIOException e) {
                return "(cannot read " + logFile() + ": " + e + ")";
            }
        }

        @Override
        public String toString() {
            return "node " + id + " (" + roles() + ")";
        }
    }

    private static String join(List<String> parts) {
        StringJoiner joiner = new StringJoiner(",");
        parts.forEach(joiner::add);
        return joiner.toString();
    }

    /**
     * {@code count} distinct free loopback ports: every socket is held open until all are
     * chosen, so none is picked twice. Another process may still take one before the node binds
     * it; the node's start then fails loudly ("Address already in use").
     */
    static List<Integer> freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket();
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                sockets.add(socket);
            }
            return sockets.stream().map(ServerSocket::getLocalPort).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            for (ServerSocket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException e) {
                    // closing a listening socket we own
                }
            }
        }
    }

    private static final String LOGBACK = """
        <configuration>
          <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
            <encoder>
              <pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{0}: %msg%n</pattern>
            </encoder>
          </appender>
          <logger name="io.strata" level="INFO"/>
          <logger name="org.apache.kafka" level="WARN"/>
          <logger name="io.netty" level="WARN"/>
          <root level="WARN">
            <appender-ref ref="STDOUT"/>
          </root>
        </configuration>
        """;
}
