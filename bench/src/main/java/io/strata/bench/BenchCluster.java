package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * What every phase of {@link ReplicationBench} shares about the cluster under test: its nodes
 * (listener, pid file, signals, the restart command), Admin clients, topic helpers and the
 * RESULT lines.
 *
 * <p>Node ids are 1-based (node.id 1..N, the order of {@code --bootstrap}). Signals go only to the
 * pid read from the node's own pid file, which the shell wrote for a process it started.
 *
 * <p>Thread-safety: the RESULT writer is synchronized (the fencing watch writes from its thread);
 * everything else is called from the phase's main thread only.
 */
final class BenchCluster {
    /** Pause between two polls of cluster state (ISR, leaders, log dirs). */
    static final long POLL_INTERVAL_MS = 50;
    /** Longest wait for a condition before the measure is reported NOT_MEASURED. */
    static final long CONDITION_TIMEOUT_MS = 180_000;

    private final Map<String, String> options;
    private final String name;
    private final List<String> bootstrap;
    private final List<Path> pidFiles;
    private final Path out;

    BenchCluster(Map<String, String> options) {
        this.options = options;
        this.name = required("name");
        this.bootstrap = List.of(required("bootstrap").split(","));
        this.pidFiles = options.containsKey("pid-files")
            ? Arrays.stream(options.get("pid-files").split(",")).map(Path::of).toList() : List.of();
        this.out = Path.of(required("out"));
        if (!pidFiles.isEmpty() && pidFiles.size() != bootstrap.size()) {
            throw new IllegalArgumentException("--pid-files names " + pidFiles.size() + " files for " + bootstrap.size() + " nodes");
        }
    }

    int nodeCount() {
        return bootstrap.size();
    }

    /** The listener of node {@code nodeId} (1-based). */
    String listener(int nodeId) {
        return bootstrap.get(nodeId - 1);
    }

    /** Every listener but node {@code exceptNodeId}'s, comma-separated. */
    String bootstrapExcept(int exceptNodeId) {
        StringBuilder list = new StringBuilder();
        for (int id = 1; id <= bootstrap.size(); id++) {
            if (id != exceptNodeId) {
                list.append(list.length() == 0 ? "" : ",").append(listener(id));
            }
        }
        return list.toString();
    }

    String allBootstrap() {
        return String.join(",", bootstrap);
    }

    // ---- processes ---------------------------------------------------------------------------

    long pid(int nodeId) throws IOException {
        if (pidFiles.isEmpty()) {
            throw new IllegalStateException("no --pid-files: node " + nodeId + "'s process is unknown");
        }
        return Long.parseLong(Files.readString(pidFiles.get(nodeId - 1), StandardCharsets.UTF_8).strip());
    }

