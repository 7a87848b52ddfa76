package io.strata.metadata;

import io.strata.common.BackgroundErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The metadata every role of a node reads: committed records only, applied in log order to an
 * immutable {@link MetadataImage} that is made the current {@link #image()} and then published
 * to every {@link MetadataPublisher}. Runs on its own thread ({@code strata-metadata-loader}); the
 * quorum hands it batches and snapshots ({@link #handleCommit}, {@link #handleSnapshot}) and
 * never waits for it.
 *
 * <p>A record that cannot be applied is a bug or a damaged log: this node's view would diverge
 * from the cluster's, so the loader stops applying (KAFKA-14275: apply errors are fatal), logs
 * the record, counts it and reports {@link #failure()}; the node's readiness reflects it.
 */
public final class MetadataLoader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataLoader.class);

    private final int nodeId;
    private final BackgroundErrors errors;
    private final ExecutorService thread;
    private final List<MetadataPublisher> publishers = new CopyOnWriteArrayList<>();
    /** Loader thread only: who waits for an offset to be published. */
    private final TreeMap<Long, List<CompletableFuture<Void>>> offsetWaiters = new TreeMap<>();
    private volatile MetadataImage image = MetadataImage.EMPTY;
    /** The offset after the last committed entry applied (batch ends and control batches included). */
    private volatile long nextOffset;
    private volatile Throwable failure;
    private volatile boolean publishing;
    // Snapshots (loader thread only).
    private SnapshotWriter snapshots;
    private long maxBytesBetweenSnapshots = Long.MAX_VALUE;
    private long maxSnapshotIntervalMs = Long.MAX_VALUE;
    private java.util.function.LongSupplier clock = System::currentTimeMillis;
    private long bytesSinceSnapshot;
    private long lastSnapshotMs;
    private int lastEpoch;
    private long lastAppendTimestampMs;
    private boolean snapshotInFlight;

    /** Writes a snapshot of the committed state below {@code endOffset}, whose last entry has {@code epoch}; completes with whether it was written. */
    @FunctionalInterface
    public interface SnapshotWriter {
        CompletableFuture<Boolean> write(long endOffset, int epoch, long lastContainedLogTimestampMs, List<byte[]> values);
    }

    public MetadataLoader(int nodeId, BackgroundErrors errors) {
        this.nodeId = nodeId;
        this.errors = errors;
        this.thread = Executors.newSingleThreadExecutor(task -> {
            Thread loader = new Thread(task, "strata-metadata-loader-" + nodeId);
            loader.setDaemon(true);
            return loader;
        });
    }

    /**
     * Snapshots this node's metadata log as Kafka's metadata loader does (KIP-630): once
     * {@code maxBytes} of records were applied since the last snapshot
     * ({@code metadata.log.max.record.bytes.between.snapshots}), or {@code maxIntervalMs} passed
     * with any new record ({@code metadata.log.max.snapshot.interval.ms}), the image is written
     * as records; the quorum then drops the log before it. Call before any batch arrives.
     */
    public void enableSnapshots(SnapshotWriter writer, long maxBytes, long maxIntervalMs, java.util.function.LongSupplier clockMs) {
        thread.execute(() -> {
            this.snapshots = writer;
            this.maxBytesBetweenSnapshots = maxBytes;
            this.maxSnapshotIntervalMs = maxIntervalMs;
            this.clock = clockMs;
            this.lastSnapshotMs = clockMs.getAsLong();
        });
    }

    /** The latest image: everything committed that this node has applied (its publishers may still be working on it). */
    public MetadataImage image() {
        return image;
    }

    /** The offset after the last committed entry applied (0 before any). */
    public long nextOffset() {
        return nextOffset;
    }

    /** Why applying stopped, or null. */
    public Throwable failure() {
        return failure;
    }

    public void addPublisher(MetadataPublisher publisher) {
        publishers.add(publisher);
    }

    /**
     * Starts publishing: every publisher gets the current image at once (from the empty image),
     * then every change. Before this, batches are applied to the image but not published (start-up
     * registers publishers after the node's components exist).
     */
    public CompletableFuture<Void> startPublishing() {
        return submit("start publishing", () -> {
            publishing = true;
            publishAll(MetadataImage.EMPTY, image);
        });
    }

    /**
     * Completes once the image includes every committed entry below {@code offset} and every
     * publisher has seen it (at once if so): after it, the logs of the partitions it assigned to
     * this node exist.
     */
    public CompletableFuture<Void> whenApplied(long offset) {
        CompletableFuture<Void> applied = new CompletableFuture<>();
        thread.execute(() -> {
            if (nextOffset >= offset) {
                applied.complete(null);
            } else {
                offsetWaiters.computeIfAbsent(offset, ignored -> new ArrayList<>()).add(applied);
            }
        });
        return applied;
    }

    /** A committed batch (quorum thread): applied on the loader thread. */
    public void handleCommit(MetadataBatch batch) {
        thread.execute(() -> {
            if (failure != null) {
                return;
            }
            lastEpoch = batch.epoch();
            lastAppendTimestampMs = batch.appendTimestampMs();
            if (batch.control() || batch.records().isEmpty()) {
                advance(batch.lastOffset() + 1);
                return;
            }
            MetadataImage previous = image;
            MetadataImage next;
            try {
                next = previous.apply(batch.records(), batch.lastOffset());
            } catch (RuntimeException e) {
                fail("batch " + batch.baseOffset() + "-" + batch.lastOffset() + " (" + batch.records() + ")", e);
                return;
            }
            install(previous, next);
            advance(batch.lastOffset() + 1);
            bytesSinceSnapshot += batch.sizeInBytes();
            maybeSnapshot();
        });
    }

    private void maybeSnapshot() {
        if (snapshots == null || snapshotInFlight || bytesSinceSnapshot == 0) {
            return;
        }
        long nowMs = clock.getAsLong();
        if (bytesSinceSnapshot < maxBytesBetweenSnapshots && nowMs - lastSnapshotMs < maxSnapshotIntervalMs) {
            return;
        }
        long endOffset = nextOffset;
        MetadataImage state = image;
        snapshotInFlight = true;
        long bytes = bytesSinceSnapshot;
        snapshots.write(endOffset, lastEpoch, lastAppendTimestampMs, MetadataRecords.encode(state.toRecords())).whenComplete((written, failure) ->
            thread.execute(() -> {
                snapshotInFlight = false;
                if (failure != null) {
                    errors.record("metadata-snapshot");
                    LOG.error("Node {}: could not write the metadata snapshot ending at offset {}", nodeId, endOffset, failure);
                    return;
                }
                bytesSinceSnapshot = Math.max(0, bytesSinceSnapshot - bytes);
                lastSnapshotMs = clock.getAsLong();
                if (written) {
                    LOG.info("Node {}: wrote the metadata snapshot ending at offset {} (epoch {}, {} bytes of records since the last)", nodeId,
                        endOffset, lastEpoch, bytes);
                }
            }));
    }

    /** The state is this snapshot's (quorum thread): the image is rebuilt from its records. */
    public void handleSnapshot(long endOffset, int epoch, List<io.strata.protocol.ApiMessage> records) {
        thread.execute(() -> {
            lastEpoch = epoch;
            bytesSinceSnapshot = 0;
            if (failure != null) {
                return;
            }
            MetadataImage previous = image;
            MetadataImage next;
            try {
                next = MetadataImage.EMPTY.apply(records, endOffset - 1);
            } catch (RuntimeException e) {
                fail("snapshot ending at " + endOffset, e);
                return;
            }
            LOG.info("Node {}: loaded the metadata snapshot ending at offset {} ({} records)", nodeId, endOffset, records.size());
            install(previous, next);
            advance(endOffset);
        });
    }

    /**
     * Makes {@code next} the current image, then publishes it. The image comes first, as Kafka's
     * broker sets its metadata cache before its replica manager applies the delta: Metadata names
     * a new partition's leader at once, and until the leader's log exists there a Produce, Fetch
     * or ListOffsets to it is answered NOT_LEADER_OR_FOLLOWER (retriable) from the replica
     * manager. {@link #whenApplied} still completes only after every publisher saw the image.
     */
    private void install(MetadataImage previous, MetadataImage next) {
        image = next;
        if (publishing) {
            publishAll(previous, next);
        }
    }

    private void publishAll(MetadataImage previous, MetadataImage next) {
        for (MetadataPublisher publisher : publishers) {
            try {
                publisher.publish(previous, next);
            } catch (RuntimeException e) {
                // A publisher's failure must not stop the others or the loader; it is counted and logged.
                errors.record("metadata-publisher");
                LOG.error("Node {}: a metadata publisher failed on the image at offset {}", nodeId, next.offset(), e);
            }
        }
    }

    private void advance(long offset) {
        if (offset <= nextOffset) {
            return;
        }
        nextOffset = offset;
        while (!offsetWaiters.isEmpty() && offsetWaiters.firstKey() <= offset) {
            for (CompletableFuture<Void> waiter : offsetWaiters.pollFirstEntry().getValue()) {
                waiter.complete(null);
            }
        }
    }

    private void fail(String what, RuntimeException e) {
        failure = e;
        errors.record("metadata-loader");
        LOG.error("Node {}: could not apply committed metadata {}; this node stops applying metadata", nodeId, what, e);
        for (List<CompletableFuture<Void>> waiters : offsetWaiters.values()) {
            for (CompletableFuture<Void> waiter : waiters) {
                waiter.completeExceptionally(e);
            }
        }
        offsetWaiters.clear();
    }

    private CompletableFuture<Void> submit(String name, Runnable work) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        thread.execute(() -> {
            try {
                work.run();
                done.complete(null);
            } catch (RuntimeException e) {
                LOG.error("Node {}: metadata loader task {} failed", nodeId, name, e);
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    @Override
    public void close() throws InterruptedException {
        thread.shutdown();
        thread.awaitTermination(10, TimeUnit.SECONDS);
    }
}
