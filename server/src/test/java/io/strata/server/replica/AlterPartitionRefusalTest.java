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

/** Kafka keeps a change refused with INVALID_REQUEST pending until new metadata; no retry per fetch. */
class AlterPartitionRefusalTest {
    private static final TopicPartition TP = new TopicPartition("replicated", 0);
    private static final UUID TOPIC_ID = UUID.randomUUID();
    @TempDir
    Path dataDir;
    private LogManager logManager;
    private FakeReplicaContext context;
    private UnifiedLog log;
    private Partition partition;

    @BeforeEach
    void start() throws Exception {
        context = new FakeReplicaContext(1);
        context.brokerEpochs.put(2, 10L);
        context.brokerEpochs.put(3, 20L);
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            context.time);
        logManager.startup(topic -> LogConfig.defaults());
        log = logManager.getOrCreateLog(TP, Optional.of(TOPIC_ID), LogConfig.of(Map.of(), Map.of(LogConfig.MIN_IN_SYNC_REPLICAS, "2")));
        partition = new Partition(TP, TOPIC_ID, log, context);
    }

    @AfterEach
    void stop() throws Exception {
        logManager.close();
    }

    @Test
    void anExpandRefusedWithInvalidRequestIsNotResentUntilTheImageChanges() {
        partition.makeLeader(new PartitionRegistration(new int[] {1, 2, 3}, new int[] {1, 3}, 1, 0, 0), context.time.milliseconds());
        for (int fetch = 0; fetch < 10; fetch++) {
            partition.updateFollowerFetchState(2, 0, 0L, context.time.milliseconds(), log.logEndOffset(), 10L);
            if (context.submitted.size() > fetch) {
                context.submitted.get(fetch).future().complete(new AlterPartitionResponseData.PartitionData().setPartitionIndex(0)
                    .setErrorCode(ErrorCode.INVALID_REQUEST.code()));
            }
        }
        // Kafka (Partition.handleAlterPartitionError): INVALID_REQUEST leaves the change pending until new metadata: one request.
        assertThat(context.submitted).hasSize(1);
    }
}
