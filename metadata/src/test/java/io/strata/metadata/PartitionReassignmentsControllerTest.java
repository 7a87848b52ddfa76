package io.strata.metadata;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionReassignmentsRequestData;
import io.strata.protocol.message.AlterPartitionReassignmentsResponseData;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.message.ListPartitionReassignmentsRequestData;
import io.strata.protocol.message.ListPartitionReassignmentsResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AlterPartitionReassignments / ListPartitionReassignments on a real one-voter quorum with a fake
 * clock ({@link ControllerHarness}), four registered brokers and topic "r" on [1,2,3] led by 1:
 * Kafka's error codes and messages, RF changes (KIP-860), completion by AlterPartition, the
 * leader leaving, cancel, and a shrink blocked while a target replica is out of the ISR.
 */
class PartitionReassignmentsControllerTest {
    private static final String TOPIC = "r";

    @TempDir
    Path dir;

    private final Map<Integer, Long> epochs = new HashMap<>();
    private ControllerHarness harness;

    @BeforeEach
    void start() throws Exception {
        harness = new ControllerHarness(dir, Map.of());
        for (int id = 1; id <= 4; id++) {
            long epoch = harness.register(id, -1);
            epochs.put(id, epoch);
            assertThat(harness.heartbeat(id, epoch, false, false).isFenced()).isFalse();
        }
        harness.createTopic(TOPIC, List.of(1, 2, 3), Map.of());
    }

    @AfterEach
    void stop() throws Exception {
        harness.close();
    }

