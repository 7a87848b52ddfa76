package io.strata.server.replica;

import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * KIP-704 on the leader: a partition this broker leads after an unclean election (the image says
 * RECOVERING, ISR = [leader]) sends one AlterPartition with the same ISR and RECOVERED, and takes
 * the controller's answer as its committed state; a cleanly elected leader sends nothing.
 */
class UncleanLeaderRecoveryTest {
    private static final int LEADER = 2;
    private static final UUID TOPIC_ID = new UUID(7, 7);
    private static final TopicPartition TP = new TopicPartition("recovering", 0);

    @TempDir
    Path dataDir;
    private LogManager logManager;
    private FakeReplicaContext context;
    private Partition partition;

    @BeforeEach
    void start() throws Exception {
        context = new FakeReplicaContext(LEADER);
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            context.time);
        logManager.startup(topic -> LogConfig.defaults());
        UnifiedLog log = logManager.getOrCreateLog(TP, Optional.of(TOPIC_ID), LogConfig.of(Map.of(), Map.of()));
        partition = new Partition(TP, TOPIC_ID, log, context);
    }

    @AfterEach
    void stop() throws Exception {
        logManager.close();
    }

    private static PartitionRegistration registration(byte recoveryState) {
        int[] none = new int[0];
        return new PartitionRegistration(new int[] {1, LEADER}, new int[] {LEADER}, LEADER, 4, 9, none, none, none, none, recoveryState);
    }

    @Test
    void anUncleanlyElectedLeaderMarksThePartitionRecovered() {
        partition.makeLeader(registration(PartitionRegistration.RECOVERING), context.time.milliseconds());
        assertThat(context.submitted).hasSize(1);
        FakeReplicaContext.Submitted sent = context.submitted.get(0);
        assertThat(sent.newIsr()).containsExactly(LEADER);
        assertThat(sent.change().leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERED);
        assertThat(sent.change().leaderEpoch()).isEqualTo(4);
        assertThat(sent.change().partitionEpoch()).isEqualTo(9);
        assertThat(partition.partitionState()).isInstanceOf(PartitionState.PendingRecovery.class);

        sent.future().complete(new AlterPartitionResponseData.PartitionData().setPartitionIndex(0).setErrorCode(ErrorCode.NONE.code())
            .setLeaderId(LEADER).setLeaderEpoch(4).setPartitionEpoch(10).setIsr(List.of(LEADER))
            .setLeaderRecoveryState(PartitionRegistration.RECOVERED));
        assertThat(partition.partitionState()).isEqualTo(new PartitionState.Committed(java.util.Set.of(LEADER), PartitionRegistration.RECOVERED));

        partition.makeLeader(registration(PartitionRegistration.RECOVERED), context.time.milliseconds());
        assertThat(context.submitted).as("nothing more to recover").hasSize(1);
    }

    @Test
    void aCleanlyElectedLeaderSendsNothing() {
        partition.makeLeader(registration(PartitionRegistration.RECOVERED), context.time.milliseconds());
        assertThat(context.submitted).isEmpty();
    }
}
