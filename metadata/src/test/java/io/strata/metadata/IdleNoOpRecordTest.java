package io.strata.metadata;

import io.strata.common.BackgroundErrors;
import io.strata.common.MockTime;
import io.strata.raft.FileQuorumStateStore;
import io.strata.raft.FileRaftLog;
import io.strata.raft.RaftClient;
import io.strata.raft.RaftConfig;
import io.strata.raft.RaftNode;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code metadata.max.idle.interval.ms}: the active controller appends a NoOpRecord once every
 * interval of the (fake) clock, from becoming active and then from each NoOp; 0 appends none.
 * The controller's own ticks run on real time but only look at the fake clock, so the test
 * waits for the log to grow rather than for a tick.
 */
class IdleNoOpRecordTest {
    private static final long IDLE_MS = 500;

    @TempDir
    Path dir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private QuorumController controller;
    private MetadataLoader loader;
    private RaftNode quorum;
    private UnifiedLog log;

    private void start(long maxIdleIntervalMs) throws Exception {
        Path metadataDir = dir.resolve("__cluster_metadata-0");
        log = UnifiedLog.load(metadataDir, new TopicPartition("__cluster_metadata", 0),
            LogConfig.of(Map.of(), Map.of(LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1")), time, scheduler,
            new UnifiedLog.LoadParams(0, 0, false, 86_400_000L, false));
        loader = new MetadataLoader(1, new BackgroundErrors());
        controller = new QuorumController(new ControllerSettings(1, 1, (short) 1, true, Map.of(), "cluster", 9_000, maxIdleIntervalMs),
            Map.of("metadata.version", (short) 33), time, loader::whenApplied);
        quorum = new RaftNode(1, Set.of(1), "cluster", RaftConfig.DEFAULTS, new FileRaftLog(log), new FileQuorumStateStore(metadataDir),
            (destination, api, version, request) -> CompletableFuture.failedFuture(new IllegalStateException("one voter")), time, new Random(1),
            new RaftClient.Listener() { }, new MetadataCommitListener(loader, controller));
        controller.start(quorum);
        waitUntil(controller::isActive, "the controller becomes active");
        // The bootstrap features are written on becoming active; let them land.
        waitUntil(() -> loader.image().features().containsKey("metadata.version"), "the bootstrap features are applied");
    }

    @AfterEach
    void stop() throws Exception {
        if (quorum != null) {
            quorum.close();
            controller.close();
            loader.close();
            log.close();
        }
        scheduler.shutdownNow();
    }

    private static void waitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(2);
        }
    }

    private boolean pollNoOp() throws Exception {
        return controller.pollNoOp().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aNoOpRecordIsAppendedOnceEveryIdleInterval() throws Exception {
        start(IDLE_MS);
        long offset = loader.nextOffset();
        assertThat(pollNoOp()).as("not due before an interval has passed").isFalse();

        time.advance(IDLE_MS);
        waitUntil(() -> loader.nextOffset() == offset + 1, "one NoOp record after one interval");
        assertThat(pollNoOp()).as("the next one is due an interval later").isFalse();
        time.advance(IDLE_MS - 1);
        assertThat(pollNoOp()).isFalse();
        assertThat(loader.nextOffset()).isEqualTo(offset + 1);

        time.advance(1);
        waitUntil(() -> loader.nextOffset() == offset + 2, "a second NoOp record after the second interval");
        assertThat(loader.image().offset()).isEqualTo(offset + 1);
    }

    @Test
    void noNoOpRecordsWhenTheIntervalIsZero() throws Exception {
        start(0);
        long offset = loader.nextOffset();
        time.advance(10 * IDLE_MS);
        assertThat(pollNoOp()).isFalse();
        assertThat(loader.nextOffset()).isEqualTo(offset);
    }
}
