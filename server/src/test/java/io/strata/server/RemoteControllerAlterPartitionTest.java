package io.strata.server;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.PartitionRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.server.api.ControllerApis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AlterPartition from a partition leader through {@code RemoteController} to the active
 * controller's {@code ControllerApis} (key 56 on the controller listener) on a three-node
 * combined cluster: every node's channel reaches the active controller (the non-active ones
 * answer NOT_CONTROLLER and the channel retries at the leader), the answer carries the committed
 * state, and a per-partition error comes back as it is. The controller listener advertises
 * AlterPartition 2-3 as Kafka's controller does; the broker listener does not.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteControllerAlterPartitionTest {
    private static final long TIMEOUT_MS = 30_000;
    private static final String TOPIC = "replicated";

    private Path dir;
    private InProcessCluster cluster;

    @BeforeAll
    void startCluster() throws Exception {
        dir = Files.createTempDirectory("strata-alter-partition");
        cluster = InProcessCluster.start(dir, 3, Map.of("controlled.shutdown.enable", "false"));
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName(TOPIC).setNumPartitions(-1)
            .setReplicationFactor((short) -1).setAssignments(new ArrayList<>(List.of(
                new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0).setBrokerIds(List.of(1, 2, 3)))));
        List<CreateTopicsResponseData.CreatableTopicResult> created = cluster.server(2).remoteController().createTopics(List.of(topic), false)
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        assertThat(ErrorCode.forCode(created.get(0).errorCode())).as(created.get(0).errorMessage()).isEqualTo(ErrorCode.NONE);
        cluster.awaitLeaders(TOPIC, 1, TIMEOUT_MS);
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private PartitionRegistration partition() {
        return cluster.server(1).metadata().image().topic(TOPIC).partition(0);
    }

    private AlterPartitionRequestData fromLeader(int... isr) {
        var image = cluster.server(1).metadata().image();
        PartitionRegistration current = partition();
        BrokerRegistration leader = image.brokers().get(current.leader());
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(current.leaderEpoch()).setPartitionEpoch(current.partitionEpoch());
        for (int member : isr) {
            data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member)
                .setBrokerEpoch(image.brokers().get(member).epoch()));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(leader.id()).setBrokerEpoch(leader.epoch());
        UUID topicId = image.topic(TOPIC).id();
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(topicId).setPartitions(new ArrayList<>(List.of(data))));
        return request;
    }

    @Test
    void everyNodesChannelReachesTheActiveControllerAndGetsTheCommittedState() throws Exception {
        for (int node = 1; node <= 3; node++) {
            PartitionRegistration before = partition();
            int[] isr = node % 2 == 1 ? new int[] {before.leader()} : new int[] {1, 2, 3};
            AlterPartitionResponseData response = cluster.server(node).remoteController().alterPartition(fromLeader(isr), (short) 3)
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            assertThat(response.errorCode()).as("node %d: top level", node).isZero();
            AlterPartitionResponseData.PartitionData answer = response.topics().get(0).partitions().get(0);
            assertThat(ErrorCode.forCode(answer.errorCode())).as("node %d", node).isEqualTo(ErrorCode.NONE);
            assertThat(answer.isr()).as("node %d", node).containsExactly(java.util.Arrays.stream(isr).boxed().toArray(Integer[]::new));
            assertThat(answer.leaderEpoch()).isEqualTo(before.leaderEpoch());
            assertThat(answer.partitionEpoch()).isEqualTo(before.partitionEpoch() + 1);
            InProcessCluster.awaitCondition(() -> partition().partitionEpoch() == answer.partitionEpoch(), TIMEOUT_MS,
                "node 1's image has the change of node " + node);
            assertThat(partition().isr()).containsExactly(java.util.Arrays.stream(isr).boxed().toArray(Integer[]::new));
        }
    }

    @Test
    void aPartitionErrorComesBackAsItIs() throws Exception {
        AlterPartitionRequestData stale = fromLeader(1, 2, 3);
        stale.topics().get(0).partitions().get(0).setPartitionEpoch(partition().partitionEpoch() - 1);
        AlterPartitionResponseData response = cluster.server(3).remoteController().alterPartition(stale, (short) 3)
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        assertThat(response.errorCode()).isZero();
        assertThat(response.topics().get(0).partitions().get(0).errorCode()).isEqualTo(ErrorCode.INVALID_UPDATE_VERSION.code());
        AlterPartitionRequestData staleBroker = fromLeader(1, 2, 3).setBrokerEpoch(-5);
        assertThat(cluster.server(2).remoteController().alterPartition(staleBroker, (short) 3).get(TIMEOUT_MS, TimeUnit.MILLISECONDS).errorCode())
            .isEqualTo(ErrorCode.STALE_BROKER_EPOCH.code());
    }

    @Test
    void onlyTheControllerListenerAdvertisesAlterPartition() {
        var controllerRange = ControllerApis.apiVersions().ranges().get(io.strata.protocol.message.ApiMessageType.ALTER_PARTITION);
        assertThat(controllerRange).isNotNull();
        assertThat(controllerRange.min()).isEqualTo((short) 2);
        assertThat(controllerRange.max()).isEqualTo((short) 3);
        assertThat(StrataServer.apiVersions().ranges()).doesNotContainKey(io.strata.protocol.message.ApiMessageType.ALTER_PARTITION);
    }
}