    private AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse reassign(String topic, int partition, List<Integer> replicas,
                                                                                         boolean allowReplicationFactorChange) throws Exception {
        AlterPartitionReassignmentsRequestData request = new AlterPartitionReassignmentsRequestData()
            .setAllowReplicationFactorChange(allowReplicationFactorChange);
        request.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(topic).setPartitions(new ArrayList<>(List.of(
            new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(partition)
                .setReplicas(replicas == null ? null : new ArrayList<>(replicas))))));
        AlterPartitionReassignmentsResponseData response = harness.controller.alterPartitionReassignments(request).get(10, TimeUnit.SECONDS);
        assertThat(response.errorCode()).isZero();
        assertThat(response.allowReplicationFactorChange()).isEqualTo(allowReplicationFactorChange);
        return response.responses().get(0).partitions().get(0);
    }

    private ListPartitionReassignmentsResponseData listAll() throws Exception {
        return harness.controller.listPartitionReassignments(new ListPartitionReassignmentsRequestData().setTopics(null)).get(10, TimeUnit.SECONDS);
    }

    /** AlterPartition from the current leader setting the ISR to {@code members}. */
    private AlterPartitionResponseData.PartitionData alterIsr(int... members) throws Exception {
        PartitionRegistration current = harness.partition(TOPIC);
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(current.leaderEpoch()).setPartitionEpoch(current.partitionEpoch());
        for (int member : members) {
            data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member).setBrokerEpoch(epochs.get(member)));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(current.leader()).setBrokerEpoch(epochs.get(current.leader()));
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(harness.image().topic(TOPIC).id())
            .setPartitions(new ArrayList<>(List.of(data))));
        return harness.controller.alterPartition(request, (short) 3).get(10, TimeUnit.SECONDS).topics().get(0).partitions().get(0);
    }

    private static List<Integer> list(int[] values) {
        return Arrays.stream(values).boxed().toList();
    }

    @Test
    void badTargetsGetKafkasErrorCodesAndMessages() throws Exception {
        var unknownTopic = reassign("nope", 0, List.of(1, 2, 3), true);
        assertThat(unknownTopic.errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(unknownTopic.errorMessage()).isEqualTo("Unable to find partition nope:0.");
        assertThat(reassign(TOPIC, 7, List.of(1, 2, 3), true).errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());

        var none = reassign(TOPIC, 0, null, true);
        assertThat(none.errorCode()).isEqualTo(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS.code());

        var empty = reassign(TOPIC, 0, List.of(), true);
        assertThat(empty.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(empty.errorMessage()).isEqualTo("The manual partition assignment includes an empty replica list.");
        var unknownBroker = reassign(TOPIC, 0, List.of(1, 2, 9), true);
        assertThat(unknownBroker.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(unknownBroker.errorMessage()).isEqualTo("The manual partition assignment includes broker 9, but no such broker is registered.");
        var duplicate = reassign(TOPIC, 0, List.of(2, 1, 2), true);
        assertThat(duplicate.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(duplicate.errorMessage()).isEqualTo("The manual partition assignment includes the broker 2 more than once.");

        var rfChange = reassign(TOPIC, 0, List.of(1, 2), false);
        assertThat(rfChange.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR.code());
        assertThat(rfChange.errorMessage()).isEqualTo("The replication factor is changed from 3 to 2");

        assertThat(list(harness.partition(TOPIC).replicas())).as("nothing changed").containsExactly(1, 2, 3);
        assertThat(listAll().topics()).isEmpty();
    }

    @Test
    void shrinkingFromThreeToTwoCompletesAtOnceWhenTheTargetIsInSync() throws Exception {
        int epochBefore = harness.partition(TOPIC).leaderEpoch();
        assertThat(reassign(TOPIC, 0, List.of(1, 2), true).errorCode()).isZero();
        PartitionRegistration after = harness.partition(TOPIC);
        assertThat(list(after.replicas())).containsExactly(1, 2);
        assertThat(list(after.isr())).containsExactly(1, 2);
        assertThat(after.addingReplicas()).isEmpty();
        assertThat(after.removingReplicas()).isEmpty();
        assertThat(after.leader()).isEqualTo(1);
        assertThat(after.leaderEpoch()).as("a removed replica bumps the leader epoch (KAFKA-12803)").isGreaterThan(epochBefore);
    }

    @Test
    void growingFromThreeToFourRunsUntilTheNewReplicaJoinsTheIsr() throws Exception {
        assertThat(reassign(TOPIC, 0, List.of(1, 2, 3, 4), true).errorCode()).isZero();
        PartitionRegistration running = harness.partition(TOPIC);
        assertThat(list(running.replicas())).containsExactly(1, 2, 3, 4);
        assertThat(list(running.addingReplicas())).containsExactly(4);
        var listed = listAll().topics();
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).partitions().get(0).addingReplicas()).containsExactly(4);
        assertThat(listed.get(0).partitions().get(0).removingReplicas()).isEmpty();

        assertThat(alterIsr(1, 2, 3, 4).errorCode()).isZero();
        PartitionRegistration done = harness.partition(TOPIC);
        assertThat(list(done.replicas())).containsExactly(1, 2, 3, 4);
        assertThat(list(done.isr())).containsExactly(1, 2, 3, 4);
        assertThat(done.addingReplicas()).isEmpty();
        assertThat(listAll().topics()).isEmpty();
    }

    @Test
    void aMoveAwayFromTheLeaderCompletesOnTheAlterPartitionAndElectsFromTheTarget() throws Exception {
        assertThat(reassign(TOPIC, 0, List.of(2, 3, 4), false).errorCode()).isZero();
        PartitionRegistration running = harness.partition(TOPIC);
        assertThat(list(running.replicas())).containsExactly(2, 3, 4, 1);
        assertThat(list(running.removingReplicas())).containsExactly(1);
        assertThat(running.leader()).as("the leader stays while the reassignment runs").isEqualTo(1);

        AlterPartitionResponseData.PartitionData answer = alterIsr(1, 2, 3, 4);
        assertThat(answer.errorCode()).as("the requester is no longer the leader").isEqualTo(ErrorCode.NEW_LEADER_ELECTED.code());
        PartitionRegistration done = harness.partition(TOPIC);
        assertThat(list(done.replicas())).containsExactly(2, 3, 4);
        assertThat(list(done.isr())).containsExactly(2, 3, 4);
        assertThat(done.leader()).isEqualTo(2);
        assertThat(done.leaderEpoch()).isGreaterThan(running.leaderEpoch());
        assertThat(done.removingReplicas()).isEmpty();
    }

    @Test
    void cancelRevertsToTheOriginalReplicas() throws Exception {
        assertThat(reassign(TOPIC, 0, List.of(1, 2, 4), false).errorCode()).isZero();
        assertThat(list(harness.partition(TOPIC).replicas())).containsExactly(1, 2, 4, 3);
        assertThat(reassign(TOPIC, 0, null, false).errorCode()).isZero();
        PartitionRegistration after = harness.partition(TOPIC);
        assertThat(list(after.replicas())).containsExactly(1, 2, 3);
        assertThat(after.addingReplicas()).isEmpty();
        assertThat(after.removingReplicas()).isEmpty();
        assertThat(list(after.isr())).containsExactly(1, 2, 3);
        assertThat(listAll().topics()).isEmpty();
        assertThat(reassign(TOPIC, 0, null, false).errorCode()).isEqualTo(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS.code());
    }

    @Test
    void aShrinkIsBlockedWhileATargetReplicaIsOutOfTheIsr() throws Exception {
        assertThat(alterIsr(1, 3).errorCode()).isZero();
        assertThat(reassign(TOPIC, 0, List.of(1, 2), true).errorCode()).isZero();
        PartitionRegistration blocked = harness.partition(TOPIC);
        assertThat(list(blocked.replicas())).as("completing now would shrink the ISR to [1]").containsExactly(1, 2, 3);
        assertThat(list(blocked.removingReplicas())).containsExactly(3);

        assertThat(alterIsr(1, 3, 2).errorCode()).isZero();
        PartitionRegistration done = harness.partition(TOPIC);
        assertThat(list(done.replicas())).containsExactly(1, 2);
        assertThat(list(done.isr())).containsExactlyInAnyOrder(1, 2);
        assertThat(done.removingReplicas()).isEmpty();
    }
}
