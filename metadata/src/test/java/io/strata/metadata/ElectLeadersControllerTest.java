package io.strata.metadata;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.ElectLeadersRequestData;
import io.strata.protocol.message.ElectLeadersResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * ElectLeaders, the automatic preferred-leader rebalance and the periodic unclean election on a
 * real one-voter quorum with a fake clock: elections commit before the answer, the rebalance runs
 * only once its interval has passed (and never when disabled), and an unclean election makes the
 * partition RECOVERING and is counted.
 */
class ElectLeadersControllerTest {
    private static final long INTERVAL_MS = 300_000;
    private static final String TOPIC = "elect";

    @TempDir
    Path dir;

    private final Map<Integer, Long> epochs = new HashMap<>();
    private ControllerHarness harness;

    private void start(ElectionSettings settings, List<Integer> replicas, Map<String, String> configs) throws Exception {
        harness = new ControllerHarness(dir, Map.of(), settings);
        for (int id = 1; id <= 3; id++) {
            long epoch = harness.register(id, -1);
            epochs.put(id, epoch);
            assertThat(harness.heartbeat(id, epoch, false, false).isFenced()).isFalse();
        }
        harness.createTopic(TOPIC, replicas, configs);
    }

    @AfterEach
    void stop() throws Exception {
        if (harness != null) {
            harness.close();
        }
    }

