package io.strata.tools;

import io.strata.common.Time;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.management.ManagementFactory;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code strata cluster}: a local multi-node cluster in one command. Writes one
 * server.properties per node under {@code --dir} ({@link LocalCluster} has the layout and the
 * ports), starts every node as a child process of this JVM's executable and class path, waits
 * until each one's {@code /health/ready} answers 200, prints the bootstrap servers and metrics
 * URLs, and runs until Ctrl-C / SIGTERM, when it stops the nodes cleanly (killing any still up
 * after 15 s). Run again on the same directory, it restarts the same cluster: the same cluster
 * id and data.
 *
 * <p>Exit codes: on Ctrl-C / SIGTERM the JVM's signal exit (130 / 143, as {@code strata server}),
 * after the nodes stopped; 0 when the command's thread is interrupted (tests run it in-process);
 * 1 a node exited on its own before the cluster was ready, was not ready in time (the tail of
 * its log is printed) or is still running from an earlier launcher; 2 bad usage. Once the cluster
 * is up, a node that exits (kill -9 it to try failover) is reported and left down while the
 * others run; from a terminal, {@code kill N}, {@code start N} and {@code status} act on nodes.
 */
@Command(name = "cluster", description = "Run a local multi-node Strata cluster (one process per node) until interrupted.")
final class ClusterCommand implements Callable<Integer> {
    /** How often the launcher looks at the nodes while it waits. */
    private static final long POLL_INTERVAL_MS = 200;

    @Option(names = "--nodes", defaultValue = "3", description = "Nodes in the cluster (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--dir", defaultValue = "cluster", description = "Directory of the nodes' configuration, data and logs (default: ${DEFAULT-VALUE}).")
    Path dir;

    @Option(names = "--base-port", defaultValue = "19092",
        description = "Node N listens on base+N-1, its controller on base+100+N-1, its metrics on base+200+N-1 (default: ${DEFAULT-VALUE}).")
    int basePort;

    @Option(names = "--controllers", description = "Nodes 1..N are broker,controller (the voters), the rest broker-only (default: all nodes).")
    Integer controllers;

    @Option(names = "--ready-timeout-ms", defaultValue = "60000", description = "How long to wait for every node to be ready (default: ${DEFAULT-VALUE}).")
    long readyTimeoutMs;

    @Option(names = "--heap", defaultValue = "256m", description = "Maximum heap of each node's JVM (default: ${DEFAULT-VALUE}).")
    String heap;

    @Override
    public Integer call() throws Exception {
        int voters = controllers == null ? nodes : controllers;
        LocalCluster cluster;
        try {
            cluster = new LocalCluster(dir, nodes, voters, basePort, jvmOptions(), Time.SYSTEM);
        } catch (IllegalArgumentException e) {
            System.err.println("strata cluster: " + e.getMessage());
            return 2;
        }
        String running = cluster.alreadyRunning();
        if (running != null) {
            System.err.println("strata cluster: " + running);
            return StrataCli.EXIT_FAILURE;
        }
        String clusterId = cluster.clusterId(new SecureRandom());
        cluster.writeConfigs(clusterId);
        Thread hook = new Thread(cluster::stop, "strata-cluster-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            cluster.start();
            System.out.println("Starting " + nodes + " Strata nodes (cluster " + clusterId + ") in " + dir.toAbsolutePath());
            int result = awaitReady(cluster);
            if (result != 0) {
                return result;
            }
            printReady(cluster);
            return awaitStop(cluster);
        } catch (InterruptedException e) {
            return 0;
        } finally {
            cluster.stop();
            removeHook(hook);
        }
    }

