package io.strata.metadata;

import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ElectLeadersRequestData;
import io.strata.protocol.message.ElectLeadersResponseData;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.strata.metadata.TestRecords.change;
import static io.strata.metadata.TestRecords.register;
import static io.strata.metadata.TestRecords.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * ElectLeaders, the preferred-leader rebalance and periodic unclean elections over hand-built
 * images: every per-partition code of Kafka 4.4's ReplicationControlManager.electLeader, the
 * null topic list, and the records the elections write.
 */
class LeaderElectionsTest {
    private static final UUID TOPIC_ID = new UUID(4, 4);
    private final LeaderElections elections = new LeaderElections(new ReplicationControl(Map.of()));

    /** Brokers 1-3 (unfenced unless listed in {@code fenced}, {@code shuttingDown} in controlled shutdown); topic "t" partition 0 on [1, 2, 3]. */
    private static MetadataImage image(int[] isr, int leader, List<Integer> fenced, List<Integer> shuttingDown, Map<String, String> topicConfigs) {
        List<ApiMessage> records = new ArrayList<>();
        for (int id = 1; id <= 3; id++) {
            records.add(register(id, id, null, fenced.contains(id)));
            if (shuttingDown.contains(id)) {
                records.add(change(id, id, 0, 1));
            }
        }
        records.add(topic("t", TOPIC_ID));
        topicConfigs.forEach((name, value) -> records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName("t")
            .setName(name).setValue(value)));
        records.add(new PartitionRegistration(new int[] {1, 2, 3}, isr, leader, 5, 7).toRecord(TOPIC_ID, 0));
        return MetadataImage.EMPTY.apply(records, records.size());
    }

    private static MetadataImage image(int[] isr, int leader) {
        return image(isr, leader, List.of(), List.of(), Map.of());
    }

    private static ElectLeadersRequestData request(byte type, String topic, Integer... partitions) {
        ElectLeadersRequestData request = new ElectLeadersRequestData().setElectionType(type);
        request.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic(topic).setPartitions(new ArrayList<>(List.of(partitions))));
        return request;
    }

    private static ElectLeadersResponseData.PartitionResult only(LeaderElections.Elected elected) {
        assertThat(elected.response().replicaElectionResults()).hasSize(1);
        assertThat(elected.response().replicaElectionResults().get(0).partitionResult()).hasSize(1);
        return elected.response().replicaElectionResults().get(0).partitionResult().get(0);
    }

    private static ErrorCode code(LeaderElections.Elected elected) {
        return ErrorCode.forCode(only(elected).errorCode());
    }

    @Test
    void preferredElectionMovesLeadershipToTheFirstReplicaInTheIsr() {
        LeaderElections.Elected elected = elections.electLeaders(image(new int[] {1, 2, 3}, 2), request(LeaderElections.PREFERRED, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.NONE);
        assertThat(only(elected).errorMessage()).isNull();
        assertThat(elected.records()).hasSize(1);
        PartitionChangeRecord record = (PartitionChangeRecord) elected.records().get(0);
        assertThat(record.leader()).isEqualTo(1);
        assertThat(record.isr()).isNull();
        assertThat(record.leaderRecoveryState()).isEqualTo((byte) -1);
        assertThat(elected.unclean()).isEmpty();
    }

    @Test
    void preferredElectionIsNotNeededWhenTheFirstReplicaLeads() {
        LeaderElections.Elected elected = elections.electLeaders(image(new int[] {1, 2, 3}, 1), request(LeaderElections.PREFERRED, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
        assertThat(elected.records()).isEmpty();
    }

    @Test
    void preferredLeaderOutsideTheIsrIsNotAvailable() {
        LeaderElections.Elected elected = elections.electLeaders(image(new int[] {2, 3}, 2), request(LeaderElections.PREFERRED, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
        assertThat(elected.records()).isEmpty();
    }

    @Test
    void fencedOrShuttingDownPreferredLeaderIsNotAvailable() {
        MetadataImage fenced = image(new int[] {1, 2, 3}, 2, List.of(1), List.of(), Map.of());
        assertThat(code(elections.electLeaders(fenced, request(LeaderElections.PREFERRED, "t", 0)))).isEqualTo(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
        MetadataImage shuttingDown = image(new int[] {1, 2, 3}, 2, List.of(), List.of(1), Map.of());
        assertThat(code(elections.electLeaders(shuttingDown, request(LeaderElections.PREFERRED, "t", 0))))
            .isEqualTo(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
    }

    @Test
    void preferredElectionOfALeaderlessPartitionTakesAnotherIsrMemberWhenThePreferredCannotLead() {
        MetadataImage image = image(new int[] {1, 3}, -1, List.of(1), List.of(), Map.of());
        LeaderElections.Elected elected = elections.electLeaders(image, request(LeaderElections.PREFERRED, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.NONE);
        assertThat(((PartitionChangeRecord) elected.records().get(0)).leader()).isEqualTo(3);
    }

    @Test
    void uncleanElectionIsNotNeededWhileALeaderExists() {
        LeaderElections.Elected elected = elections.electLeaders(image(new int[] {2, 3}, 2), request(LeaderElections.UNCLEAN, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
    }

    @Test
    void uncleanElectionPrefersALiveIsrMember() {
        MetadataImage image = image(new int[] {3}, -1, List.of(), List.of(), Map.of());
        LeaderElections.Elected elected = elections.electLeaders(image, request(LeaderElections.UNCLEAN, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.NONE);
        PartitionChangeRecord record = (PartitionChangeRecord) elected.records().get(0);
        assertThat(record.leader()).isEqualTo(3);
        assertThat(record.leaderRecoveryState()).isEqualTo((byte) -1);
        assertThat(elected.unclean()).isEmpty();
    }

    @Test
    void uncleanElectionTakesALiveReplicaOutsideTheIsrAsRecovering() {
        // The only ISR member, 1, is fenced; 2 is live but out of sync.
        MetadataImage image = image(new int[] {1}, -1, List.of(1), List.of(), Map.of());
        LeaderElections.Elected elected = elections.electLeaders(image, request(LeaderElections.UNCLEAN, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.NONE);
        PartitionChangeRecord record = (PartitionChangeRecord) elected.records().get(0);
        assertThat(record.leader()).isEqualTo(2);
        assertThat(record.isr()).containsExactly(2);
        assertThat(record.leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);
        assertThat(elected.unclean()).containsExactly("t-0");
        PartitionRegistration after = image.topic("t").partition(0).merge(record);
        assertThat(after.leaderEpoch()).isEqualTo(6);
    }

    @Test
    void uncleanElectionWithoutALiveReplicaFindsNoEligibleLeader() {
        MetadataImage image = image(new int[] {1}, -1, List.of(1, 2, 3), List.of(), Map.of());
        LeaderElections.Elected elected = elections.electLeaders(image, request(LeaderElections.UNCLEAN, "t", 0));
        assertThat(code(elected)).isEqualTo(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
        assertThat(elected.records()).isEmpty();
    }

    @Test
    void unknownTopicOrPartitionIsAnsweredPerPartition() {
        MetadataImage image = image(new int[] {1, 2, 3}, 2);
        assertThat(code(elections.electLeaders(image, request(LeaderElections.PREFERRED, "missing", 0)))).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(code(elections.electLeaders(image, request(LeaderElections.PREFERRED, "t", 9)))).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    }

    @Test
    void aNullTopicListElectsEveryPartitionAndLeavesOutThoseNotNeedingIt() {
        List<ApiMessage> records = new ArrayList<>();
        for (int id = 1; id <= 3; id++) {
            records.add(register(id, id, null, false));
        }
        records.add(topic("t", TOPIC_ID));
        records.add(new PartitionRegistration(new int[] {1, 2, 3}, new int[] {1, 2, 3}, 1, 0, 0).toRecord(TOPIC_ID, 0));
        records.add(new PartitionRegistration(new int[] {2, 3, 1}, new int[] {1, 2, 3}, 1, 0, 0).toRecord(TOPIC_ID, 1));
        records.add(new PartitionRegistration(new int[] {3, 1, 2}, new int[] {1, 2}, 1, 0, 0).toRecord(TOPIC_ID, 2));
        MetadataImage image = MetadataImage.EMPTY.apply(records, records.size());

        LeaderElections.Elected elected = elections.electLeaders(image, new ElectLeadersRequestData().setTopicPartitions(null));
        assertThat(elected.response().replicaElectionResults()).hasSize(1);
        List<ElectLeadersResponseData.PartitionResult> results = elected.response().replicaElectionResults().get(0).partitionResult();
        assertThat(results).extracting(ElectLeadersResponseData.PartitionResult::partitionId).containsExactly(1, 2);
        assertThat(results).extracting(ElectLeadersResponseData.PartitionResult::errorCode)
            .containsExactly(ErrorCode.NONE.code(), ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE.code());
        assertThat(elected.records()).hasSize(1);
        assertThat(((PartitionChangeRecord) elected.records().get(0)).partitionId()).isEqualTo(1);
        assertThat(((PartitionChangeRecord) elected.records().get(0)).leader()).isEqualTo(2);
    }

    @Test
    void anUnknownElectionTypeIsRefused() {
        assertThatThrownBy(() -> elections.electLeaders(image(new int[] {1, 2, 3}, 1), request((byte) 7, "t", 0)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("7");
    }

    @Test
    void theRebalanceMovesOnlyPartitionsWhosePreferredReplicaCanLead() {
        assertThat(LeaderElections.imbalanced(image(new int[] {1, 2, 3}, 1))).isFalse();
        MetadataImage imbalanced = image(new int[] {1, 2, 3}, 2);
        assertThat(LeaderElections.imbalanced(imbalanced)).isTrue();
        LeaderElections.Pass pass = elections.balancePartitionLeaders(imbalanced);
        assertThat(pass.more()).isFalse();
        assertThat(pass.records()).singleElement().extracting(record -> ((PartitionChangeRecord) record).leader()).isEqualTo(1);

        assertThat(elections.balancePartitionLeaders(image(new int[] {2, 3}, 2)).records()).isEmpty();
        assertThat(elections.balancePartitionLeaders(image(new int[] {1, 2, 3}, 2, List.of(), List.of(1), Map.of())).records()).isEmpty();
    }

    @Test
    void periodicUncleanElectionsOnlyTouchLeaderlessPartitionsOfTopicsThatAllowThem() {
        MetadataImage notAllowed = image(new int[] {1}, -1, List.of(1), List.of(), Map.of());
        assertThat(elections.electUncleanLeaders(notAllowed).records()).isEmpty();

        MetadataImage allowed = image(new int[] {1}, -1, List.of(1), List.of(), Map.of("unclean.leader.election.enable", "true"));
        LeaderElections.Pass pass = elections.electUncleanLeaders(allowed);
        assertThat(pass.unclean()).containsExactly("t-0");
        PartitionChangeRecord record = (PartitionChangeRecord) pass.records().get(0);
        assertThat(record.leader()).isEqualTo(2);
        assertThat(record.leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);

        MetadataImage led = image(new int[] {2}, 2, List.of(1), List.of(), Map.of("unclean.leader.election.enable", "true"));
        assertThat(elections.electUncleanLeaders(led).records()).isEmpty();
    }
}