    /** Fences broker 1 (leadership moves to 2), unfences it, and has the leader take it back into the ISR: 1 may lead but does not. */
    private void moveLeadershipAwayFromThePreferredReplica() throws Exception {
        harness.heartbeat(1, epochs.get(1), false, true);
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).leader() == 2, "broker 2 leads once 1 is fenced");
        assertThat(harness.heartbeat(1, epochs.get(1), false, false).isFenced()).isFalse();
        PartitionRegistration current = harness.partition(TOPIC);
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(current.leaderEpoch()).setPartitionEpoch(current.partitionEpoch());
        for (int member : new int[] {2, 3, 1}) {
            data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member).setBrokerEpoch(epochs.get(member)));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(2).setBrokerEpoch(epochs.get(2));
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(harness.image().topic(TOPIC).id())
            .setPartitions(new ArrayList<>(List.of(data))));
        var answer = harness.controller.alterPartition(request, (short) 3).get(10, TimeUnit.SECONDS);
        assertThat(answer.topics().get(0).partitions().get(0).errorCode()).isZero();
        assertThat(harness.partition(TOPIC).isr()).containsExactlyInAnyOrder(1, 2, 3);
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(2);
    }

    private ElectLeadersResponseData elect(byte type) throws Exception {
        ElectLeadersRequestData request = new ElectLeadersRequestData().setElectionType(type);
        request.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic(TOPIC).setPartitions(new ArrayList<>(List.of(0))));
        return harness.controller.electLeaders(request).get(10, TimeUnit.SECONDS);
    }

    private static ErrorCode code(ElectLeadersResponseData response) {
        assertThat(response.errorCode()).isZero();
        return ErrorCode.forCode(response.replicaElectionResults().get(0).partitionResult().get(0).errorCode());
    }

    @Test
    void preferredElectionCommitsBeforeTheAnswerAndThenIsNotNeeded() throws Exception {
        start(new ElectionSettings(false, INTERVAL_MS, INTERVAL_MS), List.of(1, 2, 3), Map.of());
        moveLeadershipAwayFromThePreferredReplica();
        int leaderEpoch = harness.partition(TOPIC).leaderEpoch();

        assertThat(code(elect(LeaderElections.PREFERRED))).isEqualTo(ErrorCode.NONE);
        assertThat(harness.partition(TOPIC).leader()).as("applied before the answer").isEqualTo(1);
        assertThat(harness.partition(TOPIC).leaderEpoch()).isEqualTo(leaderEpoch + 1);
        assertThat(code(elect(LeaderElections.PREFERRED))).isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
        assertThat(code(elect(LeaderElections.UNCLEAN))).isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
    }

    @Test
    void preferredReplicaOutOfTheIsrIsNotAvailable() throws Exception {
        start(new ElectionSettings(false, INTERVAL_MS, INTERVAL_MS), List.of(1, 2, 3), Map.of());
        harness.heartbeat(1, epochs.get(1), false, true);
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).leader() == 2, "broker 2 leads once 1 is fenced");
        assertThat(code(elect(LeaderElections.PREFERRED))).isEqualTo(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(2);
    }

    @Test
    void anEmptyTopicListElectsNothingAndAnUnknownTypeFails() throws Exception {
        start(new ElectionSettings(false, INTERVAL_MS, INTERVAL_MS), List.of(1, 2, 3), Map.of());
        ElectLeadersResponseData empty = harness.controller.electLeaders(new ElectLeadersRequestData()).get(10, TimeUnit.SECONDS);
        assertThat(empty.replicaElectionResults()).isEmpty();
        assertThatThrownBy(() -> harness.controller.electLeaders(new ElectLeadersRequestData().setElectionType((byte) 3)).get(10, TimeUnit.SECONDS))
            .hasCauseInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theRebalanceElectsThePreferredReplicaOnlyOnceTheIntervalHasPassed() throws Exception {
        start(new ElectionSettings(true, INTERVAL_MS, INTERVAL_MS), List.of(1, 2, 3), Map.of());
        moveLeadershipAwayFromThePreferredReplica();
        assertThat(harness.controller.pollElections().get(10, TimeUnit.SECONDS)).as("not due yet").isZero();
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(2);

        harness.time.sleep(INTERVAL_MS);
        harness.controller.pollElections().get(10, TimeUnit.SECONDS);
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).leader() == 1, "the preferred replica leads again");
        assertThat(harness.controller.pollElections().get(10, TimeUnit.SECONDS)).as("the next pass is an interval away").isZero();
    }

    @Test
    void withAutoRebalanceOffLeadershipStaysWhereItIs() throws Exception {
        start(new ElectionSettings(false, INTERVAL_MS, INTERVAL_MS), List.of(1, 2, 3), Map.of());
        moveLeadershipAwayFromThePreferredReplica();
        harness.time.sleep(2 * INTERVAL_MS);
        assertThat(harness.controller.pollElections().get(10, TimeUnit.SECONDS)).isZero();
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(2);
    }

    @Test
    void aLeaderlessPartitionOfATopicAllowingUncleanElectionGetsALiveReplicaAsRecoveringLeader() throws Exception {
        start(new ElectionSettings(false, INTERVAL_MS, INTERVAL_MS), List.of(1, 2), Map.of());
        // 2 leaves the ISR, then 1 (the last member) is fenced: no leader, ISR [1]. 2 comes back, out of sync.
        harness.heartbeat(2, epochs.get(2), false, true);
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).isr().length == 1, "2 leaves the ISR");
        harness.heartbeat(1, epochs.get(1), false, true);
        ControllerHarness.waitUntil(() -> !harness.partition(TOPIC).hasLeader(), "the partition has no leader");
        assertThat(harness.heartbeat(2, epochs.get(2), false, false).isFenced()).isFalse();
        assertThat(harness.partition(TOPIC).hasLeader()).as("2 is not in the ISR").isFalse();
        // As Kafka: enabling the config elects nothing at once; the periodic pass does.
        harness.controller.alterConfigs(List.of(new ControllerApi.ConfigChange(ConfigResource.topic(TOPIC), "unclean.leader.election.enable", "true")))
            .get(10, TimeUnit.SECONDS);
        assertThat(harness.partition(TOPIC).hasLeader()).as("no election on the config change").isFalse();
        assertThat(harness.controller.pollElections().get(10, TimeUnit.SECONDS)).as("not due yet").isZero();

        harness.time.sleep(INTERVAL_MS);
        harness.controller.pollElections().get(10, TimeUnit.SECONDS);
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).leader() == 2, "2 is elected uncleanly");
        assertThat(harness.partition(TOPIC).isr()).containsExactly(2);
        assertThat(harness.partition(TOPIC).leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);
        ControllerHarness.waitUntil(() -> harness.controller.uncleanLeaderElections() == 1, "the unclean election is counted");
    }

    @Test
    void withUncleanElectionEnabledAnOutOfSyncReplicaLeadsAsSoonAsItIsUnfenced() throws Exception {
        start(new ElectionSettings(false, INTERVAL_MS, INTERVAL_MS), List.of(1, 2), Map.of("unclean.leader.election.enable", "true"));
        harness.heartbeat(2, epochs.get(2), false, true);
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).isr().length == 1, "2 leaves the ISR");
        harness.heartbeat(1, epochs.get(1), false, true);
        ControllerHarness.waitUntil(() -> !harness.partition(TOPIC).hasLeader(), "no live replica: no leader");

        assertThat(harness.heartbeat(2, epochs.get(2), false, false).isFenced()).isFalse();
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).leader() == 2, "2 is elected uncleanly at unfence time");
        assertThat(harness.partition(TOPIC).isr()).containsExactly(2);
        assertThat(harness.partition(TOPIC).leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);
        assertThat(harness.controller.uncleanLeaderElections()).isEqualTo(1);
    }

    @Test
    void anUncleanElectLeadersRequestElectsALiveReplicaWhateverTheTopicConfig() throws Exception {
        start(new ElectionSettings(false, INTERVAL_MS, INTERVAL_MS), List.of(1, 2), Map.of());
        harness.heartbeat(2, epochs.get(2), false, true);
        ControllerHarness.waitUntil(() -> harness.partition(TOPIC).isr().length == 1, "2 leaves the ISR");
        harness.heartbeat(1, epochs.get(1), false, true);
        ControllerHarness.waitUntil(() -> !harness.partition(TOPIC).hasLeader(), "the partition has no leader");
        assertThat(code(elect(LeaderElections.UNCLEAN))).as("no live replica").isEqualTo(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);

        assertThat(harness.heartbeat(2, epochs.get(2), false, false).isFenced()).isFalse();
        assertThat(code(elect(LeaderElections.UNCLEAN))).isEqualTo(ErrorCode.NONE);
        assertThat(harness.partition(TOPIC).leader()).isEqualTo(2);
        assertThat(harness.partition(TOPIC).leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);
        assertThat(harness.controller.uncleanLeaderElections()).isEqualTo(1);
    }
}
