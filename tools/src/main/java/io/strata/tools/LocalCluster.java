package io.strata.tools;

import io.strata.common.Time;
import io.strata.protocol.Uuids;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.StringJoiner;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A cluster of {@code nodes} Strata nodes on 127.0.0.1, one child process each, with its files
 * under one directory:
 * <pre>
 *   DIR/cluster.id                  the cluster id, generated once (Kafka's base64 form) and reused
 *   DIR/node-ID/server.properties   the node's configuration, rewritten on every start
 *   DIR/node-ID/data/               its log dir (formatted with the cluster id on first start)
 *   DIR/node-ID/server.log          its stdout and stderr, appended to
 *   DIR/node-ID/server.pid          the child's process id while it runs
 * </pre>
 * Node {@code id} (1-based) listens on {@code basePort + id - 1} (PLAINTEXT, advertised),
 * {@code basePort + 100 + id - 1} (CONTROLLER, controllers only) and serves metrics and health
 * on {@code basePort + 200 + id - 1}. Nodes 1 to {@code controllers} are combined
 * broker,controller nodes and the quorum's voters; the others are broker-only.
 *
 * <p>Not thread-safe: one thread starts it; {@link #stop} may be called from a shutdown hook and
 * is idempotent.
 */
final class LocalCluster {
    /** Offsets of the controller and metrics ports from the node's PLAINTEXT port. */
    static final int CONTROLLER_PORT_OFFSET = 100;
    static final int METRICS_PORT_OFFSET = 200;
    /** At most this many nodes: their ports must stay below the next range (base + 100). */
    static final int NODES_MAX = 99;
    /** How long a stopping node gets for its clean shutdown before it is killed. */
    static final Duration STOP_GRACE = Duration.ofSeconds(15);
    /** Lines of a failed node's log shown to the operator. */
    static final int LOG_TAIL_LINES = 30;

    private final Path dir;
    private final int nodes;
    private final int controllers;
    private final int basePort;
    private final List<String> jvmOptions;
    private final Time time;
    private final List<Process> processes = new ArrayList<>();

    LocalCluster(Path dir, int nodes, int controllers, int basePort, List<String> jvmOptions, Time time) {
        if (nodes < 1 || nodes > NODES_MAX) {
            throw new IllegalArgumentException("nodes must be between 1 and " + NODES_MAX + ": nodes=" + nodes);
        }
        if (controllers < 1 || controllers > nodes) {
            throw new IllegalArgumentException("controllers must be between 1 and nodes: controllers=" + controllers + " nodes=" + nodes);
        }
        if (basePort < 1 || basePort + METRICS_PORT_OFFSET + nodes - 1 > 65535) {
            throw new IllegalArgumentException("ports must fit below 65536: basePort=" + basePort + " nodes=" + nodes);
        }
        this.dir = dir;
        this.nodes = nodes;
        this.controllers = controllers;
        this.basePort = basePort;
        this.jvmOptions = List.copyOf(jvmOptions);
        this.time = time;
    }

    int nodes() {
        return nodes;
    }

    Path nodeDir(int id) {
        return dir.resolve("node-" + id);
    }

    int brokerPort(int id) {
        return basePort + id - 1;
    }

    int controllerPort(int id) {
        return basePort + CONTROLLER_PORT_OFFSET + id - 1;
    }

    int metricsPort(int id) {
        return basePort + METRICS_PORT_OFFSET + id - 1;
    }

    boolean isController(int id) {
        return id <= controllers;
    }

    String bootstrapServers() {
        StringJoiner joiner = new StringJoiner(",");
        for (int id = 1; id <= nodes; id++) {
            joiner.add("127.0.0.1:" + brokerPort(id));
        }
        return joiner.toString();
    }

    URI readyUri(int id) {
        return URI.create("http://127.0.0.1:" + metricsPort(id) + "/health/ready");
    }

    /** The cluster id in DIR/cluster.id, written there first from {@code random} if the file does not exist. */
    String clusterId(Random random) throws IOException {
        Path file = dir.resolve("cluster.id");
        if (Files.exists(file)) {
            String id = Files.readString(file, StandardCharsets.UTF_8).strip();
            Uuids.fromBase64(id); // refuses a damaged file rather than forming a second cluster
            return id;
        }
        Files.createDirectories(dir);
        String id = Uuids.toBase64(randomClusterUuid(random));
        Files.writeString(file, id + "\n", StandardCharsets.UTF_8);
        return id;
    }

    /** Kafka's rules for a random id: not the zero or reserved ids, and a text form not starting with '-'. */
    static UUID randomClusterUuid(Random random) {
        while (true) {
            UUID candidate = new UUID(random.nextLong(), random.nextLong());
            if (!candidate.equals(Uuids.ZERO) && !candidate.equals(Uuids.METADATA_TOPIC_ID) && !Uuids.toBase64(candidate).startsWith("-")) {
                return candidate;
            }
        }
    }

    /** Writes every node's server.properties (and creates its data dir) for {@code clusterId}. */
    void writeConfigs(String clusterId) throws IOException {
        for (int id = 1; id <= nodes; id++) {
            Files.createDirectories(nodeDir(id).resolve("data"));
            Files.writeString(nodeDir(id).resolve("server.properties"), properties(id, clusterId), StandardCharsets.UTF_8);
        }
    }

    /** Replicas of each partition: 3, or every broker of a smaller cluster. */
    int replicationFactor() {
        return Math.min(3, nodes);
    }

    /** Node {@code id}'s server.properties. */
    String properties(int id, String clusterId) {
        StringJoiner voters = new StringJoiner(",");
        for (int voter = 1; voter <= controllers; voter++) {
            voters.add(voter + "@127.0.0.1:" + controllerPort(voter));
        }
        String plaintext = "PLAINTEXT://127.0.0.1:" + brokerPort(id);
        StringBuilder text = new StringBuilder()
            .append("# Written by strata cluster; rewritten on every start.\n")
            .append("node.id=").append(id).append('\n')
            .append("process.roles=").append(isController(id) ? "broker,controller" : "broker").append('\n')
            .append("listeners=").append(plaintext)
            .append(isController(id) ? ",CONTROLLER://127.0.0.1:" + controllerPort(id) : "").append('\n')
            .append("advertised.listeners=").append(plaintext).append('\n')
            .append("controller.listener.names=CONTROLLER\n")
            .append("listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n")
            .append("controller.quorum.voters=").append(voters).append('\n')
            .append("log.dirs=").append(nodeDir(id).resolve("data").toAbsolutePath()).append('\n')
            .append("cluster.id=").append(clusterId).append('\n')
            .append("metrics.listener=http://127.0.0.1:").append(metricsPort(id)).append('\n')
            // Replicated as in production (Kafka's internal-topic defaults, capped by the cluster's size): a node may go down.
            .append("default.replication.factor=").append(replicationFactor()).append('\n')
            .append("min.insync.replicas=").append(Math.min(2, replicationFactor())).append('\n')
            .append("offsets.topic.replication.factor=").append(replicationFactor()).append('\n')
            .append("transaction.state.log.replication.factor=").append(replicationFactor()).append('\n')
            .append("transaction.state.log.min.isr=").append(Math.min(2, replicationFactor())).append('\n');
        return text.toString();
    }

    /**
     * A description of a node still running from an earlier launcher (one killed without the
     * chance to stop its children): its pid file names a live process whose command line
     * names the node's server.properties. Null when there is none.
     */
    String alreadyRunning() throws IOException {
        for (int id = 1; id <= nodes; id++) {
            Path pidFile = nodeDir(id).resolve("server.pid");
            if (!Files.exists(pidFile)) {
                continue;
            }
            long pid;
            try {
                pid = Long.parseLong(Files.readString(pidFile, StandardCharsets.UTF_8).strip());
            } catch (NumberFormatException e) {
                continue;
            }
            String config = nodeDir(id).resolve("server.properties").toAbsolutePath().toString();
            boolean running = ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .flatMap(handle -> handle.info().commandLine()).map(line -> line.contains(config)).orElse(false);
            if (running) {
                return "node " + id + " is still running as process " + pid + " (" + pidFile + "); stop it first";
            }
        }
        return null;
    }

    /**
     * Starts every node as a child process: this JVM's executable and class path running
     * {@code StrataCli server --config DIR/node-ID/server.properties}.
     */
    void start() throws IOException {
        for (int id = 1; id <= nodes; id++) {
            processes.add(launch(id));
        }
    }

    private Process launch(int id) throws IOException {
        String java = ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), StrataCli.class.getName(),
            "server", "--config", nodeDir(id).resolve("server.properties").toAbsolutePath().toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(nodeDir(id).resolve("server.log").toFile()));
        Process process = builder.start();
        Files.writeString(nodeDir(id).resolve("server.pid"), process.pid() + "\n", StandardCharsets.UTF_8);
        return process;
    }

    /** Starts node {@code id} again after it exited (same properties, same data directory). */
    synchronized void restart(int id) throws IOException {
        if (processes.get(id - 1).isAlive()) {
            throw new IllegalStateException("node " + id + " is running");
        }
        processes.set(id - 1, launch(id));
    }

    /** Kills node {@code id} at once (SIGKILL), as a crash would. */
    void kill(int id) throws InterruptedException {
        Process process = processes.get(id - 1);
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Whether node {@code id}'s process runs. */
    boolean isAlive(int id) {
        return processes.get(id - 1).isAlive();
    }

    int nodeCount() {
        return nodes;
    }

    /** The child processes, in node order (node id = index + 1). */
    List<Process> processes() {
        return List.copyOf(processes);
    }

    /** The id of the first node whose process has exited, or -1. */
    int firstExited() {
        for (int index = 0; index < processes.size(); index++) {
            if (!processes.get(index).isAlive()) {
                return index + 1;
            }
        }
        return -1;
    }

    /** Whether node {@code id}'s readiness endpoint answers 200 now. */
    boolean isReady(HttpClient http, int id) {
        HttpRequest request = HttpRequest.newBuilder(readyUri(id)).timeout(Duration.ofSeconds(2)).GET().build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The last lines of node {@code id}'s log. */
    String logTail(int id) {
        try {
            List<String> lines = Files.readAllLines(nodeDir(id).resolve("server.log"), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "(cannot read " + nodeDir(id).resolve("server.log") + ": " + e + ")";
        } catch (UncheckedIOException e) {
            return "(cannot read " + nodeDir(id).resolve("server.log") + ": " + e.getCause() + ")";
        }
    }

    /**
     * Stops every child: SIGTERM to all (each shuts down cleanly), then waits up to
     * {@link #STOP_GRACE} for all of them together, then kills the ones left. Idempotent.
     */
    synchronized void stop() {
        for (Process process : processes) {
            process.destroy();
        }
        long deadlineNanos = time.nanoseconds() + STOP_GRACE.toNanos();
        boolean interrupted = false;
        for (Process process : processes) {
            long remainingNanos = deadlineNanos - time.nanoseconds();
            try {
                if (remainingNanos <= 0 || !process.waitFor(remainingNanos, TimeUnit.NANOSECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                interrupted = true;
                process.destroyForcibly();
            }
        }
        for (Process process : processes) {
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        for (int id = 1; id <= processes.size(); id++) {
            if (!processes.get(id - 1).isAlive()) {
                try {
                    Files.deleteIfExists(nodeDir(id).resolve("server.pid"));
                } catch (IOException e) {
                    // The pid file is advice for the operator; a stale one names a dead process.
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