    /** The live process of node {@code nodeId}; throws if its pid file names no live process. */
    ProcessHandle process(int nodeId) throws IOException {
        long pid = pid(nodeId);
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).orElseThrow(
            () -> new IllegalStateException("node " + nodeId + " has no live process: pid=" + pid));
    }

    /** Sends {@code signal} (STOP, CONT) to node {@code nodeId}'s process with kill(1). */
    void signal(int nodeId, String signal) throws IOException, InterruptedException {
        long pid = process(nodeId).pid();
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + pid + " (node " + nodeId + ") exited with " + kill.exitValue());
        }
    }

    /** Runs {@code --restart-command NODE_ID}, which starts the node again and writes its pid file. */
    void restart(int nodeId) throws IOException, InterruptedException {
        Process restart = new ProcessBuilder("bash", "-c", required("restart-command") + " " + nodeId).inheritIO().start();
        if (restart.waitFor() != 0) {
            throw new IllegalStateException("the restart command for node " + nodeId + " exited with " + restart.exitValue());
        }
    }

    // ---- admin and topics --------------------------------------------------------------------

    Admin admin(String bootstrapServers) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        properties.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 100);
        properties.put(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 100);
        properties.put(AdminClientConfig.CLIENT_ID_CONFIG, "replication-bench-" + name);
        return Admin.create(properties);
    }

    /** Creates {@code topic} with the given replica assignment (first replica = preferred leader), min.insync.replicas=2. */
    static void createTopic(Admin admin, String topic, Map<Integer, List<Integer>> assignment) throws Exception {
        NewTopic newTopic = new NewTopic(topic, assignment).configs(Map.of("min.insync.replicas", "2"));
        admin.createTopics(List.of(newTopic)).all().get(60, TimeUnit.SECONDS);
    }

    /** Creates {@code topic} with {@code partitions} partitions, RF {@code nodeCount()}, min.insync.replicas=2. */
    void createTopic(Admin admin, String topic, int partitions) throws Exception {
        NewTopic newTopic = new NewTopic(topic, partitions, (short) nodeCount()).configs(Map.of("min.insync.replicas", "2"));
        admin.createTopics(List.of(newTopic)).all().get(60, TimeUnit.SECONDS);
    }

    /** The topic's description, or null when the Admin could not get one (a node is down, a timeout). */
    static TopicDescription describeOrNull(Admin admin, String topic) {
        try {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** "p0:leader=1,isr=[1,2,3] p1:..." for NOT_MEASURED reasons. */
    static String summary(TopicDescription description) {
        if (description == null) {
            return "no description";
        }
        return description.partitions().stream()
            .map(p -> "p" + p.partition() + ":leader=" + (p.leader() == null ? "none" : p.leader().id())
                + ",isr=" + p.isr().stream().map(Node::id).toList())
            .collect(Collectors.joining(" "));
    }

    /** True when every partition has a leader and all {@code nodeCount()} replicas in its ISR. */
    boolean fullyReplicated(TopicDescription description) {
        if (description == null || description.partitions().isEmpty()) {
            return false;
        }
        for (TopicPartitionInfo partition : description.partitions()) {
            if (partition.leader() == null || partition.leader().id() < 0 || partition.isr().size() < nodeCount()) {
                return false;
            }
        }
        return true;
    }

    /** Waits until every partition of {@code topic} is fully replicated; null, or what was last seen. */
    String awaitFullyReplicated(Admin admin, String topic) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONDITION_TIMEOUT_MS);
        TopicDescription last = null;
        while (System.nanoTime() < deadlineNanos) {
            last = describeOrNull(admin, topic);
            if (fullyReplicated(last)) {
                return null;
            }
            Thread.sleep(POLL_INTERVAL_MS);
        }
        return "after " + CONDITION_TIMEOUT_MS + " ms " + topic + " was " + summary(last);
    }

    // ---- options and results -----------------------------------------------------------------

    String required(String key) {
        String value = options.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing --" + key);
        }
        return value;
    }

    String option(String key, String defaultValue) {
        return options.getOrDefault(key, defaultValue);
    }

    int intOption(String key, int defaultValue) {
        return Integer.parseInt(option(key, Integer.toString(defaultValue)));
    }

    String name() {
        return name;
    }

    void result(String measure, String value) {
        line("RESULT " + name + " " + measure + " " + value);
    }

    void notMeasured(String measure, String reason) {
        line("RESULT " + name + " " + measure + " NOT_MEASURED " + reason.replace('\n', ' '));
    }

    private synchronized void line(String text) {
        System.out.println(text);
        System.out.flush();
        try {
            Files.writeString(out, text + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot append to " + out, e);
        }
    }

    // ---- formatting --------------------------------------------------------------------------

    /** The nearest-rank percentile of an ascending array; {@code sorted} must not be empty. */
    static long percentile(long[] sorted, double percent) {
        if (sorted.length == 0) {
            throw new IllegalArgumentException("percentile of no values: percent=" + percent);
        }
        // The epsilon: 99.9 is not exact in binary, and 99.9 / 100 * 1000 is 999.0000000000001,
        // whose ceiling would be rank 1000 instead of 999.
        int rank = (int) Math.ceil(percent / 100.0 * sorted.length - 1e-9);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e9);
    }

    static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.2f", nanos / 1e6);
    }
}
