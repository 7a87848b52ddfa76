package io.strata.metadata;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AlterPartition (key 56) and RF=3 fencing / controlled shutdown on a real one-voter quorum with a
 * fake clock: every error in Kafka 4.4's order (ReplicationControlManager.alterPartition and
 * validateAlterPartitionData), the happy path (shrink and expand commit, bump only the partition
 * epoch), an unchanged ISR answered without a record, and KIP-841's leadership moves.
 */
class AlterPartitionControllerTest {
    private static final short V3 = 3;
    private static final String TOPIC = "replicated";

    @TempDir
    Path dir;

    private final Map<Integer, Long> epochs = new HashMap<>();
    private ControllerHarness harness;
    private QuorumController controller;
    private MetadataLoader loader;

    @BeforeEach
    void start() throws Exception {
        harness = new ControllerHarness(dir, Map.of());
        controller = harness.controller;
        loader = harness.loader;
        for (int id = 1; id <= 3; id++) {
            long epoch = harness.register(id, -1);
            epochs.put(id, epoch);
            assertThat(heartbeat(id, epoch, false, false).isFenced()).isFalse();
        }
        harness.createTopic(TOPIC, List.of(1, 2, 3), Map.of());
        assertThat(partition().isr()).containsExactly(1, 2, 3);
        assertThat(partition().leader()).isEqualTo(1);
    }

    @AfterEach
    void stop() throws Exception {
        harness.close();
    }

