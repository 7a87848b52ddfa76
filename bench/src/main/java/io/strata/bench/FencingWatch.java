package io.strata.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Watches which brokers the cluster reports fenced: DescribeCluster with
 * {@code includeFencedBrokers} (KIP-1073, Kafka 4.0+; {@link Node#isFenced()}), polled every
 * {@link #POLL_INTERVAL_MS} through an Admin on every node's listener.
 *
 * <p>A broker seen fenced while it is not {@linkplain #expectDown expected down} is a "live
 * fencing": the issue's "no live broker ever fenced under load". Each unfenced → fenced change of
 * a live broker counts once. For an expected-down broker the watch notes when it was first seen
 * fenced after {@link #expectDown} (kill → fenced).
 *
 * <p>Thread-safety: one watch thread polls; {@link #expectDown}, {@link #expectUp},
 * {@link #firstFencedNanos} and {@link #liveFencings} may be called from any thread. The watch
 * thread never dies silently: a failure of one poll is counted ({@link #failedPolls}), anything
 * else ends the watch and is reported by {@link #close}.
 */
final class FencingWatch implements AutoCloseable {
    static final long POLL_INTERVAL_MS = 100;

    private final Admin admin;
    private final Thread thread;
    private final Set<Integer> expectedDown = ConcurrentHashMap.newKeySet();
    private final Set<Integer> fencedNow = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<Integer, Long> firstFencedNanos = new ConcurrentHashMap<>();
    private final List<String> liveFencings = new ArrayList<>(); // guarded by this
    private volatile boolean stopped;
    private volatile long failedPolls;
    private volatile long polls;
    private volatile Throwable failure;

    FencingWatch(BenchCluster cluster) {
        this.admin = cluster.admin(cluster.allBootstrap());
        this.thread = new Thread(this::runLoop, "fencing-watch");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** From now on node {@code nodeId} being fenced is expected (it is killed, paused or stopped). */
    void expectDown(int nodeId) {
        firstFencedNanos.remove(nodeId);
        expectedDown.add(nodeId);
    }

    /** Node {@code nodeId} is live again (back in the ISR): a fencing of it counts from now on. */
    void expectUp(int nodeId) {
        expectedDown.remove(nodeId);
    }

    /** When node {@code nodeId} was first seen fenced since {@link #expectDown}, or -1. */
    long firstFencedNanos(int nodeId) {
        return firstFencedNanos.getOrDefault(nodeId, -1L);
    }

    synchronized List<String> liveFencings() {
        return List.copyOf(liveFencings);
    }

    long failedPolls() {
        return failedPolls;
    }

    long polls() {
        return polls;
    }

    private void runLoop() {
        try {
            while (!stopped) {
                pollOnce();
                Thread.sleep(POLL_INTERVAL_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            failure = t;
        }
    }

    private void pollOnce() throws InterruptedException {
        Collection<Node> nodes;
        try {
            nodes = admin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true).timeoutMs(5_000))
                .nodes().get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            failedPolls++;
            return;
        }
        polls++;
        long nowNanos = System.nanoTime();
        for (Node node : nodes) {
            if (!node.isFenced()) {
                fencedNow.remove(node.id());
                continue;
            }
            boolean newlyFenced = fencedNow.add(node.id());
            if (expectedDown.contains(node.id())) {
                firstFencedNanos.putIfAbsent(node.id(), nowNanos);
            } else if (newlyFenced) {
                synchronized (this) {
                    liveFencings.add("node" + node.id() + "@" + java.time.Instant.now());
                }
            }
        }
    }

    /** Stops the watch; throws if the watch thread died of anything but a failed poll. */
    @Override
    public void close() throws InterruptedException {
        stopped = true;
        thread.interrupt();
        thread.join(TimeUnit.SECONDS.toMillis(30));
        admin.close(java.time.Duration.ofSeconds(5));
        if (failure != null) {
            throw new IllegalStateException("the fencing watch failed after " + polls + " polls", failure);
        }
    }

    /** Reports {@code <prefix>_live_fenced}, its details and the poll counts. */
    void report(BenchCluster cluster, String prefix) {
        List<String> fencings = liveFencings();
        cluster.result(prefix + "_live_fenced", Integer.toString(fencings.size()));
        if (!fencings.isEmpty()) {
            cluster.result(prefix + "_live_fenced_detail", String.join(",", fencings));
        }
        cluster.result(prefix + "_fencing_polls", polls + "_ok_" + failedPolls + "_failed");
    }

    /** The {@code watch} phase: watches until {@code --stop-file} exists, then reports under {@code --label}. */
    static void watchUntilStopFile(BenchCluster cluster) throws Exception {
        Path stopFile = Path.of(cluster.required("stop-file"));
        String label = cluster.option("label", "watch");
        long deadlineNanos = System.nanoTime() + TimeUnit.HOURS.toNanos(2);
        try (FencingWatch watch = new FencingWatch(cluster)) {
            while (!Files.exists(stopFile)) {
                if (System.nanoTime() > deadlineNanos) {
                    throw new IllegalStateException("no stop file " + stopFile + " after 2 h");
                }
                Thread.sleep(POLL_INTERVAL_MS);
            }
            watch.report(cluster, label);
        }
    }
}
