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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        assertThat(response.errorMessage()).as("Kafka's controller answers a null top-level message").isNull();
        assertThat(response.allowReplicationFactorChange()).isEqualTo(allowReplicationFactorChange);
        return response.responses().get(0).partitions().get(0);
    }

    private ListPartitionReassignmentsResponseData listAll() throws Exception {
        return harness.controller.listPartitionReassignments(new ListPartitionReassignmentsRequestData().setTopics(null)).get(10, TimeUnit.SECONDS);
    }

    /** AlterPartition from the current leader of {@link #TOPIC} setting the ISR to {@code members}. */
    private AlterPartitionResponseData.PartitionData alterIsr(int... members) throws Exception {
        return alterIsr(TOPIC, members);
    }

    /** AlterPartition from the current leader of {@code topic} setting the ISR to {@code members}. */
    private AlterPartitionResponseData.PartitionData alterIsr(String topic, int... members) throws Exception {
        PartitionRegistration current = harness.partition(topic);
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(current.leaderEpoch()).setPartitionEpoch(current.partitionEpoch());
        for (int member : members) {
            data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member).setBrokerEpoch(epochs.get(member)));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(current.leader()).setBrokerEpoch(epochs.get(current.leader()));
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(harness.image().topic(topic).id())
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
        assertThat(unknownTopic.errorMessage()).isEqualTo("Unable to find a topic named nope.");
        var unknownPartition = reassign(TOPIC, 7, List.of(1, 2, 3), true);
        assertThat(unknownPartition.errorCode()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(unknownPartition.errorMessage()).isEqualTo("Unable to find partition r:7.");
        assertThat(reassign("nope", 0, null, true).errorMessage()).as("an unknown topic is checked before the cancel")
            .isEqualTo("Unable to find a topic named nope.");

        var none = reassign(TOPIC, 0, null, true);
        assertThat(none.errorCode()).isEqualTo(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS.code());
        assertThat(none.errorMessage()).as("Kafka's ApiError drops a message equal to the code's default").isNull();

        var empty = reassign(TOPIC, 0, List.of(), true);
        assertThat(empty.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(empty.errorMessage()).isEqualTo("The manual partition assignment includes an empty replica list.");
        var unknownBroker = reassign(TOPIC, 0, List.of(1, 2, 9), true);
        assertThat(unknownBroker.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(unknownBroker.errorMessage()).isEqualTo("The manual partition assignment includes broker 9, but no such broker is registered.");
        var negative = reassign(TOPIC, 0, List.of(1, -1, 2), true);
        assertThat(negative.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(negative.errorMessage()).isEqualTo("The manual partition assignment includes broker -1, but no such broker is registered.");
        var unknownAndDuplicate = reassign(TOPIC, 0, List.of(9, 1, 1), true);
        assertThat(unknownAndDuplicate.errorMessage()).as("checked in ascending id order: the duplicate 1 comes before 9")
            .isEqualTo("The manual partition assignment includes the broker 1 more than once.");
        var rfChangeAndUnknown = reassign(TOPIC, 0, List.of(1, 9), false);
        assertThat(rfChangeAndUnknown.errorCode()).as("the assignment is validated before the replication factor")
            .isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
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

    @Test
    void withoutReplicationFactorChangeARunningReassignmentIsMeasuredByItsTarget() throws Exception {
        assertThat(reassign(TOPIC, 0, List.of(1, 2, 3, 4), true).errorCode()).isZero();
        assertThat(list(harness.partition(TOPIC).addingReplicas())).containsExactly(4);

        var backToThree = reassign(TOPIC, 0, List.of(1, 2, 3), false);
        assertThat(backToThree.errorCode()).as("the partition is headed for 4 replicas").isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR.code());
        assertThat(backToThree.errorMessage()).isEqualTo("The replication factor is changed from 4 to 3");
        assertThat(list(harness.partition(TOPIC).addingReplicas())).as("nothing changed").containsExactly(4);

        assertThat(reassign(TOPIC, 0, List.of(4, 3, 2, 1), false).errorCode()).as("the target's size is kept").isZero();
        PartitionRegistration reordered = harness.partition(TOPIC);
        assertThat(list(reordered.replicas())).containsExactly(4, 3, 2, 1);
        assertThat(list(reordered.addingReplicas())).as("computed over the replicas as they stand, as Kafka does").isEmpty();
    }

    @Test
    void aRequestNamingAPartitionTwiceHandlesEachAgainstTheStateBeforeTheRequest() throws Exception {
        AlterPartitionReassignmentsRequestData request = new AlterPartitionReassignmentsRequestData();
        request.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(TOPIC).setPartitions(new ArrayList<>(List.of(
            new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0).setReplicas(new ArrayList<>(List.of(1, 2, 4))),
            new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0).setReplicas(null)))));
        AlterPartitionReassignmentsResponseData response = harness.controller.alterPartitionReassignments(request).get(10, TimeUnit.SECONDS);
        assertThat(response.errorCode()).as("no top-level error for a repeated partition").isZero();
        var answers = response.responses().get(0).partitions();
        assertThat(answers).hasSize(2);
        assertThat(answers.get(0).errorCode()).isZero();
        assertThat(answers.get(1).errorCode()).as("the cancel saw no reassignment: the first entry's is not applied yet")
            .isEqualTo(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS.code());
        assertThat(list(harness.partition(TOPIC).replicas())).containsExactly(1, 2, 4, 3);
    }

    /** Topic {@code topic} on [1,2] reassigned to [3,4] with 3 caught up, then 2 and 1 fenced: the ISR is [3] (adding only), led by 3. */
    private void reassignmentWithOnlyAddedReplicasInSync(String topic, Map<String, String> configs) throws Exception {
        harness.createTopic(topic, List.of(1, 2), configs);
        assertThat(reassign(topic, 0, List.of(3, 4), true).errorCode()).isZero();
        assertThat(alterIsr(topic, 1, 2, 3).errorCode()).isZero();
        assertThat(list(harness.partition(topic).addingReplicas())).as("4 is not in sync yet").containsExactly(3, 4);
        assertThat(harness.heartbeat(2, epochs.get(2), false, true).isFenced()).isTrue();
        assertThat(harness.heartbeat(1, epochs.get(1), false, true).isFenced()).isTrue();
        PartitionRegistration running = harness.partition(topic);
        assertThat(list(running.isr())).containsExactly(3);
        assertThat(running.leader()).isEqualTo(3);
        assertThat(harness.heartbeat(1, epochs.get(1), false, false).isFenced()).as("1 is back, out of the ISR").isFalse();
        assertThat(list(harness.partition(topic).isr())).containsExactly(3);
    }

    @Test
    void aCancelThatNeedsAnUncleanElectionIsRefusedUnlessTheTopicAllowsIt() throws Exception {
        reassignmentWithOnlyAddedReplicasInSync("u", Map.of());
        var refused = reassign("u", 0, null, false);
        assertThat(refused.errorCode()).isEqualTo(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(refused.errorMessage()).isEqualTo("Unable to revert partition assignment for u:0 because it would require an unclean leader election.");
        assertThat(list(harness.partition("u").replicas())).as("still running").containsExactly(3, 4, 1, 2);
    }

    @Test
    void anUncleanCancelPutsTheFirstOriginalReplicaInTheIsrAndElectsIt() throws Exception {
        reassignmentWithOnlyAddedReplicasInSync("u", Map.of("unclean.leader.election.enable", "true"));
        int epochBefore = harness.partition("u").leaderEpoch();
        assertThat(reassign("u", 0, null, false).errorCode()).isZero();
        PartitionRegistration after = harness.partition("u");
        assertThat(list(after.replicas())).containsExactly(1, 2);
        assertThat(after.addingReplicas()).isEmpty();
        assertThat(after.removingReplicas()).isEmpty();
        assertThat(list(after.isr())).as("Kafka's revert: ISR [first original replica]").containsExactly(1);
        assertThat(after.leader()).isEqualTo(1);
        assertThat(after.leaderEpoch()).isGreaterThan(epochBefore);
        assertThat(after.leaderRecoveryState()).as("1 leads as an ISR member: a clean election, no leader recovery")
            .isEqualTo(PartitionRegistration.RECOVERED);
    }

    @Test
    void theRequestTimeoutIsTheDeadlineForTheControllerToTakeTheRequest() throws Exception {
        AlterPartitionReassignmentsRequestData request = new AlterPartitionReassignmentsRequestData().setTimeoutMs(0);
        request.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(TOPIC).setPartitions(new ArrayList<>(List.of(
            new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0).setReplicas(new ArrayList<>(List.of(1, 2, 4)))))));
        assertThatThrownBy(() -> harness.controller.alterPartitionReassignments(request).get(10, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
        assertThat(list(harness.partition(TOPIC).replicas())).as("a timed-out request changes nothing").containsExactly(1, 2, 3);

        AlterPartitionReassignmentsResponseData empty = harness.controller.alterPartitionReassignments(
            new AlterPartitionReassignmentsRequestData().setTimeoutMs(0)).get(10, TimeUnit.SECONDS);
        assertThat(empty.errorCode()).as("no topics: answered at once, before any deadline").isZero();
        assertThat(empty.responses()).isEmpty();

        ListPartitionReassignmentsResponseData listed = harness.controller.listPartitionReassignments(
            new ListPartitionReassignmentsRequestData().setTimeoutMs(0).setTopics(null)).get(10, TimeUnit.SECONDS);
        assertThat(listed.errorCode()).as("List has no deadline in Kafka's controller").isZero();
        assertThat(listed.errorMessage()).isNull();
    }

    @Test
    void listingNamedPartitionsKeepsTheRequestOrderAndLeavesOutThoseNotReassigning() throws Exception {
        harness.createTopic("a", List.of(1, 2), Map.of());
        assertThat(reassign("a", 0, List.of(1, 3), false).errorCode()).isZero();
        assertThat(reassign(TOPIC, 0, List.of(1, 2, 4), false).errorCode()).isZero();
        harness.createTopic("idle", List.of(1, 2), Map.of());

        ListPartitionReassignmentsRequestData request = new ListPartitionReassignmentsRequestData().setTopics(new ArrayList<>(List.of(
            new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName(TOPIC).setPartitionIndexes(new ArrayList<>(List.of(5, 0))),
            new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("idle").setPartitionIndexes(new ArrayList<>(List.of(0))),
            new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("nope").setPartitionIndexes(new ArrayList<>(List.of(0))),
            new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("a").setPartitionIndexes(new ArrayList<>(List.of(0, 0))))));
        ListPartitionReassignmentsResponseData listed = harness.controller.listPartitionReassignments(request).get(10, TimeUnit.SECONDS);
        assertThat(listed.errorCode()).isZero();
        assertThat(listed.errorMessage()).isNull();
        assertThat(listed.topics()).extracting(ListPartitionReassignmentsResponseData.OngoingTopicReassignment::name)
            .as("request order; idle and unknown topics left out").containsExactly(TOPIC, "a");
        assertThat(listed.topics().get(0).partitions()).extracting(ListPartitionReassignmentsResponseData.OngoingPartitionReassignment::partitionIndex)
            .as("the unknown partition 5 left out").containsExactly(0);
        assertThat(listed.topics().get(0).partitions().get(0).replicas()).containsExactly(1, 2, 4, 3);
        assertThat(listed.topics().get(1).partitions()).extracting(ListPartitionReassignmentsResponseData.OngoingPartitionReassignment::partitionIndex)
            .as("a partition named twice is listed twice, as Kafka does").containsExactly(0, 0);

        var all = listAll().topics();
        assertThat(all).extracting(ListPartitionReassignmentsResponseData.OngoingTopicReassignment::name).as("null topics: every reassigning partition")
            .containsExactly("a", TOPIC);
    }
}