    private static void waitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        ControllerHarness.waitUntil(condition, what);
    }

    private BrokerHeartbeatResponseData heartbeat(int id, long epoch, boolean shutDown, boolean fence) throws Exception {
        return harness.heartbeat(id, epoch, shutDown, fence);
    }

    private PartitionRegistration partition() {
        return loader.image().topic(TOPIC).partition(0);
    }

    private UUID topicId() {
        return loader.image().topic(TOPIC).id();
    }

    /** A v3 request from {@code brokerId} for partition 0 of the topic, with the given ISR (members at their current epochs) and epochs. */
    private AlterPartitionRequestData request(int brokerId, int leaderEpoch, int partitionEpoch, int... isr) {
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch);
        for (int member : isr) {
            data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(member)
                .setBrokerEpoch(epochs.getOrDefault(member, -1L)));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(brokerId).setBrokerEpoch(epochs.get(brokerId));
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(topicId()).setPartitions(new ArrayList<>(List.of(data))));
        return request;
    }

    /** A request from the leader at the current epochs. */
    private AlterPartitionRequestData fromLeader(int... isr) {
        PartitionRegistration current = partition();
        return request(current.leader(), current.leaderEpoch(), current.partitionEpoch(), isr);
    }

    private AlterPartitionResponseData send(AlterPartitionRequestData request) throws Exception {
        return controller.alterPartition(request, V3).get(10, TimeUnit.SECONDS);
    }

    private ErrorCode partitionError(AlterPartitionRequestData request) throws Exception {
        AlterPartitionResponseData response = send(request);
        assertThat(response.errorCode()).as("top-level error").isZero();
        return ErrorCode.forCode(response.topics().get(0).partitions().get(0).errorCode());
    }

    private static AlterPartitionRequestData.PartitionData only(AlterPartitionRequestData request) {
        return request.topics().get(0).partitions().get(0);
    }

    @Test
    void aShrinkAndAnExpandCommitAndBumpOnlyThePartitionEpoch() throws Exception {
        PartitionRegistration before = partition();
        AlterPartitionResponseData shrunk = send(fromLeader(1, 2));
        AlterPartitionResponseData.PartitionData answer = shrunk.topics().get(0).partitions().get(0);
        assertThat(answer.errorCode()).isZero();
        assertThat(answer.isr()).containsExactly(1, 2);
        assertThat(answer.leaderId()).isEqualTo(1);
        assertThat(answer.leaderEpoch()).as("an ISR-only change keeps the leader epoch (KAFKA-15021)").isEqualTo(before.leaderEpoch());
        assertThat(answer.partitionEpoch()).isEqualTo(before.partitionEpoch() + 1);
        assertThat(answer.leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERED);
        assertThat(shrunk.topics().get(0).topicId()).isEqualTo(topicId());
        assertThat(partition().isr()).as("committed and applied before the answer").containsExactly(1, 2);
        assertThat(partition().partitionEpoch()).isEqualTo(answer.partitionEpoch());

        AlterPartitionResponseData.PartitionData expanded = send(fromLeader(1, 2, 3)).topics().get(0).partitions().get(0);
        assertThat(expanded.errorCode()).isZero();
        assertThat(expanded.isr()).containsExactly(1, 2, 3);
        assertThat(expanded.leaderEpoch()).isEqualTo(before.leaderEpoch());
        assertThat(expanded.partitionEpoch()).isEqualTo(before.partitionEpoch() + 2);
        assertThat(partition().isr()).containsExactly(1, 2, 3);
    }

    @Test
    void anUnchangedIsrIsAnsweredWithTheCurrentStateAndWritesNothing() throws Exception {
        PartitionRegistration before = partition();
        long offsetBefore = loader.nextOffset();
        AlterPartitionResponseData.PartitionData answer = send(fromLeader(1, 2, 3)).topics().get(0).partitions().get(0);
        assertThat(answer.errorCode()).isZero();
        assertThat(answer.isr()).containsExactly(1, 2, 3);
        assertThat(answer.partitionEpoch()).isEqualTo(before.partitionEpoch());
        assertThat(answer.leaderEpoch()).isEqualTo(before.leaderEpoch());
        assertThat(loader.nextOffset()).as("no record").isEqualTo(offsetBefore);
    }

    @Test
    void aStaleOrUnknownRequesterEpochIsATopLevelStaleBrokerEpoch() throws Exception {
        AlterPartitionRequestData stale = fromLeader(1, 2).setBrokerEpoch(epochs.get(1) - 1);
        AlterPartitionResponseData response = send(stale);
        assertThat(response.errorCode()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH.code());
        assertThat(response.topics()).as("nothing per topic").isEmpty();
        AlterPartitionRequestData unknown = fromLeader(1, 2).setBrokerId(7);
        assertThat(send(unknown).errorCode()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH.code());
        assertThat(partition().isr()).containsExactly(1, 2, 3);
    }

    @Test
    void anUnknownTopicIdIsUnknownTopicIdForEveryPartition() throws Exception {
        AlterPartitionRequestData request = fromLeader(1, 2);
        request.topics().get(0).setTopicId(new UUID(7, 7));
        request.topics().get(0).partitions().add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(1));
        AlterPartitionResponseData response = send(request);
        assertThat(response.topics().get(0).partitions()).extracting(AlterPartitionResponseData.PartitionData::errorCode)
            .containsExactly(ErrorCode.UNKNOWN_TOPIC_ID.code(), ErrorCode.UNKNOWN_TOPIC_ID.code());
        request.topics().get(0).setTopicId(new UUID(0, 0));
        assertThat(partitionError(request)).as("the zero id").isEqualTo(ErrorCode.UNKNOWN_TOPIC_ID);
    }

    @Test
    void everyPartitionErrorComesInKafkasOrder() throws Exception {
        PartitionRegistration current = partition();
        int leaderEpoch = current.leaderEpoch();
        int partitionEpoch = current.partitionEpoch();

        AlterPartitionRequestData unknownPartition = fromLeader(1, 2);
        only(unknownPartition).setPartitionIndex(5);
        assertThat(partitionError(unknownPartition)).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);

        // Epochs newer than the controller's come first, even from a broker that is not the leader.
        assertThat(partitionError(request(2, leaderEpoch + 1, partitionEpoch, 2))).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(partitionError(request(1, leaderEpoch, partitionEpoch + 1, 1, 2))).isEqualTo(ErrorCode.NOT_CONTROLLER);
        // An older leader epoch before the requester check.
        assertThat(partitionError(request(2, leaderEpoch - 1, partitionEpoch, 2))).isEqualTo(ErrorCode.FENCED_LEADER_EPOCH);
        // A requester that is not the leader before an older partition epoch.
        assertThat(partitionError(request(2, leaderEpoch, partitionEpoch - 1, 1, 2))).isEqualTo(ErrorCode.INVALID_REQUEST);
        // An older partition epoch before an invalid ISR.
        assertThat(partitionError(request(1, leaderEpoch, partitionEpoch - 1, 1, 9))).isEqualTo(ErrorCode.INVALID_UPDATE_VERSION);

        assertThat(partitionError(fromLeader(1, 9))).as("a member that is not a replica").isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(partitionError(fromLeader(1, 2, 2))).as("a duplicate").isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(partitionError(fromLeader(2, 3))).as("without the leader").isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(partitionError(fromLeader())).as("empty").isEqualTo(ErrorCode.INVALID_REQUEST);
        AlterPartitionRequestData recovering = fromLeader(1);
        only(recovering).setLeaderRecoveryState(PartitionRegistration.RECOVERING);
        assertThat(partitionError(recovering)).as("RECOVERED to RECOVERING").isEqualTo(ErrorCode.INVALID_REQUEST);
        AlterPartitionRequestData recoveringWithTwo = fromLeader(1, 2);
        only(recoveringWithTwo).setLeaderRecoveryState(PartitionRegistration.RECOVERING);
        assertThat(partitionError(recoveringWithTwo)).as("RECOVERING with more than the leader").isEqualTo(ErrorCode.INVALID_REQUEST);

        AlterPartitionRequestData staleMember = fromLeader(1, 2, 3);
        only(staleMember).newIsrWithEpochs().get(2).setBrokerEpoch(epochs.get(3) - 1);
        assertThat(partitionError(staleMember)).as("a member's broker epoch (KIP-903)").isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        AlterPartitionRequestData unchecked = fromLeader(1, 2, 3);
        only(unchecked).newIsrWithEpochs().get(2).setBrokerEpoch(-1);
        assertThat(partitionError(unchecked)).as("epoch -1 is not checked").isEqualTo(ErrorCode.NONE);

        assertThat(partition().partitionEpoch()).as("no rejected request changed anything").isEqualTo(partitionEpoch);
        assertThat(partition().isr()).containsExactly(1, 2, 3);
    }

    @Test
    void fencedOrShuttingDownMembersAreIneligible() throws Exception {
        // Broker 3 is fenced: it leaves the ISR; adding it back is refused.
        heartbeat(3, epochs.get(3), false, true);
        waitUntil(() -> loader.image().brokers().get(3).fenced(), "broker 3 is fenced");
        assertThat(partition().isr()).containsExactly(1, 2);
        assertThat(partitionError(fromLeader(1, 2, 3))).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        // Broker 2 starts a controlled shutdown (KIP-841): it leaves the ISR and may not rejoin it.
        assertThat(heartbeat(2, epochs.get(2), true, false).shouldShutDown()).isTrue();
        assertThat(partition().isr()).containsExactly(1);
        assertThat(partitionError(fromLeader(1, 2))).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
    }

    @Test
    void aFencedLeaderHandsOverToTheFirstIsrMemberWithANewLeaderEpoch() throws Exception {
        PartitionRegistration before = partition();
        heartbeat(1, epochs.get(1), false, true);
        waitUntil(() -> partition().leader() != 1, "leadership moves");
        assertThat(partition().isr()).containsExactly(2, 3);
        assertThat(partition().leader()).isEqualTo(2);
        assertThat(partition().leaderEpoch()).isEqualTo(before.leaderEpoch() + 1);
        // The old leader's request is now fenced by the leader epoch; the new leader's succeeds.
        assertThat(partitionError(request(1, before.leaderEpoch(), before.partitionEpoch(), 1, 2, 3))).isEqualTo(ErrorCode.FENCED_LEADER_EPOCH);
        assertThat(partitionError(fromLeader(2))).isEqualTo(ErrorCode.NONE);
        assertThat(partition().isr()).containsExactly(2);
        assertThat(partition().leaderEpoch()).isEqualTo(before.leaderEpoch() + 1);
    }

    @Test
    void aControlledShutdownOfTheLeaderMovesLeadershipAndTheLastMemberStaysWithoutElr() throws Exception {
        PartitionRegistration before = partition();
        assertThat(heartbeat(1, epochs.get(1), true, false).shouldShutDown()).as("it leads nothing after the move").isTrue();
        assertThat(partition().leader()).isEqualTo(2);
        assertThat(partition().isr()).containsExactly(2, 3);
        assertThat(partition().leaderEpoch()).isEqualTo(before.leaderEpoch() + 1);
        heartbeat(2, epochs.get(2), false, true);
        waitUntil(() -> partition().leader() == 3, "broker 3 leads");
        heartbeat(3, epochs.get(3), false, true);
        waitUntil(() -> !partition().hasLeader(), "the partition goes offline");
        assertThat(partition().isr()).as("ELR off: the last ISR member stays").containsExactly(3);
        assertThat(partition().elr()).isEmpty();
        assertThat(partition().leaderEpoch()).isEqualTo(before.leaderEpoch() + 3);
    }
}
