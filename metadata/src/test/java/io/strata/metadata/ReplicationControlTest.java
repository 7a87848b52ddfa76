package io.strata.metadata;

import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static io.strata.metadata.TestRecords.register;
import static io.strata.metadata.TestRecords.topic;
import static org.assertj.core.api.Assertions.assertThat;

/** ReplicationControl over hand-built images: min ISR resolution, and several brokers leaving at once. */
class ReplicationControlTest {
    private static final UUID TOPIC_ID = new UUID(3, 3);

    private static MetadataImage image(boolean elr, String topicMinIsr, String clusterMinIsr, int[] isr, int leader) {
        List<ApiMessage> records = new ArrayList<>();
        if (elr) {
            records.add(new FeatureLevelRecord().setName(ReplicationControl.ELR_FEATURE).setFeatureLevel((short) 1));
        }
        for (int id = 1; id <= 3; id++) {
            records.add(register(id, id, null, false));
        }
        records.add(topic("t", TOPIC_ID));
        if (topicMinIsr != null) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName("t").setName("min.insync.replicas")
                .setValue(topicMinIsr));
        }
        if (clusterMinIsr != null) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("").setName("min.insync.replicas")
                .setValue(clusterMinIsr));
        }
        records.add(new PartitionRegistration(new int[] {1, 2, 3}, isr, leader, 0, 0).toRecord(TOPIC_ID, 0));
        return MetadataImage.EMPTY.apply(records, records.size());
    }

    @Test
    void theEffectiveMinIsrIsTheTopicsThenTheClustersThenTheStaticDefaultCappedByTheReplicationFactor() {
        ReplicationControl control = new ReplicationControl(Map.of("min.insync.replicas", "2"));
        assertThat(control.effectiveMinIsr(image(true, null, null, new int[] {1}, 1), "t", 3)).isEqualTo(2);
        assertThat(control.effectiveMinIsr(image(true, null, "3", new int[] {1}, 1), "t", 3)).isEqualTo(3);
        assertThat(control.effectiveMinIsr(image(true, "1", "3", new int[] {1}, 1), "t", 3)).isEqualTo(1);
        assertThat(control.effectiveMinIsr(image(true, "5", null, new int[] {1}, 1), "t", 3)).as("capped by RF").isEqualTo(3);
        assertThat(new ReplicationControl(Map.of()).effectiveMinIsr(image(true, null, null, new int[] {1}, 1), "t", 3)).isEqualTo(1);
    }

    @Test
    void brokersLeavingTogetherLeaveOneAfterAnotherSoOnlyTheLastEntersTheElr() {
        MetadataImage image = image(true, "1", null, new int[] {1, 2}, 1);
        List<PartitionChangeRecord> records = new ReplicationControl(Map.of()).forUnusableBrokers(image, Set.of(1, 2));
        assertThat(records).hasSize(1);
        PartitionRegistration after = image.apply(List.of(records.get(0)), image.offset() + 1).topic("t").partition(0);
        assertThat(after.isr()).isEmpty();
        assertThat(after.elr()).as("2 left last, with the ISR empty below min ISR 1").containsExactly(2);
        assertThat(after.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(after.leaderEpoch()).as("one record, one leader epoch").isEqualTo(1);
    }

    @Test
    void withoutElrTheHighestLeavingIdStaysAsTheLastMember() {
        MetadataImage image = image(false, null, null, new int[] {1, 3, 2}, 3);
        List<PartitionChangeRecord> records = new ReplicationControl(Map.of()).forUnusableBrokers(image, Set.of(1, 2, 3));
        PartitionRegistration after = image.apply(List.of(records.get(0)), image.offset() + 1).topic("t").partition(0);
        assertThat(after.isr()).containsExactly(3);
        assertThat(after.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
    }

    @Test
    void anUncleanShutdownIsAnotherEpochThanTheRegisteredOne() {
        MetadataImage image = image(true, null, null, new int[] {1}, 1);
        assertThat(ReplicationControl.uncleanShutdown(image, 2, 2)).isFalse();
        assertThat(ReplicationControl.uncleanShutdown(image, 2, -1)).isTrue();
        assertThat(ReplicationControl.uncleanShutdown(image, 7, -1)).as("never registered").isFalse();
    }

    @Test
    void withUncleanElectionEnabledAFenceElectsAnyLiveReplicaAtOnceAndSetsRecovering() {
        MetadataImage image = withUnclean(image(false, null, null, new int[] {1}, 1));
        List<PartitionChangeRecord> records = new ReplicationControl(Map.of()).forUnusableBrokers(image, Set.of(1));
        PartitionRegistration after = image.apply(List.of(records.get(0)), image.offset() + 1).topic("t").partition(0);
        assertThat(after.leader()).isEqualTo(2);
        assertThat(after.isr()).containsExactly(2);
        assertThat(after.leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);
    }

    @Test
    void withUncleanElectionEnabledAnUnfencedNonIsrReplicaLeadsALeaderlessPartition() {
        MetadataImage base = image(false, null, null, new int[] {1}, -1);
        MetadataImage image = base.apply(List.of(register(1, 1, null, true)), base.offset() + 1);
        ReplicationControl control = new ReplicationControl(Map.of());
        assertThat(control.forUnfencedBrokers(image, Set.of(2))).as("unclean off: no leader").isEmpty();
        MetadataImage unclean = withUnclean(image);
        List<PartitionChangeRecord> records = control.forUnfencedBrokers(unclean, Set.of(2));
        assertThat(records).hasSize(1);
        assertThat(records.get(0).leader()).isEqualTo(2);
    }

    private static MetadataImage withUnclean(MetadataImage image) {
        return image.apply(List.of(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName("t")
            .setName("unclean.leader.election.enable").setValue("true")), image.offset() + 1);
    }
}