    private List<String> jvmOptions() {
        // The children inherit the environment, STRATA_LOG_LEVEL included, and bin/strata's
        // class-data-sharing archive when this JVM uses one (it halves a node's start).
        List<String> options = new ArrayList<>(List.of("-Xms32m", "-Xmx" + heap, "-Dio.netty.jfr.enabled=false"));
        for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith("-XX:SharedArchiveFile=") || argument.startsWith("-Xlog:cds")) {
                options.add(argument);
            }
        }
        return options;
    }

    /** 0 once every node is ready; 1 if one exits first or the deadline passes. */
    private int awaitReady(LocalCluster cluster) throws InterruptedException {
        long deadlineMs = Time.SYSTEM.milliseconds() + readyTimeoutMs;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        boolean[] ready = new boolean[nodes + 1];
        int readyCount = 0;
        while (readyCount < nodes) {
            int exited = cluster.firstExited();
            if (exited > 0) {
                return reportExit(cluster, exited);
            }
            for (int id = 1; id <= nodes; id++) {
                if (!ready[id] && cluster.isReady(http, id)) {
                    ready[id] = true;
                    readyCount++;
                }
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (readyCount < nodes) {
                if (Time.SYSTEM.milliseconds() >= deadlineMs) {
                    for (int id = 1; id <= nodes; id++) {
                        if (!ready[id]) {
                            System.err.println("strata cluster: node " + id + " not ready after " + readyTimeoutMs + " ms ("
                                + cluster.readyUri(id) + "); the end of " + cluster.nodeDir(id).resolve("server.log") + ":");
                            System.err.println(cluster.logTail(id));
                        }
                    }
                    return StrataCli.EXIT_FAILURE;
                }
                Time.SYSTEM.sleep(POLL_INTERVAL_MS);
            }
        }
        return 0;
    }

    private void printReady(LocalCluster cluster) {
        System.out.println("Strata cluster ready: " + nodes + " nodes, bootstrap servers " + cluster.bootstrapServers());
        for (int id = 1; id <= nodes; id++) {
            System.out.println("  node " + id + (cluster.isController(id) ? " (broker, controller)" : " (broker)")
                + ": 127.0.0.1:" + cluster.brokerPort(id) + ", metrics http://127.0.0.1:" + cluster.metricsPort(id) + "/metrics"
                + ", log " + cluster.nodeDir(id).resolve("server.log"));
        }
        System.out.println("Ctrl-C stops the cluster.");
        System.out.flush();
    }

    /**
     * Runs until interrupted (0). A node that exits once the cluster is up is reported and left
     * down, so failover can be watched; commands on standard input act on the nodes:
     * {@code kill N} (SIGKILL, a crash), {@code start N} (start it again), {@code status}.
     */
    private int awaitStop(LocalCluster cluster) throws InterruptedException {
        java.util.concurrent.BlockingQueue<String> commands = new java.util.concurrent.LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                    java.nio.charset.StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    commands.add(line.trim());
                }
            } catch (java.io.IOException e) {
                // No console: the cluster runs until interrupted.
            }
        }, "strata-cluster-commands");
        reader.setDaemon(true);
        if (System.console() != null) {
            // Only from a terminal: standard input may be someone else's channel (a test runner's, a pipe).
            reader.start();
            System.out.println("Commands: kill N, start N, status.");
            System.out.flush();
        }
        boolean[] reported = new boolean[cluster.nodeCount() + 1];
        while (true) {
            for (int id = 1; id <= cluster.nodeCount(); id++) {
                if (!cluster.isAlive(id) && !reported[id]) {
                    reported[id] = true;
                    System.err.println("strata cluster: node " + id + " exited with code " + cluster.processes().get(id - 1).exitValue()
                        + "; the others keep running ('start " + id + "' starts it again). The end of its log:");
                    System.err.println(cluster.logTail(id));
                }
            }
            String command = commands.poll(POLL_INTERVAL_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
            if (command != null && !command.isEmpty()) {
                runCommand(cluster, command, reported);
            }
        }
    }

    private static void runCommand(LocalCluster cluster, String command, boolean[] reported) throws InterruptedException {
        String[] words = command.split("\\s+");
        try {
            switch (words[0]) {
                case "status" -> {
                    for (int id = 1; id <= cluster.nodeCount(); id++) {
                        System.out.println("  node " + id + ": " + (cluster.isAlive(id) ? "running" : "stopped"));
                    }
                }
                case "kill" -> {
                    int id = Integer.parseInt(words[1]);
                    cluster.kill(id);
                    reported[id] = true;
                    System.out.println("node " + id + " killed");
                }
                case "start" -> {
                    int id = Integer.parseInt(words[1]);
                    cluster.restart(id);
                    reported[id] = false;
                    System.out.println("node " + id + " starting");
                }
                default -> System.out.println("unknown command '" + command + "': kill N, start N, status");
            }
        } catch (RuntimeException | java.io.IOException e) {
            System.out.println("cannot " + command + ": " + e.getMessage());
        }
        System.out.flush();
    }

    private static int reportExit(LocalCluster cluster, int id) {
        int code = cluster.processes().get(id - 1).exitValue();
        System.err.println("strata cluster: node " + id + " exited with code " + code + "; the end of "
            + cluster.nodeDir(id).resolve("server.log") + ":");
        System.err.println(cluster.logTail(id));
        return StrataCli.EXIT_FAILURE;
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // The JVM is shutting down and the hook is running (or ran): it stops the nodes.
        }
    }
}
