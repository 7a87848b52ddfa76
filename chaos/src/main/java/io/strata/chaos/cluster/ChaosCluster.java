package io.strata.chaos.cluster;

import io.strata.chaos.net.ChaosBridge;
import io.strata.chaos.net.NetNs;
import io.strata.chaos.net.Nft;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringJoiner;

/**
 * A cluster of real Strata nodes for the fault campaign, each a {@code strata server} process in
 * its own network namespace ({@link NetNs}), with combined roles (broker,controller; every node a
 * quorum voter). Files, under the run directory:
 * <pre>
 *   RUN/node-N/server.properties   node N's configuration (written by {@link #start})
 *   RUN/node-N/data/               its log dir (formatted with the cluster id on first start)
 *   RUN/node-N/server.log          its stdout and stderr, appended to across restarts
 * </pre>
 * Node N of run R listens on 10.77.R.N: {@link #BROKER_PORT} (PLAINTEXT, advertised),
 * {@link #CONTROLLER_PORT} (CONTROLLER) and {@link #METRICS_PORT} (metrics and
 * {@code /health/ready}); the root namespace reaches those addresses through the bridge, so
 * clients in the test JVM use {@link #bootstrapServers()} directly. Each node is started as
 * <pre>
 *   ip netns exec scRnN JAVA -Xms64m -Xmx512m -jar tools/target/strata.jar server --config RUN/node-N/server.properties
 * </pre>
 *
 * <p>Call order: {@link #start} once; then any of {@link #kill9}, {@link #pause}, {@link #resume},
 * {@link #restart}, {@link #nft()} faults; {@link #close} last (also run by a shutdown hook). Node
 * state changes are checked ({@link NodeProcess}); an illegal one throws. Thread-safe: node
 * operations are synchronized per node; {@link #start} and {@link #close} are synchronized.
 */
public final class ChaosCluster implements AutoCloseable {
    public static final int BROKER_PORT = 9092;
    public static final int CONTROLLER_PORT = 9093;
    public static final int METRICS_PORT = 9100;
    /** How long one readiness probe may take. */
    static final Duration READY_PROBE_TIMEOUT = Duration.ofSeconds(2);
    /** Between readiness probes: a poll interval while waiting for a condition with a deadline. */
    static final long READY_POLL_MS = 200;

    private final int run;
    private final int nodes;
    private final Path runDir;
    private final Path jar;
    private final List<String> jvmOptions;
    private final Map<String, String> overrides;
    private final long seed;
    private final Map<Integer, NetNs> namespaces = new LinkedHashMap<>();
    private final Map<Integer, NodeProcess> processes = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(READY_PROBE_TIMEOUT).build();
    private final Thread shutdownHook = new Thread(this::close, "chaos-cluster-close");
    private Nft nft;
    private String clusterId;
    private boolean started;
    private boolean closed;

    /**
     * A cluster of {@code nodes} (1..9) nodes for run {@code run} (1..254, the third octet of
     * their addresses), files under {@code runDir}, started from {@code jar} with {@code jvmOptions};
     * {@code overrides} are added to (and win over) every node's generated properties;
     * {@code seed} makes the cluster id.
     */
    public ChaosCluster(int run, int nodes, Path runDir, Path jar, List<String> jvmOptions, Map<String, String> overrides, long seed) {
        if (nodes < 1 || nodes > 9) {
            throw new IllegalArgumentException("nodes must be between 1 and 9: nodes=" + nodes);
        }
        NetNs.name(run, nodes); // validates run
        this.run = run;
        this.nodes = nodes;
        this.runDir = runDir.toAbsolutePath();
        this.jar = jar.toAbsolutePath();
        this.jvmOptions = List.copyOf(jvmOptions);
        this.overrides = Map.copyOf(overrides);
        this.seed = seed;
    }

