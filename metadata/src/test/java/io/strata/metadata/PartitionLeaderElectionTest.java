package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static io.strata.metadata.TestRecords.change;
import static io.strata.metadata.TestRecords.fence;
import static io.strata.metadata.TestRecords.list;
import static io.strata.metadata.TestRecords.partition;
import static io.strata.metadata.TestRecords.partitionChange;
import static io.strata.metadata.TestRecords.register;
import static io.strata.metadata.TestRecords.topic;
import static io.strata.metadata.TestRecords.unfence;
import static org.assertj.core.api.Assertions.assertThat;

/** PartitionLeaderElection: failover in replica order, offline and back, the last ISR member, epochs. */
class PartitionLeaderElectionTest {
    private static final UUID SINGLE = new UUID(1, 1);
    private static final UUID TRIPLE = new UUID(3, 3);

    /** Brokers 1..4 unfenced (epoch = id); "single" = RF 1 on broker 1; "triple" p0 = [1, 2, 3], p1 = [2, 3, 4]. */
    private static MetadataImage cluster() {
        List<ApiMessage> records = new ArrayList<>();
        for (int id = 1; id <= 4; id++) {
            records.add(register(id, id, null, false));
        }
        records.add(topic("single", SINGLE));
        records.add(partition(SINGLE, 0, 1));
        records.add(topic("triple", TRIPLE));
        records.add(partition(TRIPLE, 0, 1, 2, 3));
        records.add(partition(TRIPLE, 1, 2, 3, 4));
        return MetadataImage.EMPTY.apply(records, records.size() - 1);
    }

    private static MetadataImage apply(MetadataImage image, List<? extends ApiMessage> records) {
        return image.apply(new ArrayList<>(records), image.offset() + Math.max(1, records.size()));
    }

    /** Fences {@code id} in the image, then applies the election's records for it. */
    private static MetadataImage fenceAndElect(MetadataImage image, int id) {
        List<PartitionChangeRecord> changes = PartitionLeaderElection.forUnusableBrokers(image, Set.of(id));
        return apply(apply(image, List.of(fence(id, id))), changes);
    }

    private static MetadataImage unfenceAndElect(MetadataImage image, int id) {
        MetadataImage unfenced = apply(image, List.of(unfence(id, id)));
        return apply(unfenced, PartitionLeaderElection.forUnfencedBrokers(unfenced, Set.of(id)));
    }

