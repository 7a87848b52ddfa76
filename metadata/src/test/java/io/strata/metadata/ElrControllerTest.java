package io.strata.metadata;

import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.strata.metadata.ControllerHarness.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * KIP-966 on the controller with {@code eligible.leader.replicas.version=1} finalized: an RF=3
 * topic with min.insync.replicas=2 loses its brokers one by one; members leaving below min ISR
 * go to the ELR, the ISR empties, an unfenced ELR member leads again; a broker that restarts
 * after an unclean shutdown (PreviousBrokerEpoch not its last epoch) leaves every ELR; an
 * AlterPartition shrink below min ISR fills the ELR and an expand back clears it; KAFKA-16540's
 * config rules (broker-level min ISR refused, cluster-level removal refused, broker-level values
 * removed when ELR turns on); turning ELR off (a downgrade type is needed; the ELR stays until the
 * partition's next change, as Kafka).
 */
class ElrControllerTest {
    private static final String TOPIC = "elr";

    @TempDir
    Path dir;

    private ControllerHarness harness;
    private final Map<Integer, Long> epochs = new HashMap<>();

    @BeforeEach
    void start() throws Exception {
        harness = new ControllerHarness(dir, Map.of("metadata.version", (short) 33, ReplicationControl.ELR_FEATURE, (short) 1));
        for (int id = 1; id <= 3; id++) {
            long epoch = harness.register(id, -1);
            epochs.put(id, epoch);
            assertThat(harness.heartbeat(id, epoch, false, false).isFenced()).isFalse();
        }
        harness.createTopic(TOPIC, List.of(1, 2, 3), Map.of("min.insync.replicas", "2"));
        assertThat(ReplicationControl.elrEnabled(harness.image())).isTrue();
    }

    @AfterEach
    void stop() throws Exception {
        harness.close();
    }

    private PartitionRegistration partition() {
        return harness.partition(TOPIC);
    }

    private void fence(int id) throws Exception {
        harness.heartbeat(id, epochs.get(id), false, true);
        waitUntil(() -> harness.image().brokers().get(id).fenced(), "broker " + id + " is fenced");
    }

    private void fenceAll() throws Exception {
        fence(1);
        assertThat(partition().isr()).containsExactly(2, 3);
        assertThat(partition().leader()).isEqualTo(2);
        assertThat(partition().elr()).as("ISR still at min ISR").isEmpty();
        fence(2);
        assertThat(partition().isr()).containsExactly(3);
        assertThat(partition().elr()).as("2 left below min ISR").containsExactly(2);
        fence(3);
        assertThat(partition().isr()).as("with ELR the ISR may empty").isEmpty();
        assertThat(partition().leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(partition().elr()).containsExactly(2, 3);
        assertThat(partition().lastKnownElr()).as("the last known leader").containsExactly(3);
    }

    @Test
    void anUnfencedElrMemberLeadsAfterTheIsrEmptied() throws Exception {
        fenceAll();
        assertThat(harness.controller.electionsFromEligibleLeaderReplicas()).as("fencing elects nobody from the ELR").isZero();
        int leaderEpoch = partition().leaderEpoch();
        assertThat(harness.heartbeat(2, epochs.get(2), false, false).isFenced()).isFalse();
        waitUntil(() -> partition().leader() == 2, "broker 2 leads from the ELR");
        waitUntil(() -> harness.controller.electionsFromEligibleLeaderReplicas() == 1, "the ELR election is counted once committed");
        assertThat(harness.controller.uncleanLeaderElections()).as("an ELR election is clean").isZero();
        assertThat(partition().isr()).containsExactly(2);
        assertThat(partition().elr()).containsExactly(3);
        assertThat(partition().lastKnownElr()).isEmpty();
        assertThat(partition().leaderEpoch()).isEqualTo(leaderEpoch + 1);
        assertThat(partition().leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERED);
    }

    @Test
    void aBrokerRestartingAfterAnUncleanShutdownLeavesEveryElr() throws Exception {
        fenceAll();
        long restarted3 = harness.register(3, -1);
        assertThat(partition().elr()).as("3 did not stop cleanly").containsExactly(2);
        long restarted2 = harness.register(2, epochs.get(2));
        assertThat(partition().elr()).as("2 stopped cleanly at its last epoch").containsExactly(2);
        assertThat(harness.heartbeat(3, restarted3, false, false).isFenced()).isFalse();
        assertThat(partition().hasLeader()).as("3 is in no ELR and the ISR is empty").isFalse();
        assertThat(harness.heartbeat(2, restarted2, false, false).isFenced()).isFalse();
        waitUntil(() -> partition().leader() == 2, "broker 2 leads from the ELR");
        assertThat(partition().isr()).containsExactly(2);
        assertThat(partition().elr()).isEmpty();
    }

    @Test
    void anAlterPartitionShrinkBelowMinIsrFillsTheElrAndAnExpandClearsIt() throws Exception {
        AlterPartitionResponseData.PartitionData shrunk = alter(1);
        assertThat(shrunk.errorCode()).isZero();
        assertThat(partition().isr()).containsExactly(1);
        assertThat(partition().elr()).containsExactly(2, 3);
        AlterPartitionResponseData.PartitionData expanded = alter(1, 3);
        assertThat(expanded.errorCode()).isZero();
        assertThat(partition().isr()).containsExactly(1, 3);
        assertThat(partition().elr()).isEmpty();
        assertThat(expanded.leaderEpoch()).isEqualTo(shrunk.leaderEpoch());
        assertThat(harness.controller.electionsFromEligibleLeaderReplicas()).as("ISR changes elect no leader").isZero();
    }

    @Test
    void aMinIsrChangeClearsTheElrOfTheTopicAndAClusterDefaultChangeEveryElr() throws Exception {
        harness.createTopic("other", List.of(1, 2, 3), Map.of("min.insync.replicas", "3"));
        fenceAll();
        assertThat(harness.partition("other").elr()).isNotEmpty();
        int partitionEpoch = partition().partitionEpoch();
        harness.controller.alterConfigs(List.of(new ControllerApi.ConfigChange(ConfigResource.topic(TOPIC), "min.insync.replicas", "2")))
            .get(10, TimeUnit.SECONDS);
        assertThat(partition().elr()).as("even an unchanged value clears it, as Kafka").isEmpty();
        assertThat(partition().lastKnownElr()).isEmpty();
        assertThat(partition().partitionEpoch()).isEqualTo(partitionEpoch + 1);
        assertThat(harness.partition("other").elr()).as("another topic keeps its ELR").isNotEmpty();
        harness.controller.alterConfigs(List.of(new ControllerApi.ConfigChange(ConfigResource.broker(""), "min.insync.replicas", "2")))
            .get(10, TimeUnit.SECONDS);
        assertThat(harness.partition("other").elr()).isEmpty();
        assertThat(partition().partitionEpoch()).as("nothing left to clear: no change").isEqualTo(partitionEpoch + 1);
    }

    @Test
    void turningElrOnWritesTheClusterMinIsrOnce() throws Exception {
        assertThat(harness.image().configs(ConfigResource.broker(""))).as("written with the bootstrap features")
            .containsEntry("min.insync.replicas", "1");
        try (ControllerHarness upgraded = new ControllerHarness(dir.resolve("upgraded"), Map.of("metadata.version", (short) 33))) {
            assertThat(ReplicationControl.elrEnabled(upgraded.image())).as("a cluster without the feature keeps ELR off").isFalse();
            assertThat(upgraded.image().configs(ConfigResource.broker(""))).isEmpty();
            var result = upgraded.controller.updateFeatures(Map.of(ReplicationControl.ELR_FEATURE, new FeatureUpdates.Update((short) 1, FeatureUpdates.UPGRADE)),
                Map.of("metadata.version", new short[] {7, 33}, ReplicationControl.ELR_FEATURE, new short[] {0, 1}), false).get(10, TimeUnit.SECONDS);
            assertThat(result.error()).isEqualTo(io.strata.protocol.ErrorCode.NONE);
            assertThat(ReplicationControl.elrEnabled(upgraded.image())).isTrue();
            assertThat(upgraded.image().configs(ConfigResource.broker(""))).containsEntry("min.insync.replicas", "1");
        }
    }

    @Test
    void aBrokerLevelMinIsrAndRemovingTheClusterLevelOneAreRefusedWhileElrIsOn() throws Exception {
        ControllerRefusedException brokerLevel = refusal(List.of(
            new ControllerApi.ConfigChange(ConfigResource.topic(TOPIC), "retention.ms", "1000"),
            new ControllerApi.ConfigChange(ConfigResource.broker("2"), "min.insync.replicas", "2")));
        assertThat(brokerLevel.error()).isEqualTo(io.strata.protocol.ErrorCode.INVALID_CONFIG);
        assertThat(brokerLevel.getMessage()).isEqualTo("Broker-level min.insync.replicas cannot be altered while ELR is enabled.");
        assertThat(harness.image().configs(ConfigResource.topic(TOPIC))).as("a refused batch writes nothing").doesNotContainKey("retention.ms");
        assertThat(refusal(List.of(new ControllerApi.ConfigChange(ConfigResource.broker("2"), "min.insync.replicas", null))).getMessage())
            .as("removing a broker-level value is altering it too").isEqualTo(ElrConfigRules.BROKER_LEVEL_REFUSED);
        ControllerRefusedException clusterRemoval = refusal(List.of(new ControllerApi.ConfigChange(ConfigResource.broker(""), "min.insync.replicas", null)));
        assertThat(clusterRemoval.error()).isEqualTo(io.strata.protocol.ErrorCode.INVALID_CONFIG);
        assertThat(clusterRemoval.getMessage()).isEqualTo("Cluster-level min.insync.replicas cannot be removed while ELR is enabled.");
        assertThat(harness.image().configs(ConfigResource.broker(""))).containsEntry("min.insync.replicas", "1");
        harness.controller.alterConfigs(List.of(new ControllerApi.ConfigChange(ConfigResource.broker(""), "min.insync.replicas", "2"),
            new ControllerApi.ConfigChange(ConfigResource.broker("2"), "num.replica.fetchers", "2"))).get(10, TimeUnit.SECONDS);
        assertThat(harness.image().configs(ConfigResource.broker(""))).as("the cluster-level value may change").containsEntry("min.insync.replicas", "2");
        assertThat(harness.image().configs(ConfigResource.broker("2"))).containsEntry("num.replica.fetchers", "2");
    }

    @Test
    void turningElrOnRemovesEveryBrokerLevelMinIsr() throws Exception {
        try (ControllerHarness upgraded = new ControllerHarness(dir.resolve("upgraded"), Map.of("metadata.version", (short) 33))) {
            upgraded.controller.alterConfigs(List.of(new ControllerApi.ConfigChange(ConfigResource.broker("2"), "min.insync.replicas", "2"),
                new ControllerApi.ConfigChange(ConfigResource.broker("1"), "min.insync.replicas", "3"),
                new ControllerApi.ConfigChange(ConfigResource.broker("1"), "num.replica.fetchers", "2"))).get(10, TimeUnit.SECONDS);
            assertThat(upgraded.image().configs(ConfigResource.broker("1"))).as("allowed with ELR off").containsEntry("min.insync.replicas", "3");
            var result = upgraded.controller.updateFeatures(Map.of(ReplicationControl.ELR_FEATURE, new FeatureUpdates.Update((short) 1, FeatureUpdates.UPGRADE)),
                SUPPORTED, false).get(10, TimeUnit.SECONDS);
            assertThat(result.error()).isEqualTo(io.strata.protocol.ErrorCode.NONE);
            assertThat(upgraded.image().configs(ConfigResource.broker("1"))).doesNotContainKey("min.insync.replicas").containsEntry("num.replica.fetchers", "2");
            assertThat(upgraded.image().configs(ConfigResource.broker("2"))).isEmpty();
            assertThat(upgraded.image().configs(ConfigResource.broker(""))).containsEntry("min.insync.replicas", "1");
        }
    }

    @Test
    void turningElrOffNeedsADowngradeTypeAndTheNextPartitionChangeDropsTheElr() throws Exception {
        fence(1);
        fence(2);
        assertThat(partition().isr()).containsExactly(3);
        assertThat(partition().elr()).containsExactly(2);
        var refused = harness.controller.updateFeatures(Map.of(ReplicationControl.ELR_FEATURE, new FeatureUpdates.Update((short) 0, FeatureUpdates.UPGRADE)),
            SUPPORTED, false).get(10, TimeUnit.SECONDS);
        assertThat(refused.error()).isEqualTo(io.strata.protocol.ErrorCode.INVALID_UPDATE_VERSION);
        assertThat(refused.message()).endsWith("Invalid update version 0 for feature eligible.leader.replicas.version. Can't downgrade the version "
            + "of this feature without setting the upgrade type to either safe or unsafe downgrade.");
        assertThat(ReplicationControl.elrEnabled(harness.image())).isTrue();

        var downgraded = harness.controller.updateFeatures(Map.of(ReplicationControl.ELR_FEATURE,
            new FeatureUpdates.Update((short) 0, FeatureUpdates.SAFE_DOWNGRADE)), SUPPORTED, false).get(10, TimeUnit.SECONDS);
        assertThat(downgraded.error()).isEqualTo(io.strata.protocol.ErrorCode.NONE);
        assertThat(ReplicationControl.elrEnabled(harness.image())).isFalse();
        assertThat(partition().elr()).as("as Kafka, no record clears the ELR when the feature goes off").containsExactly(2);

        harness.controller.alterConfigs(List.of(new ControllerApi.ConfigChange(ConfigResource.broker("1"), "min.insync.replicas", "2")))
            .get(10, TimeUnit.SECONDS);
        assertThat(harness.image().configs(ConfigResource.broker("1"))).as("allowed with ELR off").containsEntry("min.insync.replicas", "2");
        harness.controller.alterConfigs(List.of(new ControllerApi.ConfigChange(ConfigResource.topic(TOPIC), "min.insync.replicas", "2")))
            .get(10, TimeUnit.SECONDS);
        assertThat(partition().elr()).as("with ELR off a min ISR change clears nothing").containsExactly(2);

        fence(3);
        assertThat(partition().isr()).as("ELR off: the last ISR member stays").containsExactly(3);
        assertThat(partition().leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(partition().elr()).as("the partition's next change drops the ELR").isEmpty();
        assertThat(partition().lastKnownElr()).isEmpty();
    }

    private static final Map<String, short[]> SUPPORTED = Map.of("metadata.version", new short[] {7, 33}, ReplicationControl.ELR_FEATURE, new short[] {0, 1});

    private ControllerRefusedException refusal(List<ControllerApi.ConfigChange> changes) throws Exception {
        try {
            harness.controller.alterConfigs(changes).get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(ControllerRefusedException.class);
            return (ControllerRefusedException) e.getCause();
        }
        throw new AssertionError("the controller took " + changes);
    }

    private AlterPartitionResponseData.PartitionData alter(int... isr) throws Exception {
        PartitionRegistration current = partition();
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(current.leaderEpoch()).setPartitionEpoch(current.partitionEpoch());
        for (int member : isr) {
            data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member).setBrokerEpoch(epochs.get(member)));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(current.leader()).setBrokerEpoch(epochs.get(current.leader()));
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(harness.image().topic(TOPIC).id())
            .setPartitions(new ArrayList<>(List.of(data))));
        return harness.controller.alterPartition(request, (short) 3).get(10, TimeUnit.SECONDS).topics().get(0).partitions().get(0);
    }
}
