package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.protocol.ApiKeys;

import java.io.Closeable;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The driver of {@code bench/cluster-bench.sh}: measures a running 3-node cluster (Strata or
 * Apache Kafka, the same code for both) and prints {@code RESULT <cluster> <measure> <value>}
 * lines, appending them to {@code --out}.
 *
 * <p>Options:
 * <pre>
 *   --name NAME               label of the cluster in the RESULT lines (strata, kafka)
 *   --bootstrap H:P,H:P,H:P   each node's broker listener, in node-id order (node.id 1, 2, 3)
 *   --pid-files F,F,F         each node's pid file, in node-id order (read again after a restart)
 *   --phases P,P              any of startup, rss, propagation, partitions, failover, in that order
 *   --launched-at-ms MS       epoch ms at which the shell launched the nodes (for startup)
 *   --restart-command CMD     run as {@code CMD NODE_ID} by bash to start a killed node again (failover)
 *   --launcher-pid PID        a launcher process whose RSS is reported apart (rss, Strata only)
 *   --idle-s S                idle time before the RSS is read (default 10)
 *   --propagation-rounds N    topics created one after the other (default 100)
 *   --partitions N            partitions of the big topic (default 9999: Kafka 4.4's largest, see the README)
 *   --failover-rounds N       controller kills (default 5)
 *   --out FILE                where the RESULT lines are appended
 * </pre>
 *
 * <p>"A node shows X" always means: a Metadata request (v12) sent on a socket to that node alone
 * answers with X. kafka-clients' Admin is not used for those checks because an Admin bootstrapped
 * from one node sends its later requests to whichever node it chooses. CreateTopics and
 * DescribeQuorum go through an Admin bootstrapped from the one node named in each phase.
 *
 * <p>Not thread-safe; one thread runs everything. Wall time comes from {@link System#nanoTime()}
 * (intervals) and {@link System#currentTimeMillis()} (only against {@code --launched-at-ms}).
 */
public final class ClusterBench {
    /** Metadata request version: v12 is the newest both Kafka 4.4 and Strata serve. */
    private static final short METADATA_VERSION = 12;
    /** Pause between two polls of the nodes. */
    private static final long POLL_INTERVAL_MS = 5;
    /** Longest wait for any one condition before the measure is reported as not measured. */
    private static final long CONDITION_TIMEOUT_MS = 180_000;
    /** Socket connect and read timeout of a Metadata probe. */
    private static final int SOCKET_TIMEOUT_MS = 5_000;
    /** Timeout of one CreateTopics attempt while the controller is failing over. */
    private static final int FAILOVER_ATTEMPT_TIMEOUT_MS = 2_000;
    /** Largest response frame a probe accepts (10,000 partitions is ~0.5 MB). */
    private static final int RESPONSE_BYTES_MAX = 64 << 20;

    private final Map<String, String> options;
    private final String name;
    private final List<String> bootstrap;
    private final List<Path> pidFiles;
    private final Path out;

    private ClusterBench(Map<String, String> options) {
        this.options = options;
        this.name = required("name");
        this.bootstrap = List.of(required("bootstrap").split(","));
        this.pidFiles = options.containsKey("pid-files")
            ? Arrays.stream(options.get("pid-files").split(",")).map(Path::of).toList() : List.of();
        this.out = Path.of(required("out"));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new java.util.HashMap<>();
        for (int index = 0; index + 1 < args.length; index += 2) {
            if (!args[index].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value pairs, got '" + args[index] + "'");
            }
            options.put(args[index].substring(2), args[index + 1]);
        }
        ClusterBench bench = new ClusterBench(options);
        for (String phase : bench.required("phases").split(",")) {
            switch (phase) {
                case "startup" -> bench.startup();
                case "rss" -> bench.rss();
                case "propagation" -> bench.propagation();
                case "partitions" -> bench.partitions();
                case "failover" -> bench.failover();
                default -> throw new IllegalArgumentException("unknown phase '" + phase + "'");
            }
        }
    }

    // ---- phases ------------------------------------------------------------------------------

    /** Launch (by the shell, at --launched-at-ms) until every node's Metadata lists every node. */
    private void startup() throws Exception {
        long launchedAtMs = Long.parseLong(required("launched-at-ms"));
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONDITION_TIMEOUT_MS);
        boolean[] done = new boolean[bootstrap.size()];
        int[] lastBrokers = new int[bootstrap.size()];
        int remaining = bootstrap.size();
        while (remaining > 0) {
            for (int index = 0; index < bootstrap.size(); index++) {
                if (done[index]) {
                    continue;
                }
                MetadataResponseData metadata = probeOrNull(index, List.of());
                lastBrokers[index] = metadata == null ? -1 : metadata.brokers().size();
                if (lastBrokers[index] >= bootstrap.size()) {
                    done[index] = true;
                    remaining--;
                    result("startup_node" + (index + 1) + "_s", seconds(System.currentTimeMillis() - launchedAtMs));
                }
            }
            if (remaining > 0 && System.nanoTime() > deadlineNanos) {
                notMeasured("startup_s", "after " + CONDITION_TIMEOUT_MS + " ms the nodes' Metadata listed " + Arrays.toString(lastBrokers)
                    + " brokers (-1: no answer); " + bootstrap.size() + " expected");
                return;
            }
            sleepMs(POLL_INTERVAL_MS);
        }
        result("startup_s", seconds(System.currentTimeMillis() - launchedAtMs));
    }

    /** VmRSS of each node process after --idle-s seconds of idling. */
    private void rss() throws Exception {
        sleepMs(TimeUnit.SECONDS.toMillis(Long.parseLong(options.getOrDefault("idle-s", "10"))));
        long sumKb = 0;
        for (int index = 0; index < pidFiles.size(); index++) {
            long kb = rssKb(readPid(index));
            sumKb += kb;
            result("rss_node" + (index + 1) + "_mb", String.format(Locale.ROOT, "%.1f", kb / 1024.0));
        }
        result("rss_sum_mb", String.format(Locale.ROOT, "%.1f", sumKb / 1024.0));
        if (options.containsKey("launcher-pid")) {
            result("rss_launcher_mb", String.format(Locale.ROOT, "%.1f", rssKb(Long.parseLong(options.get("launcher-pid"))) / 1024.0));
        }
    }

    /** CreateTopics through node 1, then until every node's Metadata shows the topic; N times. */
    private void propagation() throws Exception {
        int rounds = Integer.parseInt(options.getOrDefault("propagation-rounds", "100"));
        List<Long> latenciesNanos = new ArrayList<>();
        List<List<Long>> perNodeNanos = new ArrayList<>();
        for (int index = 0; index < bootstrap.size(); index++) {
            perNodeNanos.add(new ArrayList<>());
        }
        try (Admin admin = admin(0)) {
            for (int round = 0; round < rounds; round++) {
                String topic = "propagation-" + round + "-" + System.nanoTime();
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
                long createdNanos = System.nanoTime();
                long[] shownNanos = new long[bootstrap.size()];
                String failure = awaitEveryNode(List.of(topic), 1, shownNanos);
                if (failure != null) {
                    notMeasured("propagation_ms", "round " + round + ": " + failure);
                    return;
                }
                latenciesNanos.add(System.nanoTime() - createdNanos);
                for (int index = 0; index < bootstrap.size(); index++) {
                    perNodeNanos.get(index).add(shownNanos[index] - createdNanos);
                }
            }
        }
        Collections.sort(latenciesNanos);
        result("propagation_rounds", String.valueOf(latenciesNanos.size()));
        result("propagation_p50_ms", millis(percentile(latenciesNanos, 50)));
        result("propagation_p99_ms", millis(percentile(latenciesNanos, 99)));
        result("propagation_max_ms", millis(latenciesNanos.get(latenciesNanos.size() - 1)));
        for (int index = 0; index < bootstrap.size(); index++) {
            List<Long> node = perNodeNanos.get(index);
            Collections.sort(node);
            result("propagation_node" + (index + 1) + "_p50_ms", millis(percentile(node, 50)));
            result("propagation_node" + (index + 1) + "_max_ms", millis(node.get(node.size() - 1)));
        }
    }

    /** One CreateTopics of a --partitions topic through node 1; until it returns, until every node shows all leaders. */
    private void partitions() throws Exception {
        int partitions = Integer.parseInt(options.getOrDefault("partitions", "9999"));
        String topic = "partitions-" + partitions;
        try (Admin admin = admin(0)) {
            long startNanos = System.nanoTime();
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)),
                    new CreateTopicsOptions().timeoutMs((int) CONDITION_TIMEOUT_MS)).all().get(CONDITION_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                notMeasured("partitions_" + partitions + "_create_s", "CreateTopics of " + partitions + " partitions failed: " + e.getCause());
                return;
            }
            long createdNanos = System.nanoTime();
            result("partitions_" + partitions + "_create_s", seconds(TimeUnit.NANOSECONDS.toMillis(createdNanos - startNanos)));
            String failure = awaitEveryNode(List.of(topic), partitions, new long[bootstrap.size()]);
            if (failure != null) {
                notMeasured("partitions_" + partitions + "_all_leaders_s", failure);
                return;
            }
            result("partitions_" + partitions + "_all_leaders_s", seconds(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)));
            failure = awaitLogsCreated(admin, topic, partitions);
            if (failure != null) {
                notMeasured("partitions_" + partitions + "_logs_created_s", failure);
                return;
            }
            result("partitions_" + partitions + "_logs_created_s", seconds(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)));
        }
    }

    /**
     * Waits until the nodes' log directories (DescribeLogDirs, which the Admin sends to each node)
     * hold a replica of every partition of {@code topic}: Metadata may name a leader before the
     * leader has created the partition's log. Null, or what was seen.
     */
    private String awaitLogsCreated(Admin admin, String topic, int partitions) throws Exception {
        List<Integer> nodeIds = new ArrayList<>();
        for (int id = 1; id <= bootstrap.size(); id++) {
            nodeIds.add(id);
        }
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONDITION_TIMEOUT_MS);
        long replicas = -1;
        while (System.nanoTime() < deadlineNanos) {
            replicas = admin.describeLogDirs(nodeIds).allDescriptions().get(60, TimeUnit.SECONDS).values().stream()
                .flatMap(dirs -> dirs.values().stream())
                .flatMap(dir -> dir.replicaInfos().keySet().stream())
                .filter(partition -> partition.topic().equals(topic)).count();
            if (replicas >= partitions) {
                return null;
            }
            sleepMs(50);
        }
        return "after " + CONDITION_TIMEOUT_MS + " ms the nodes' log dirs held " + replicas + " of " + partitions + " replicas";
    }

    /** Kill -9 the active controller, CreateTopics through another node until one succeeds; restart; N times. */
    private void failover() throws Exception {
        int rounds = Integer.parseInt(options.getOrDefault("failover-rounds", "5"));
        List<Long> failoversMs = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            String failure = failoverRound(round, failoversMs);
            if (failure != null) {
                notMeasured("failover_round" + round + "_s", failure);
                return;
            }
        }
        List<Long> sorted = new ArrayList<>(failoversMs);
        Collections.sort(sorted);
        result("failover_median_s", seconds(sorted.get(sorted.size() / 2)));
    }

    private String failoverRound(int round, List<Long> failoversMs) throws Exception {
        int leaderId;
        try (Admin any = admin(0)) {
            leaderId = any.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS).leaderId();
        }
        if (leaderId < 1 || leaderId > bootstrap.size()) {
            return "DescribeQuorum named leader " + leaderId + ", not one of nodes 1.." + bootstrap.size();
        }
        int victim = leaderId - 1;
        int survivor = (victim + 1) % bootstrap.size();
        long killedAtNanos;
        long killedAtMs;
        java.util.concurrent.CompletableFuture<ProcessHandle> exited;
        int attempts = 0;
        String firstError = "none";
        try (Admin admin = admin(survivor, FAILOVER_ATTEMPT_TIMEOUT_MS)) {
            admin.describeCluster().nodes().get(30, TimeUnit.SECONDS); // connected before the kill
            ProcessHandle process = ProcessHandle.of(readPid(victim)).orElseThrow(
                () -> new IllegalStateException("node " + leaderId + " (the active controller) has no live process"));
            process.destroyForcibly(); // SIGKILL
            killedAtNanos = System.nanoTime();
            killedAtMs = System.currentTimeMillis();
            // Not waited for before the first attempt: the node is not a child of this JVM, so
            // onExit() polls (300 ms, then 30 ms longer each time) and the reaper of the orphaned
            // process is slow here; waiting delayed the first CreateTopics by ~1.8 s after the
            // SIGKILL, longer than the election itself. A killed process serves nothing anyway.
            exited = process.onExit();
            while (true) {
                attempts++;
                String topic = "failover-" + round + "-" + attempts + "-" + System.nanoTime();
                try {
                    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)),
                        new CreateTopicsOptions().timeoutMs(FAILOVER_ATTEMPT_TIMEOUT_MS)).all().get(FAILOVER_ATTEMPT_TIMEOUT_MS * 2L, TimeUnit.MILLISECONDS);
                    break;
                } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                    if (attempts == 1) {
                        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                        firstError = cause.getClass().getSimpleName() + ": " + String.valueOf(cause.getMessage()).replace(' ', '_');
                    }
                    if (System.nanoTime() - killedAtNanos > TimeUnit.MILLISECONDS.toNanos(CONDITION_TIMEOUT_MS)) {
                        return "no CreateTopics through node " + (survivor + 1) + " succeeded in " + CONDITION_TIMEOUT_MS
                            + " ms after killing controller " + leaderId + " (" + attempts + " attempts); last: " + e;
                    }
                }
            }
        }
        long failoverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAtNanos);
        exited.get(30, TimeUnit.SECONDS); // gone before it is started again
        failoversMs.add(failoverMs);
        result("failover_round" + round + "_s", seconds(failoverMs));
        result("failover_round" + round + "_detail", "killed=node" + leaderId + ",through=node" + (survivor + 1) + ",attempts=" + attempts
            + ",first_error=" + firstError + ",killed_at=" + wallClock(killedAtMs) + ",succeeded_at=" + wallClock(killedAtMs + failoverMs));
        return restartAndAwaitQuorum(victim, survivor);
    }

    /** Starts node {@code victim} again and waits until it is a caught-up voter and lists every broker. */
    private String restartAndAwaitQuorum(int victim, int survivor) throws Exception {
        long restartNanos = System.nanoTime();
        Process restart = new ProcessBuilder("bash", "-c", required("restart-command") + " " + (victim + 1)).inheritIO().start();
        if (restart.waitFor() != 0) {
            return "the restart command for node " + (victim + 1) + " exited with " + restart.exitValue();
        }
        try (Admin admin = admin(survivor)) {
            long highWatermarkAtRestart = admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS).highWatermark();
            long deadlineNanos = restartNanos + TimeUnit.MILLISECONDS.toNanos(CONDITION_TIMEOUT_MS);
            while (true) {
                QuorumInfo quorum = admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS);
                boolean caughtUp = quorum.voters().stream().anyMatch(voter -> voter.replicaId() == victim + 1
                    && voter.logEndOffset() >= highWatermarkAtRestart);
                if (caughtUp) {
                    MetadataResponseData metadata = probeOrNull(victim, List.of());
                    if (metadata != null && metadata.brokers().size() >= bootstrap.size()) {
                        break;
                    }
                }
                if (System.nanoTime() > deadlineNanos) {
                    return "restarted node " + (victim + 1) + " not back in the quorum after " + CONDITION_TIMEOUT_MS + " ms: " + quorum;
                }
                sleepMs(50);
            }
        }
        result("failover_rejoin_node" + (victim + 1) + "_s", seconds(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartNanos)));
        return null;
    }

    // ---- checks on every node ----------------------------------------------------------------

    /**
     * Waits until every node's Metadata shows every topic with {@code partitions} led partitions,
     * noting in {@code shownNanos} when each node first did; null, or what was seen.
     */
    private String awaitEveryNode(List<String> topics, int partitions, long[] shownNanos) throws Exception {
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONDITION_TIMEOUT_MS);
        boolean[] done = new boolean[bootstrap.size()];
        String[] lastSeen = new String[bootstrap.size()];
        int remaining = bootstrap.size();
        while (true) {
            for (int index = 0; index < bootstrap.size(); index++) {
                if (!done[index]) {
                    MetadataResponseData metadata = probeOrNull(index, topics);
                    lastSeen[index] = metadata == null ? "no answer" : shows(metadata, topics, partitions);
                    if (lastSeen[index] == null) {
                        shownNanos[index] = System.nanoTime();
                        done[index] = true;
                        remaining--;
                    }
                }
            }
            if (remaining == 0) {
                return null;
            }
            if (System.nanoTime() > deadlineNanos) {
                return "after " + CONDITION_TIMEOUT_MS + " ms the nodes showed: " + Arrays.toString(lastSeen);
            }
            sleepMs(POLL_INTERVAL_MS);
        }
    }

    /** Null when {@code metadata} has every topic with exactly {@code partitions} partitions, each with a leader; else why not. */
    private static String shows(MetadataResponseData metadata, List<String> topics, int partitions) {
        for (String topic : topics) {
            MetadataResponseData.MetadataResponseTopic found = metadata.topics().find(topic);
            if (found == null || found.errorCode() != Errors.NONE.code()) {
                return topic + ": " + (found == null ? "absent" : Errors.forCode(found.errorCode()));
            }
            long led = found.partitions().stream().filter(p -> p.errorCode() == Errors.NONE.code() && p.leaderId() >= 0).count();
            if (found.partitions().size() != partitions || led != partitions) {
                return topic + ": " + found.partitions().size() + " partitions, " + led + " led";
            }
        }
        return null;
    }

    private MetadataResponseData probeOrNull(int index, List<String> topics) {
        try (MetadataProbe probe = new MetadataProbe(bootstrap.get(index))) {
            return probe.metadata(topics);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * One connection to one node, sending Metadata requests built and parsed by kafka-clients.
     * The frame is the 4-byte size then the header and body; the answer's size is checked against
     * {@link #RESPONSE_BYTES_MAX} before it is read.
     */
    private static final class MetadataProbe implements Closeable {
        private final Socket socket = new Socket();
        private int correlationId;

        MetadataProbe(String hostPort) throws IOException {
            int colon = hostPort.lastIndexOf(':');
            socket.connect(new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))), SOCKET_TIMEOUT_MS);
            socket.setSoTimeout(SOCKET_TIMEOUT_MS);
            socket.setTcpNoDelay(true);
        }

        MetadataResponseData metadata(List<String> topics) throws IOException {
            RequestHeader header = new RequestHeader(ApiKeys.METADATA, METADATA_VERSION, "cluster-bench", ++correlationId);
            ByteBuffer request = new MetadataRequest.Builder(topics, false).build(METADATA_VERSION).serializeWithHeader(header);
            OutputStream output = socket.getOutputStream();
            byte[] frame = new byte[4 + request.remaining()];
            ByteBuffer.wrap(frame).putInt(request.remaining()).put(request);
            output.write(frame);
            output.flush();
            DataInputStream input = new DataInputStream(socket.getInputStream());
            int size = input.readInt();
            if (size < 0 || size > RESPONSE_BYTES_MAX) {
                throw new IOException("response size out of range: size=" + size + " max=" + RESPONSE_BYTES_MAX);
            }
            byte[] body = new byte[size];
            input.readFully(body);
            AbstractResponse response = AbstractResponse.parseResponse(ByteBuffer.wrap(body), header);
            return ((MetadataResponse) response).data();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    // ---- helpers -----------------------------------------------------------------------------

    /** UTC time of day with milliseconds, to line a round up with the nodes' logs. */
    private static String wallClock(long epochMs) {
        return java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(java.time.ZoneOffset.UTC)
            .format(java.time.Instant.ofEpochMilli(epochMs));
    }

    private Admin admin(int index) {
        return admin(index, 30_000);
    }

    private Admin admin(int index, int requestTimeoutMs) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap.get(index));
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Math.max(requestTimeoutMs, 60_000));
        properties.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 100);
        properties.put(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 100);
        properties.put(AdminClientConfig.CLIENT_ID_CONFIG, "cluster-bench-" + name);
        return Admin.create(properties);
    }

    private long readPid(int index) throws IOException {
        return Long.parseLong(Files.readString(pidFiles.get(index), StandardCharsets.UTF_8).strip());
    }

    private static long rssKb(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"), StandardCharsets.UTF_8)) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.substring("VmRSS:".length()).replace("kB", "").strip());
            }
        }
        throw new IOException("no VmRSS in /proc/" + pid + "/status");
    }

    private static long percentile(List<Long> sorted, int percent) {
        int rank = (int) Math.ceil(percent / 100.0 * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }

    private static String seconds(long millis) {
        return String.format(Locale.ROOT, "%.3f", millis / 1000.0);
    }

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
    }

    private static void sleepMs(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }

    private String required(String key) {
        String value = options.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing --" + key);
        }
        return value;
    }

    private void result(String measure, String value) throws IOException {
        line("RESULT " + name + " " + measure + " " + value);
    }

    private void notMeasured(String measure, String reason) throws IOException {
        line("RESULT " + name + " " + measure + " NOT_MEASURED " + reason);
    }

    private void line(String text) throws IOException {
        System.out.println(text);
        System.out.flush();
        Files.writeString(out, text + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
