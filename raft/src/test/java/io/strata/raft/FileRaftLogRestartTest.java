package io.strata.raft;

import io.strata.common.MockTime;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;

/** A replica on disk ({@link FileRaftLog}) that snapshots, drops its log prefix and restarts from snapshot + log tail. */
class FileRaftLogRestartTest {
    @TempDir
    Path dir;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final RaftSimulation.MemoryQuorumStateStore store = new RaftSimulation.MemoryQuorumStateStore();
    private UnifiedLog unified;
    private long nowMs;

    @AfterEach
    void close() throws IOException {
        if (unified != null) {
            unified.close();
        }
        scheduler.shutdownNow();
    }

    private RaftClient start() throws IOException {
        if (unified != null) {
            unified.close();
        }
        unified = UnifiedLog.load(dir.resolve("__cluster_metadata-0"), new TopicPartition("__cluster_metadata", 0), LogConfig.defaults(),
            new MockTime(), scheduler, new UnifiedLog.LoadParams(0, 0, false, Long.MAX_VALUE, false));
        RaftClient client = new RaftClient(1, Set.of(1), "cluster", RaftConfig.DEFAULTS, new FileRaftLog(unified), store, message -> { },
            new Random(1), new RaftClient.Listener() { });
        client.initialize(nowMs);
        for (int i = 0; i < 100 && !client.isLeader(); i++) {
            nowMs += 100;
            client.poll(nowMs);
        }
        assertThat(client.isLeader()).isTrue();
        return client;
    }

    private void appendAndCommit(RaftClient client, int count) {
        for (int i = 0; i < count; i++) {
            client.append(List.of(("v" + i).getBytes(StandardCharsets.UTF_8)), nowMs);
        }
        nowMs += 10;
        client.poll(nowMs);
        assertThat(client.highWatermark()).isEqualTo(client.log().endOffset().offset());
    }

    @Test
    void aRestartLoadsTheSnapshotAndTheLogTail() throws IOException {
        RaftClient client = start();
        appendAndCommit(client, 30);
        OffsetAndEpoch snapshotId = new OffsetAndEpoch(client.highWatermark(), client.epoch());
        try (RecordsSnapshotWriter writer = client.createSnapshot(snapshotId, nowMs).orElseThrow()) {
            writer.append(List.of("state".getBytes(StandardCharsets.UTF_8)), nowMs);
            writer.freeze(nowMs);
        }
        client.poll(nowMs);
        assertThat(client.log().logStartOffset()).isEqualTo(snapshotId.offset());
        appendAndCommit(client, 5);
        OffsetAndEpoch end = client.log().endOffset();

        client = start();
        assertThat(client.log().latestSnapshotId()).contains(snapshotId);
        assertThat(client.log().logStartOffset()).isEqualTo(snapshotId.offset());
        assertThat(client.log().endOffset().offset()).isGreaterThanOrEqualTo(end.offset()); // plus the new epoch's LEADER_CHANGE
        assertThat(client.log().endOffsetForEpoch(snapshotId.epoch()).offset()).isEqualTo(end.offset());
        appendAndCommit(client, 5);
        assertThat(client.epoch()).isGreaterThan(snapshotId.epoch());
    }
}
