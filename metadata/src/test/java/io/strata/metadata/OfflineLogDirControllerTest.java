package io.strata.metadata;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AssignReplicasToDirsRequestData;
import io.strata.protocol.message.AssignReplicasToDirsResponseData;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * KIP-858 as far as Strata's controller goes: a broker reports a failed log directory in its
 * heartbeat's OfflineLogDirs, then assigns the directory's replicas to it (AssignReplicasToDirs):
 * those replicas go offline (the broker leaves the ISR, a partition it led gets another ISR
 * member as leader); an assignment to a directory not reported offline changes nothing.
 */
class OfflineLogDirControllerTest {
    private static final String TOPIC = "replicated";
    private static final UUID FAILED_DIR = new UUID(7, 7);

    @TempDir
    Path dir;

    private final Map<Integer, Long> epochs = new HashMap<>();
    private ControllerHarness harness;

    @BeforeEach
    void start() throws Exception {
        harness = new ControllerHarness(dir, Map.of());
        for (int id = 1; id <= 3; id++) {
            long epoch = harness.register(id, -1);
            epochs.put(id, epoch);
            assertThat(harness.heartbeat(id, epoch, false, false).isFenced()).isFalse();
        }
        harness.createTopic(TOPIC, List.of(1, 2, 3), Map.of());
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(1);
        assertThat(harness.partition(TOPIC).isr()).containsExactly(1, 2, 3);
    }

    @AfterEach
    void stop() throws Exception {
        harness.close();
    }

    @Test
    void replicasAssignedToAReportedOfflineDirectoryLoseLeadershipAndIsr() throws Exception {
        int leaderEpoch = harness.partition(TOPIC).leaderEpoch();
        reportOffline(1, FAILED_DIR);

        AssignReplicasToDirsResponseData response = assign(1, epochs.get(1), FAILED_DIR);

        assertThat(response.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(response.directories().get(0).topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).leader() != 1, "leadership moves off the offline replica");
        PartitionRegistration partition = harness.partition(TOPIC);
        assertThat(partition.leader()).isIn(2, 3);
        assertThat(partition.isr()).containsExactlyInAnyOrder(2, 3);
        assertThat(partition.leaderEpoch()).isGreaterThan(leaderEpoch);
        assertThat(harness.image().brokers().get(1).fenced()).as("only the directory's replicas go, not the broker").isFalse();
    }

    @Test
    void anAssignmentToADirectoryNotReportedOfflineChangesNothing() throws Exception {
        long offsetBefore = harness.loader.nextOffset();

        AssignReplicasToDirsResponseData response = assign(1, epochs.get(1), FAILED_DIR);

        assertThat(response.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(1);
        assertThat(harness.partition(TOPIC).isr()).containsExactly(1, 2, 3);
        assertThat(harness.loader.nextOffset()).as("no record written").isEqualTo(offsetBefore);
    }

    @Test
    void aStaleBrokerEpochOrUnknownTopicIsRefused() throws Exception {
        reportOffline(1, FAILED_DIR);

        assertThat(assign(1, epochs.get(1) - 1, FAILED_DIR).errorCode()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH.code());
        AssignReplicasToDirsRequestData unknownTopic = new AssignReplicasToDirsRequestData().setBrokerId(1).setBrokerEpoch(epochs.get(1));
        unknownTopic.directories().add(directory(FAILED_DIR, new UUID(9, 9)));
        AssignReplicasToDirsResponseData response = harness.controller.assignReplicasToDirs(unknownTopic).get(10, TimeUnit.SECONDS);
        assertThat(response.directories().get(0).topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_ID.code());
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(1);
    }

    @Test
    void aReRegisteredBrokerStartsWithEveryDirectoryOnline() throws Exception {
        reportOffline(1, FAILED_DIR);
        long restarted = harness.register(1, epochs.get(1));
        epochs.put(1, restarted);
        assertThat(harness.heartbeat(1, restarted, false, false).errorCode()).isEqualTo(ErrorCode.NONE.code());
        long offsetBefore = harness.loader.nextOffset();

        AssignReplicasToDirsResponseData response = assign(1, restarted, FAILED_DIR);

        assertThat(response.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(harness.loader.nextOffset()).as("the restarted broker's directory is online: no record").isEqualTo(offsetBefore);
    }

    private void reportOffline(int broker, UUID directory) throws Exception {
        var heartbeat = harness.controller.brokerHeartbeat(new BrokerHeartbeatRequestData().setBrokerId(broker).setBrokerEpoch(epochs.get(broker))
            .setCurrentMetadataOffset(harness.loader.nextOffset() - 1).setOfflineLogDirs(new java.util.ArrayList<>(List.of(directory))))
            .get(10, TimeUnit.SECONDS);
        assertThat(heartbeat.errorCode()).isEqualTo(ErrorCode.NONE.code());
    }

    private AssignReplicasToDirsResponseData assign(int broker, long brokerEpoch, UUID directory) throws Exception {
        AssignReplicasToDirsRequestData request = new AssignReplicasToDirsRequestData().setBrokerId(broker).setBrokerEpoch(brokerEpoch);
        request.directories().add(directory(directory, harness.image().topic(TOPIC).id()));
        return harness.controller.assignReplicasToDirs(request).get(10, TimeUnit.SECONDS);
    }

    private static AssignReplicasToDirsRequestData.DirectoryData directory(UUID directory, UUID topicId) {
        AssignReplicasToDirsRequestData.DirectoryData data = new AssignReplicasToDirsRequestData.DirectoryData().setId(directory);
        AssignReplicasToDirsRequestData.TopicData topic = new AssignReplicasToDirsRequestData.TopicData().setTopicId(topicId);
        topic.partitions().add(new AssignReplicasToDirsRequestData.PartitionData().setPartitionIndex(0));
        data.topics().add(topic);
        return data;
    }
}
