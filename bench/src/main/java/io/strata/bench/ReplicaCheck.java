package io.strata.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Checks that the data a benchmark wrote was really replicated: every node's log dir holds as many
 * segment bytes of each partition as the fullest replica. A cluster that reports a full ISR and
 * completes acks=all without copying the data to its followers passes every throughput figure;
 * this check is what tells it apart. Both Strata and Kafka keep a partition in
 * {@code <log dir>/<topic>-<partition>/} with {@code .log} segment files, and a follower copies
 * the leader's batches as they are, so equal sizes are expected.
 *
 * <p>Not thread-safe; reads the file system only.
 */
final class ReplicaCheck {
    /** How long followers get to reach the fullest replica (they fetch behind the high watermark). */
    private static final long SETTLE_TIMEOUT_MS = 30_000;

    private final List<Path> dataDirs;
    private final long settleTimeoutMs;

    /** Node N's log dir is {@code dataDirs.get(N - 1)}. */
    ReplicaCheck(List<Path> dataDirs, long settleTimeoutMs) {
        if (dataDirs.isEmpty() || settleTimeoutMs < 0) {
            throw new IllegalArgumentException("need log dirs and a non-negative timeout: dataDirs=" + dataDirs
                + " settleTimeoutMs=" + settleTimeoutMs);
        }
        this.dataDirs = List.copyOf(dataDirs);
        this.settleTimeoutMs = settleTimeoutMs;
    }

    /** From {@code --data-dirs}, one per node, waiting up to {@link #SETTLE_TIMEOUT_MS}. */
    ReplicaCheck(BenchCluster cluster) {
        this(Arrays.stream(cluster.required("data-dirs").split(",")).map(Path::of).toList(), SETTLE_TIMEOUT_MS);
        if (dataDirs.size() != cluster.nodeCount()) {
            throw new IllegalArgumentException("--data-dirs names " + dataDirs.size() + " dirs for " + cluster.nodeCount() + " nodes");
        }
    }

    /** Segment (.log) bytes of {@code topic-partition} in node {@code nodeId}'s log dir; 0 when it has none. */
    long diskBytes(int nodeId, String topic, int partition) throws IOException {
        Path dir = dataDirs.get(nodeId - 1).resolve(topic + "-" + partition);
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        long bytes = 0;
        try (DirectoryStream<Path> segments = Files.newDirectoryStream(dir, "*.log")) {
            for (Path segment : segments) {
                try {
                    bytes += Files.size(segment);
                } catch (NoSuchFileException e) {
                    // deleted between the listing and the size (a truncation or a roll): nothing to count
                }
            }
        }
        return bytes;
    }

    /**
     * Waits until every node holds as many bytes of each of {@code partitions} partitions of
     * {@code topic} as its fullest replica; null, or the worst partition seen when
     * the settle timeout passed.
     */
    String awaitReplicated(String topic, int partitions) throws IOException, InterruptedException {
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settleTimeoutMs);
        while (true) {
            String worst = null;
            for (int partition = 0; partition < partitions && worst == null; partition++) {
                long[] bytes = new long[dataDirs.size()];
                for (int node = 1; node <= dataDirs.size(); node++) {
                    bytes[node - 1] = diskBytes(node, topic, partition);
                }
                long max = Arrays.stream(bytes).max().orElse(0);
                if (max == 0 || Arrays.stream(bytes).anyMatch(b -> b < max)) {
                    worst = topic + "-" + partition + ":bytes_per_node=" + Arrays.toString(bytes).replace(" ", "");
                }
            }
            if (worst == null) {
                return null;
            }
            if (System.nanoTime() > deadlineNanos) {
                return worst;
            }
            Thread.sleep(BenchCluster.POLL_INTERVAL_MS);
        }
    }

    /** The {@code verify-replicas} phase: {@code <label>_replicated yes|no} for {@code --topics} of {@code --partitions}. */
    static void verifyPhase(BenchCluster cluster) throws Exception {
        ReplicaCheck check = new ReplicaCheck(cluster);
        int partitions = cluster.intOption("partitions", 6);
        String label = cluster.option("label", "replicas");
        for (String topic : cluster.required("topics").split(",")) {
            String failure = check.awaitReplicated(topic, partitions);
            if (failure != null) {
                cluster.result(label + "_replicated", "no");
                cluster.result(label + "_replicated_detail", failure);
                return;
            }
        }
        cluster.result(label + "_replicated", "yes");
    }
}
