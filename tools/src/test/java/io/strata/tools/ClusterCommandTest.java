package io.strata.tools;

import io.strata.common.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ClusterCommandTest {
    private static final int NODES = 3;
    /** Generous: three JVMs start on a machine shared with other builds. */
    private static final Duration READY_DEADLINE = Duration.ofSeconds(120);
    private static final int BASE_PORT_ATTEMPTS = 5;

    @TempDir
    Path dir;

    private final List<Long> startedPids = new ArrayList<>();
    /** The ports of the current attempt, for the readiness URLs. */
    private LocalCluster currentLayout;

    @AfterEach
    void killWhatThisTestStarted() {
        // Only processes whose pid files this test's directory holds, and only if they still run our config.
        for (long pid : startedPids) {
            ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .filter(handle -> handle.info().commandLine().map(line -> line.contains(dir.toString())).orElse(true))
                .ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void startsThreeReadyNodesAndStopsEveryChild() throws Exception {
        Random random = new Random();
        for (int attempt = 1; attempt <= BASE_PORT_ATTEMPTS; attempt++) {
            int basePort = freeBasePort(random);
            Run run = start(basePort);
            Boolean ready = awaitReady(run);
            if (ready == null) {
                // Exited before ready: a port taken between our check and the node's bind is worth another base.
                if (run.exitCode.getNow(0) != 0 && logsMention("Address already in use") && attempt < BASE_PORT_ATTEMPTS) {
                    startedPids.clear(); // the command stopped them before it returned
                    continue;
                }
            }
            assertThat(ready).as("every node answered 200 on /health/ready; exit %s, logs:%n%s",
                run.exitCode.getNow(null), allLogs()).isTrue();
            awaitOutput(run, "Strata cluster ready: 3 nodes, bootstrap servers 127.0.0.1:" + basePort + ",127.0.0.1:" + (basePort + 1)
                + ",127.0.0.1:" + (basePort + 2));
            // The per-node lines follow the ready line in later writes.
            awaitOutput(run, "metrics http://127.0.0.1:" + (basePort + 200) + "/metrics");
            String clusterId = Files.readString(dir.resolve("cluster.id")).strip();
            assertFiles(basePort, clusterId);
            stopAndAssertChildrenGone(run);

            // The same command on the same directory restarts the same cluster: same id, same data.
            startedPids.clear();
            Run again = start(basePort);
            assertThat(awaitReady(again)).as("restarted nodes ready; exit %s, logs:%n%s", again.exitCode.getNow(null), allLogs()).isTrue();
            assertFiles(basePort, clusterId);
            stopAndAssertChildrenGone(again);
            return;
        }
    }

    @Test
    void clusterIdIsGeneratedOnceAndReused() throws IOException {
        LocalCluster cluster = new LocalCluster(dir, NODES, NODES, 20000, List.of(), Time.SYSTEM);
        String first = cluster.clusterId(new Random(1));
        assertThat(first).hasSize(22).doesNotStartWith("-");
        assertThat(cluster.clusterId(new Random(2))).isEqualTo(first);
        assertThat(Files.readString(dir.resolve("cluster.id")).strip()).isEqualTo(first);
    }

    @Test
    void nodesAfterTheControllersAreBrokerOnly() {
        LocalCluster cluster = new LocalCluster(dir, 4, 3, 20000, List.of(), Time.SYSTEM);
        String broker = cluster.properties(4, "id");
        assertThat(broker).contains("process.roles=broker\n").contains("listeners=PLAINTEXT://127.0.0.1:20003\n")
            .contains("controller.quorum.voters=1@127.0.0.1:20100,2@127.0.0.1:20101,3@127.0.0.1:20102\n");
        assertThat(cluster.properties(1, "id")).contains("process.roles=broker,controller\n")
            .contains("listeners=PLAINTEXT://127.0.0.1:20000,CONTROLLER://127.0.0.1:20100\n")
            .contains("advertised.listeners=PLAINTEXT://127.0.0.1:20000\n").contains("metrics.listener=http://127.0.0.1:20200\n");
    }

    @Test
    void exitsNonZeroWithTheLogTailWhenANodeExitsEarly() throws Exception {
        int basePort = freeBasePort(new Random());
        try (ServerSocket taken = new ServerSocket()) {
            // Node 2's PLAINTEXT port is in use, so node 2 fails to start and exits.
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), basePort + 1));
            CliRunner.Result result = CliRunner.run("cluster", "--nodes", String.valueOf(NODES), "--dir", dir.toString(),
                "--base-port", String.valueOf(basePort), "--ready-timeout-ms", String.valueOf(READY_DEADLINE.toMillis()));
            recordPids();
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
            assertThat(result.err()).contains("strata cluster: node 2 exited with code 1; the end of " + dir.resolve("node-2").resolve("server.log"));
        }
        for (int id = 1; id <= NODES; id++) {
            assertThat(dir.resolve("node-" + id).resolve("server.pid")).as("node %d stopped", id).doesNotExist();
        }
    }

    @Test
    void refusesToStartOverANodeStillRunningFromAnEarlierLauncher() throws Exception {
        Path config = dir.resolve("node-2").resolve("server.properties").toAbsolutePath();
        Files.createDirectories(config.getParent());
        // A stand-in for an orphaned node: a process whose command line names node 2's configuration.
        Process orphan = new ProcessBuilder("sh", "-c", "sleep 60 # " + config).start();
        try {
            Files.writeString(config.getParent().resolve("server.pid"), orphan.pid() + "\n");
            CliRunner.Result result = CliRunner.run("cluster", "--nodes", String.valueOf(NODES), "--dir", dir.toString(), "--base-port", "20000");
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
            assertThat(result.err()).contains("node 2 is still running as process " + orphan.pid());
            assertThat(dir.resolve("node-1").resolve("server.pid")).doesNotExist();
        } finally {
            orphan.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void refusesMoreControllersThanNodes() {
        CliRunner.Result result = CliRunner.run("cluster", "--nodes", "2", "--controllers", "3", "--dir", dir.toString());
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
        assertThat(result.err()).contains("controllers must be between 1 and nodes");
    }

    // ---------------------------------------------------------------- helpers

    private record Run(Thread thread, CompletableFuture<Integer> exitCode, java.io.ByteArrayOutputStream out) {
    }

    /** Runs the command on its own thread with System.out captured (tests of this class run one at a time). */
    private Run start(int basePort) {
        CompletableFuture<Integer> exitCode = new CompletableFuture<>();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.PrintStream originalOut = System.out;
        System.setOut(new java.io.PrintStream(out, true, StandardCharsets.UTF_8));
        exitCode.whenComplete((code, error) -> System.setOut(originalOut));
        Thread thread = new Thread(() -> {
            try {
                exitCode.complete(StrataCli.run("cluster", "--nodes", String.valueOf(NODES), "--dir", dir.toString(),
                    "--base-port", String.valueOf(basePort), "--ready-timeout-ms", String.valueOf(READY_DEADLINE.toMillis())));
            } catch (Throwable t) {
                exitCode.completeExceptionally(t);
            }
        }, "strata-cluster-test");
        thread.start();
        return new Run(thread, exitCode, out);
    }

    private static void awaitOutput(Run run, String text) throws Exception {
        long deadlineMs = Time.SYSTEM.milliseconds() + READY_DEADLINE.toMillis();
        while (!run.out.toString(StandardCharsets.UTF_8).contains(text) && Time.SYSTEM.milliseconds() < deadlineMs && !run.exitCode.isDone()) {
            try {
                run.exitCode.get(100, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                // still running: look again
            }
        }
        assertThat(run.out.toString(StandardCharsets.UTF_8)).contains(text);
    }

    /** True once all three nodes are ready; null if the command ended first; false at the deadline. */
    private Boolean awaitReady(Run run) throws Exception {
        LocalCluster layout = currentLayout;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadlineMs = Time.SYSTEM.milliseconds() + READY_DEADLINE.toMillis();
        while (Time.SYSTEM.milliseconds() < deadlineMs) {
            recordPids();
            if (run.exitCode.isDone()) {
                return null;
            }
            boolean all = true;
            for (int id = 1; id <= NODES && all; id++) {
                all = layout.isReady(http, id);
            }
            if (all) {
                recordPids();
                return true;
            }
            try {
                run.exitCode.get(200, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                // still running: poll again
            }
        }
        return false;
    }

    private int freeBasePort(Random random) throws IOException {
        while (true) {
            int base = 20000 + random.nextInt(20000 - LocalCluster.METRICS_PORT_OFFSET - NODES);
            if (allFree(base)) {
                currentLayout = new LocalCluster(dir, NODES, NODES, base, List.of(), Time.SYSTEM);
                return base;
            }
        }
    }

    private static boolean allFree(int base) {
        for (int offset : new int[] {0, LocalCluster.CONTROLLER_PORT_OFFSET, LocalCluster.METRICS_PORT_OFFSET}) {
            for (int node = 0; node < NODES; node++) {
                try (ServerSocket socket = new ServerSocket()) {
                    socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), base + offset + node));
                } catch (IOException e) {
                    return false;
                }
            }
        }
        return true;
    }

    private void recordPids() throws IOException {
        for (int id = 1; id <= NODES; id++) {
            Path pidFile = dir.resolve("node-" + id).resolve("server.pid");
            if (Files.exists(pidFile)) {
                String text = Files.readString(pidFile, StandardCharsets.UTF_8).strip();
                if (!text.isEmpty()) {
                    long pid = Long.parseLong(text);
                    if (!startedPids.contains(pid)) {
                        startedPids.add(pid);
                    }
                }
            }
        }
    }

    private void assertFiles(int basePort, String clusterId) throws IOException {
        assertThat(Files.readString(dir.resolve("cluster.id")).strip()).isEqualTo(clusterId).hasSize(22);
        for (int id = 1; id <= NODES; id++) {
            Path node = dir.resolve("node-" + id);
            assertThat(node.resolve("data")).isDirectory();
            assertThat(node.resolve("server.log")).isRegularFile();
            String properties = Files.readString(node.resolve("server.properties"));
            assertThat(properties).contains("node.id=" + id + "\n").contains("cluster.id=" + clusterId + "\n")
                .contains("process.roles=broker,controller\n")
                .contains("listeners=PLAINTEXT://127.0.0.1:" + (basePort + id - 1) + ",CONTROLLER://127.0.0.1:" + (basePort + 100 + id - 1) + "\n")
                .contains("controller.quorum.voters=1@127.0.0.1:" + (basePort + 100) + ",2@127.0.0.1:" + (basePort + 101)
                    + ",3@127.0.0.1:" + (basePort + 102) + "\n")
                .contains("log.dirs=" + node.resolve("data").toAbsolutePath() + "\n");
            // The node formatted its data dir with the shared cluster id.
            try (var files = Files.walk(node.resolve("data"))) {
                Optional<Path> meta = files.filter(path -> path.getFileName().toString().equals("meta.properties")).findFirst();
                assertThat(meta).as("meta.properties of node %d", id).isPresent();
                assertThat(Files.readString(meta.get())).contains(clusterId);
            }
        }
        assertThat(startedPids).hasSize(NODES);
        for (long pid : startedPids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).as("node process %d", pid).contains(true);
        }
    }

    private void stopAndAssertChildrenGone(Run run) throws Exception {
        run.thread.interrupt();
        int exitCode = run.exitCode.get(60, TimeUnit.SECONDS);
        assertThat(exitCode).as("exit code of a cluster stopped by an interrupt; logs:%n%s", allLogs()).isZero();
        for (long pid : startedPids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("node process %d is gone", pid).isFalse();
        }
        for (int id = 1; id <= NODES; id++) {
            assertThat(dir.resolve("node-" + id).resolve("server.pid")).doesNotExist();
        }
    }

    private boolean logsMention(String text) {
        return allLogs().contains(text);
    }

    private String allLogs() {
        StringBuilder logs = new StringBuilder();
        for (int id = 1; id <= NODES; id++) {
            Path log = dir.resolve("node-" + id).resolve("server.log");
            try {
                logs.append("--- node ").append(id).append(" ---\n").append(Files.exists(log) ? Files.readString(log) : "(no log)\n");
            } catch (IOException e) {
                logs.append(e).append('\n');
            }
        }
        return logs.toString();
    }
}