    @Test
    void aReplicationFactorOnePartitionGoesOfflineKeepingItsIsrAndComesBackWithItsBroker() {
        MetadataImage offline = fenceAndElect(cluster(), 1);
        PartitionRegistration single = offline.topic("single").partition(0);
        assertThat(single.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(single.isr()).containsExactly(1);
        assertThat(single.leaderEpoch()).isEqualTo(1);
        assertThat(single.partitionEpoch()).isEqualTo(1);

        assertThat(PartitionLeaderElection.forUnfencedBrokers(offline, Set.of(2))).as("broker 2 is not in its ISR")
            .noneMatch(record -> record.topicId().equals(SINGLE));
        MetadataImage online = unfenceAndElect(offline, 1);
        single = online.topic("single").partition(0);
        assertThat(single.leader()).isEqualTo(1);
        assertThat(single.isr()).containsExactly(1);
        assertThat(single.leaderEpoch()).isEqualTo(2);
        assertThat(single.partitionEpoch()).isEqualTo(2);
    }

    @Test
    void leadershipFailsOverInReplicaOrderSkippingUnusableReplicas() {
        MetadataImage image = apply(cluster(), List.of(change(2, 2, 0, 1)));
        List<PartitionChangeRecord> records = PartitionLeaderElection.forUnusableBrokers(image, Set.of(1));
        PartitionChangeRecord p0 = records.stream().filter(r -> r.topicId().equals(TRIPLE) && r.partitionId() == 0).findFirst().orElseThrow();
        assertThat(p0.leader()).as("2 is in controlled shutdown, so 3").isEqualTo(3);
        assertThat(p0.isr()).containsExactly(2, 3);

        MetadataImage failedOver = fenceAndElect(cluster(), 1);
        PartitionRegistration triple = failedOver.topic("triple").partition(0);
        assertThat(triple.leader()).isEqualTo(2);
        assertThat(triple.isr()).containsExactly(2, 3);
        assertThat(triple.replicas()).containsExactly(1, 2, 3);
        assertThat(triple.leaderEpoch()).isEqualTo(1);
        assertThat(triple.partitionEpoch()).isEqualTo(1);
        triple = fenceAndElect(failedOver, 2).topic("triple").partition(0);
        assertThat(triple.leader()).isEqualTo(3);
        assertThat(triple.isr()).containsExactly(3);
        assertThat(triple.leaderEpoch()).isEqualTo(2);
        assertThat(triple.partitionEpoch()).isEqualTo(2);
    }

    @Test
    void theLastIsrMemberStaysInTheIsrAndOnlyItBringsThePartitionBack() {
        MetadataImage image = fenceAndElect(fenceAndElect(fenceAndElect(cluster(), 1), 2), 3);
        PartitionRegistration triple = image.topic("triple").partition(0);
        assertThat(triple.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(triple.isr()).containsExactly(3);
        assertThat(triple.leaderEpoch()).isEqualTo(3);

        MetadataImage back = unfenceAndElect(unfenceAndElect(image, 1), 2);
        assertThat(back.topic("triple").partition(0).leader()).as("1 and 2 are not in the ISR: no unclean election")
            .isEqualTo(PartitionRegistration.NO_LEADER);
        triple = unfenceAndElect(back, 3).topic("triple").partition(0);
        assertThat(triple.leader()).isEqualTo(3);
        assertThat(triple.leaderEpoch()).isEqualTo(4);
    }

    @Test
    void aFollowerLeavingShrinksTheIsrWithoutALeaderEpochBump() {
        List<PartitionChangeRecord> records = PartitionLeaderElection.forUnusableBrokers(cluster(), Set.of(3));
        assertThat(records).hasSize(2);
        for (PartitionChangeRecord record : records) {
            assertThat(record.leader()).as("leader unchanged").isEqualTo(-2);
        }
        MetadataImage image = apply(cluster(), records);
        assertThat(image.topic("triple").partition(0)).isEqualTo(new PartitionRegistration(new int[] {1, 2, 3}, new int[] {1, 2}, 1, 0, 1));
        assertThat(image.topic("triple").partition(1)).isEqualTo(new PartitionRegistration(new int[] {2, 3, 4}, new int[] {2, 4}, 2, 0, 1));
    }

    @Test
    void partitionsNotInvolvingTheBrokerAreUntouched() {
        List<PartitionChangeRecord> records = PartitionLeaderElection.forUnusableBrokers(cluster(), Set.of(4));
        assertThat(records).containsExactly(partitionChange(TRIPLE, 1).setIsr(list(2, 3)));
        MetadataImage image = apply(cluster(), records);
        assertThat(image.topic("single")).isEqualTo(cluster().topic("single"));
        assertThat(image.topic("triple").partition(0)).isEqualTo(cluster().topic("triple").partition(0));
    }

    @Test
    void aReplicaOutsideTheIsrIsNeitherShrunkNorElected() {
        MetadataImage image = apply(cluster(), List.of(partitionChange(TRIPLE, 0).setIsr(list(1, 2))));
        List<PartitionChangeRecord> records = PartitionLeaderElection.forUnusableBrokers(image, Set.of(3));
        assertThat(records).extracting(PartitionChangeRecord::partitionId).containsExactly(1);
    }

    @Test
    void severalBrokersAtOnceAreAsIfTakenInAscendingIdOrder() {
        List<PartitionChangeRecord> records = PartitionLeaderElection.forUnusableBrokers(cluster(), Set.of(1, 2, 3));
        MetadataImage image = apply(cluster(), records);
        assertThat(image.topic("triple").partition(0).isr()).containsExactly(3);
        assertThat(image.topic("triple").partition(0).leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(image.topic("triple").partition(1).isr()).containsExactly(4);
        assertThat(image.topic("triple").partition(1).leader()).isEqualTo(4);
        assertThat(image.topic("single").partition(0).leader()).isEqualTo(PartitionRegistration.NO_LEADER);
    }

    @Test
    void nothingChangesWhenTheBrokersLeadNothingAndAreInNoIsr() {
        MetadataImage offline = fenceAndElect(cluster(), 1);
        assertThat(PartitionLeaderElection.forUnusableBrokers(offline, Set.of(1))).as("already out, last ISR member of single").isEmpty();
        assertThat(PartitionLeaderElection.forUnfencedBrokers(cluster(), Set.of(1, 2, 3, 4))).as("every partition has a leader").isEmpty();
    }

    @Test
    void anUnfencedBrokerStillInControlledShutdownDoesNotLead() {
        MetadataImage offline = fenceAndElect(cluster(), 1);
        MetadataImage shuttingDown = apply(offline, List.of(change(1, 1, -1, 1)));
        assertThat(PartitionLeaderElection.forUnfencedBrokers(shuttingDown, Set.of(1))).isEmpty();
    }
}
