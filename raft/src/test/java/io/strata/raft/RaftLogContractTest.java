package io.strata.raft;

import io.strata.common.MockTime;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.Records;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The same contract for the simulation's {@link MockLog} and the on-disk {@link FileRaftLog},
 * so that what the simulation proves holds for the log the broker runs.
 */
class RaftLogContractTest {
    @TempDir
    Path dir;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private UnifiedLog unified;

    @AfterEach
    void close() throws IOException {
        if (unified != null) {
            unified.close();
        }
        scheduler.shutdownNow();
    }

    private RaftLog log(String kind) throws IOException {
        if (kind.equals("mock")) {
            return new MockLog();
        }
        return openFileLog();
    }

    private FileRaftLog openFileLog() throws IOException {
        if (unified != null) {
            unified.close();
        }
        unified = UnifiedLog.load(dir.resolve("__cluster_metadata-0"), new TopicPartition("__cluster_metadata", 0), LogConfig.defaults(),
            new MockTime(), scheduler, new UnifiedLog.LoadParams(0, 0, false, Long.MAX_VALUE, false));
        return new FileRaftLog(unified);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"mock", "file"})
    void endOffsetsFollowEpochs(String kind) throws IOException {
        RaftLog log = log(kind);
        assertThat(log.endOffset()).isEqualTo(OffsetAndEpoch.ZERO);
        assertThat(log.endOffsetForEpoch(0)).isEqualTo(OffsetAndEpoch.ZERO);
        log.appendControlAsLeader(ControlRecordType.LEADER_CHANGE, bytes("lc1"), 1, 0);
        assertThat(log.appendAsLeader(List.of(bytes("a"), bytes("b")), 1, 0)).isEqualTo(2);
        log.appendControlAsLeader(ControlRecordType.LEADER_CHANGE, bytes("lc3"), 3, 0);
        log.appendAsLeader(List.of(bytes("c")), 3, 0);
        assertThat(log.endOffset()).isEqualTo(new OffsetAndEpoch(5, 3));
        assertThat(log.endOffsetForEpoch(3)).isEqualTo(new OffsetAndEpoch(5, 3));
        assertThat(log.endOffsetForEpoch(7)).isEqualTo(new OffsetAndEpoch(5, 3));
        assertThat(log.endOffsetForEpoch(2)).isEqualTo(new OffsetAndEpoch(3, 1));
        assertThat(log.endOffsetForEpoch(1)).isEqualTo(new OffsetAndEpoch(3, 1));
        assertThat(log.endOffsetForEpoch(0)).isEqualTo(OffsetAndEpoch.ZERO);
        assertThatThrownBy(() -> log.appendAsLeader(List.of(bytes("x")), 2, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"mock", "file"})
    void aFollowerCopiesTheLeadersBatchesAndTruncates(String kind) throws IOException {
        MockLog leader = new MockLog();
        leader.appendControlAsLeader(ControlRecordType.LEADER_CHANGE, bytes("lc1"), 1, 0);
        leader.appendAsLeader(List.of(bytes("a"), bytes("b")), 1, 0);
        leader.appendAsLeader(List.of(bytes("c")), 2, 0);
        RaftLog follower = log(kind);
        follower.appendAsFollower(leader.read(0, 1 << 20));
        assertThat(follower.endOffset()).isEqualTo(new OffsetAndEpoch(4, 2));
        assertThat(follower.endOffsetForEpoch(1)).isEqualTo(new OffsetAndEpoch(3, 1));
        Records again = follower.read(1, 1 << 20);
        assertThat(again.sizeInBytes()).isEqualTo(((MemoryRecords) leader.read(1, 1 << 20)).sizeInBytes());
        assertThatThrownBy(() -> follower.appendAsFollower(leader.read(1, 1 << 20))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("does not start at the log end");
        follower.flush();
        assertThat(follower.flushedOffset()).isEqualTo(4);
        follower.truncateTo(3);
        assertThat(follower.endOffset()).isEqualTo(new OffsetAndEpoch(3, 1));
        assertThat(follower.flushedOffset()).isLessThanOrEqualTo(3);
        follower.appendAsFollower(MemoryRecords.readableRecords(ByteBuffer.wrap(new byte[0])));
        assertThat(follower.endOffset().offset()).isEqualTo(3);
    }

    /** lc(0, e1), a(1, e1), b(2, e1), lc(3, e3), c(4, e3), one batch each. */
    private static void fiveEntries(RaftLog log) {
        log.appendControlAsLeader(ControlRecordType.LEADER_CHANGE, bytes("lc1"), 1, 0);
        log.appendAsLeader(List.of(bytes("a")), 1, 0);
        log.appendAsLeader(List.of(bytes("b")), 1, 0);
        log.appendControlAsLeader(ControlRecordType.LEADER_CHANGE, bytes("lc3"), 3, 0);
        log.appendAsLeader(List.of(bytes("c")), 3, 0);
        log.flush();
    }

    private static MemoryRecords memory(Records records) {
        ByteBuffer buffer = ByteBuffer.allocate(records.sizeInBytes());
        records.writeTo(new io.strata.protocol.ByteBufferWriter(buffer));
        return MemoryRecords.readableRecords(buffer.flip());
    }

    private static void writeSnapshot(RaftLog log, OffsetAndEpoch id, List<byte[]> values) {
        RecordsSnapshotWriter writer = new RecordsSnapshotWriter(log.createSnapshot(id), 0);
        writer.append(values, 0);
        writer.freeze(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"mock", "file"})
    void aSnapshotIsVisibleOnlyOnceFrozenAndThePrefixGoesOnlyUpToTheHighWatermark(String kind) throws IOException {
        RaftLog log = log(kind);
        fiveEntries(log);
        RecordsSnapshotWriter writer = new RecordsSnapshotWriter(log.createSnapshot(new OffsetAndEpoch(3, 1)), 0);
        writer.append(List.of(bytes("a"), bytes("b")), 0);
        assertThat(log.latestSnapshotId()).isEmpty();
        assertThat(log.readSnapshot(new OffsetAndEpoch(3, 1))).isEmpty();
        writer.freeze(0);
        assertThat(log.latestSnapshotId()).contains(new OffsetAndEpoch(3, 1));
        List<RecordBatch> batches = log.readSnapshot(new OffsetAndEpoch(3, 1)).orElseThrow().batches();
        assertThat(batches).hasSize(3);
        assertThat(((DefaultRecordBatch) batches.get(0)).isControlBatch()).isTrue();
        assertThat(((DefaultRecordBatch) batches.get(1)).isControlBatch()).isFalse();
        assertThat(((DefaultRecordBatch) batches.get(2)).isControlBatch()).isTrue();

        assertThat(log.deleteBeforeSnapshot(2)).as("snapshot above the high watermark").isFalse();
        assertThat(log.logStartOffset()).isZero();
        assertThat(log.deleteBeforeSnapshot(5)).isTrue();
        assertThat(log.logStartOffset()).isEqualTo(3);
        assertThat(log.endOffset()).isEqualTo(new OffsetAndEpoch(5, 3));
        assertThat(log.endOffsetForEpoch(3)).isEqualTo(new OffsetAndEpoch(5, 3));
        assertThat(log.endOffsetForEpoch(2)).as("older than the log: the snapshot").isEqualTo(new OffsetAndEpoch(3, 1));
        assertThat(log.endOffsetForEpoch(0)).isEqualTo(OffsetAndEpoch.ZERO);
        assertThat(memory(log.read(3, 1 << 20)).batches().iterator().next().lastOffset()).isEqualTo(3);
        assertThatThrownBy(() -> log.truncateTo(2)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("below the log start");
    }

    @ParameterizedTest
    @ValueSource(strings = {"mock", "file"})
    void aFollowerStartsItsLogAtASnapshotCopiedInChunks(String kind) throws IOException {
        MockLog leader = new MockLog();
        writeSnapshot(leader, new OffsetAndEpoch(10, 4), List.of(bytes("state-1"), bytes("state-2")));
        leader.truncateFullyAndStartAt(new OffsetAndEpoch(10, 4));
        leader.appendAsLeader(List.of(bytes("d")), 5, 0);
        SnapshotReader source = leader.readSnapshot(new OffsetAndEpoch(10, 4)).orElseThrow();

        RaftLog follower = log(kind);
        fiveEntries(follower);
        SnapshotWriter copy = follower.createSnapshot(source.snapshotId());
        for (long position = 0; position < source.sizeInBytes(); position += 7) {
            copy.append(source.read(position, 7));
        }
        copy.freeze();
        follower.truncateFullyAndStartAt(source.snapshotId());
        assertThat(follower.logStartOffset()).isEqualTo(10);
        assertThat(follower.endOffset()).isEqualTo(new OffsetAndEpoch(10, 4));
        assertThat(follower.endOffsetForEpoch(5)).isEqualTo(new OffsetAndEpoch(10, 4));
        assertThat(follower.readSnapshot(source.snapshotId()).orElseThrow().read(0, Integer.MAX_VALUE))
            .isEqualTo(source.read(0, Integer.MAX_VALUE));
        follower.appendAsFollower(leader.read(10, 1 << 20));
        assertThat(follower.endOffset()).isEqualTo(new OffsetAndEpoch(11, 5));
    }

    @org.junit.jupiter.api.Test
    void aCrashBeforeFreezeLeavesNoSnapshotAndARestartLoadsSnapshotAndLogTail() throws IOException {
        FileRaftLog log = openFileLog();
        fiveEntries(log);
        SnapshotWriter unfinished = log.createSnapshot(new OffsetAndEpoch(2, 1));
        unfinished.append(ByteBuffer.wrap(bytes("partial")));
        Path part = unified.dir().resolve("00000000000000000002-0000000001.checkpoint.part");
        assertThat(part).exists();

        log = openFileLog(); // the process died before the freeze
        assertThat(log.latestSnapshotId()).isEmpty();
        assertThat(part).doesNotExist();
        writeSnapshot(log, new OffsetAndEpoch(3, 1), List.of(bytes("a"), bytes("b")));
        assertThat(unified.dir().resolve("00000000000000000003-0000000001.checkpoint")).exists();
        assertThat(log.deleteBeforeSnapshot(5)).isTrue();

        log = openFileLog();
        assertThat(log.latestSnapshotId()).contains(new OffsetAndEpoch(3, 1));
        assertThat(log.logStartOffset()).isEqualTo(3);
        assertThat(log.endOffset()).isEqualTo(new OffsetAndEpoch(5, 3));
        assertThat(log.endOffsetForEpoch(1)).isEqualTo(new OffsetAndEpoch(3, 1));
        try (var files = Files.list(unified.dir())) {
            assertThat(files.map(file -> file.getFileName().toString()).filter(name -> name.contains(".checkpoint")))
                .containsExactly("00000000000000000003-0000000001.checkpoint");
        }
    }
}
