package io.strata.raft;

import io.strata.common.MockTime;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Records;
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
}