    /** The default strata.jar: system property {@code strata.jar}, else tools/target/strata.jar in this or a parent directory. */
    public static Path defaultJar() {
        String property = System.getProperty("strata.jar");
        if (property != null) {
            return Path.of(property);
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("tools/target/strata.jar");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("no tools/target/strata.jar above " + Path.of("").toAbsolutePath()
            + "; build it with ./mvnw -pl tools -am package -DskipTests or set -Dstrata.jar");
    }

    /** Creates the namespaces and nftables tables, writes the configurations and starts every node (without waiting). */
    public synchronized void start() throws IOException {
        if (started) {
            throw new IllegalStateException("cluster of run " + run + " already started");
        }
        started = true;
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        for (int node = 1; node <= nodes; node++) {
            namespaces.put(node, NetNs.create(run, node));
            processes.put(node, new NodeProcess(node));
        }
        nft = new Nft(namespaces);
        clusterId = clusterId(new Random(seed));
        for (int node = 1; node <= nodes; node++) {
            Files.createDirectories(nodeDir(node).resolve("data"));
            Files.writeString(nodeDir(node).resolve("server.properties"), properties(node), StandardCharsets.UTF_8);
        }
        for (int node = 1; node <= nodes; node++) {
            launch(node);
        }
    }

    /** Waits until every running node answers {@code /health/ready} with 200; throws naming the laggards and their log tails. */
    public void awaitReady(Duration timeout) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        for (int node = 1; node <= nodes; node++) {
            awaitReady(node, Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())));
        }
    }

    /** Waits until node {@code node} answers {@code /health/ready} with 200. */
    public void awaitReady(int node, Duration timeout) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        while (!isReady(node)) {
            if (process(node).state() == NodeProcess.State.STOPPED) {
                throw new IllegalStateException("node " + node + " exited while starting; log tail:\n" + logTail(node));
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                throw new IllegalStateException("node " + node + " not ready within " + timeout + "; log tail:\n" + logTail(node));
            }
            Thread.sleep(READY_POLL_MS);
        }
    }

    /** Whether node {@code node}'s readiness endpoint answers 200 now. */
    public boolean isReady(int node) throws InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + address(node) + ":" + METRICS_PORT + "/health/ready"))
            .timeout(READY_PROBE_TIMEOUT).GET().build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** Kills node {@code node} at once (SIGKILL), as a crash would; it must be running or paused. */
    public void kill9(int node) throws InterruptedException {
        process(node).kill9();
    }

    /** Freezes node {@code node} (SIGSTOP): its sockets stay open and silent. */
    public void pause(int node) {
        process(node).pause();
    }

    /** Thaws a paused node (SIGCONT). */
    public void resume(int node) {
        process(node).resume();
    }

    /** Kills node {@code node} if it runs or is paused, then starts it again with the same configuration and data. */
    public void restart(int node) throws IOException, InterruptedException {
        NodeProcess process = process(node);
        synchronized (process) {
            if (process.state() != NodeProcess.State.STOPPED) {
                process.kill9();
            }
            launch(node);
        }
    }

    /** Starts a stopped node (after {@link #kill9}). */
    public void startNode(int node) throws IOException {
        launch(node);
    }

    /** Whether node {@code node}'s process is running (not paused, not stopped). */
    public boolean isRunning(int node) {
        return process(node).state() == NodeProcess.State.RUNNING;
    }

    /** The node's pid, or -1 when it is stopped. */
    public long pid(int node) {
        return process(node).pid();
    }

    /** The nftables faults between this cluster's nodes (node ids as here). */
    public synchronized Nft nft() {
        if (nft == null) {
            throw new IllegalStateException("cluster of run " + run + " not started");
        }
        return nft;
    }

    public NetNs namespace(int node) {
        NetNs ns = namespaces.get(node);
        if (ns == null) {
            throw new IllegalArgumentException("unknown node: node=" + node + " nodes=" + nodes);
        }
        return ns;
    }

    public int nodes() {
        return nodes;
    }

    /** Node {@code node}'s address, 10.77.RUN.NODE. */
    public String address(int node) {
        if (node < 1 || node > nodes) {
            throw new IllegalArgumentException("unknown node: node=" + node + " nodes=" + nodes);
        }
        return "10.77." + run + "." + node;
    }

    /** Every node's PLAINTEXT address, for clients in the root namespace. */
    public String bootstrapServers() {
        StringJoiner joiner = new StringJoiner(",");
        for (int node = 1; node <= nodes; node++) {
            joiner.add(address(node) + ":" + BROKER_PORT);
        }
        return joiner.toString();
    }

    public Path nodeDir(int node) {
        return runDir.resolve("node-" + node);
    }

    /** The last {@code 40} lines of node {@code node}'s log. */
    public String logTail(int node) {
        try {
            List<String> lines = Files.readAllLines(nodeDir(node).resolve("server.log"), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(cannot read " + nodeDir(node).resolve("server.log") + ": " + e + ")";
        }
    }

    /** Node {@code node}'s server.properties. */
    String properties(int node) {
        StringJoiner voters = new StringJoiner(",");
        for (int voter = 1; voter <= nodes; voter++) {
            voters.add(voter + "@" + address(voter) + ":" + CONTROLLER_PORT);
        }
        int replicas = Math.min(3, nodes);
        int minIsr = Math.min(2, replicas);
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("node.id", Integer.toString(node));
        properties.put("process.roles", "broker,controller");
        properties.put("listeners", "PLAINTEXT://" + address(node) + ":" + BROKER_PORT + ",CONTROLLER://" + address(node) + ":" + CONTROLLER_PORT);
        properties.put("advertised.listeners", "PLAINTEXT://" + address(node) + ":" + BROKER_PORT);
        properties.put("controller.listener.names", "CONTROLLER");
        properties.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        properties.put("controller.quorum.voters", voters.toString());
        properties.put("log.dirs", nodeDir(node).resolve("data").toString());
        properties.put("cluster.id", clusterId);
        properties.put("metrics.listener", "http://" + address(node) + ":" + METRICS_PORT);
        properties.put("default.replication.factor", Integer.toString(replicas));
        properties.put("min.insync.replicas", Integer.toString(minIsr));
        properties.put("offsets.topic.replication.factor", Integer.toString(replicas));
        properties.put("transaction.state.log.replication.factor", Integer.toString(replicas));
        properties.put("transaction.state.log.min.isr", Integer.toString(minIsr));
        properties.putAll(overrides);
        StringBuilder text = new StringBuilder("# Written by ChaosCluster (run " + run + "); rewritten on every start.\n");
        properties.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
        return text.toString();
    }

    /** Kills every node, removes the nftables tables, the namespaces and (when unused) the bridge. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        for (NodeProcess process : processes.values()) {
            try {
                process.destroy();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (nft != null) {
            nft.close();
        }
        for (NetNs ns : namespaces.values()) {
            try {
                ns.close();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        try {
            ChaosBridge.deleteIfUnused();
        } catch (RuntimeException e) {
            failure = failure == null ? e : failure;
        }
        if (Thread.currentThread() != shutdownHook && started) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // The JVM is shutting down; the hook runs close() again, which returns at once.
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void launch(int node) throws IOException {
        NodeProcess process = process(node);
        synchronized (process) {
            String java = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            List<String> command = new ArrayList<>();
            command.add(java);
            command.addAll(jvmOptions);
            command.addAll(List.of("-jar", jar.toString(), "server", "--config", nodeDir(node).resolve("server.properties").toString()));
            Process started = new ProcessBuilder(namespace(node).execCommand(command)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(nodeDir(node).resolve("server.log").toFile())).start();
            process.started(started);
        }
    }

    private NodeProcess process(int node) {
        NodeProcess process = processes.get(node);
        if (process == null) {
            throw new IllegalArgumentException("unknown node (or cluster not started): node=" + node + " nodes=" + nodes);
        }
        return process;
    }

    /** A Kafka-style cluster id from {@code random}: 16 bytes in URL-safe base64 without padding, not starting with '-'. */
    static String clusterId(Random random) {
        while (true) {
            byte[] bytes = new byte[16];
            random.nextBytes(bytes);
            String id = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
            if (!id.startsWith("-") && !id.startsWith("AAAAAAAAAAAAAAAAAAAAA")) {
                return id;
            }
        }
    }
}
