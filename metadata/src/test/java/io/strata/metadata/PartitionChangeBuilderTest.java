package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.IntPredicate;

import static org.assertj.core.api.Assertions.assertThat;

/** The builder's election order, ELR upkeep (KIP-966) and epoch rules (KAFKA-15021, KAFKA-12803), record by record. */
class PartitionChangeBuilderTest {
    private static final UUID TOPIC = new UUID(1, 2);
    private static final IntPredicate ALL = id -> true;

    private static PartitionRegistration registration(int[] replicas, int[] isr, int leader, int[] elr, int[] lastKnownElr) {
        return new PartitionRegistration(replicas, isr, leader, 5, 9, new int[0], new int[0], elr, lastKnownElr, PartitionRegistration.RECOVERED);
    }

    private static PartitionRegistration rf3(int leader, int... isr) {
        return registration(new int[] {1, 2, 3}, isr, leader, new int[0], new int[0]);
    }

    private static PartitionChangeBuilder builder(PartitionRegistration partition, IntPredicate acceptable, int minIsr, boolean elr) {
        return new PartitionChangeBuilder(partition, TOPIC, 0, acceptable, minIsr, elr);
    }

    private static IntPredicate except(Integer... unusable) {
        Set<Integer> set = Set.of(unusable);
        return id -> !set.contains(id);
    }

    @Test
    void anIsrShrinkNamesNoLeaderAndKeepsTheLeaderEpoch() {
        PartitionRegistration partition = rf3(1, 1, 2, 3);
        PartitionChangeRecord record = builder(partition, ALL, 1, false).setTargetIsr(List.of(1, 2)).build().orElseThrow();
        assertThat(record.isr()).containsExactly(1, 2);
        assertThat(record.leader()).isEqualTo(PartitionChangeBuilder.NO_LEADER_CHANGE);
        PartitionRegistration after = partition.merge(record);
        assertThat(after.leaderEpoch()).isEqualTo(5);
        assertThat(after.partitionEpoch()).isEqualTo(10);
    }

    @Test
    void nothingToChangeBuildsNoRecord() {
        assertThat(builder(rf3(1, 1, 2, 3), ALL, 2, true).setTargetIsr(List.of(1, 2, 3)).build()).isEmpty();
        assertThat(builder(rf3(1, 1, 2, 3), ALL, 1, false).build()).isEmpty();
    }

    @Test
    void theLeaderStaysWhileValidElseTheFirstValidReplicaInReplicaOrderLeads() {
        PartitionRegistration partition = registration(new int[] {3, 1, 2}, new int[] {1, 2, 3}, 2, new int[0], new int[0]);
        assertThat(builder(partition, ALL, 1, false).setTargetIsr(List.of(1, 2)).build().orElseThrow().leader())
            .as("2 stays").isEqualTo(PartitionChangeBuilder.NO_LEADER_CHANGE);
        PartitionChangeRecord moved = builder(partition, except(2, 3), 1, false).setTargetIsr(List.of(1, 3)).build().orElseThrow();
        assertThat(moved.leader()).as("3 comes first in replica order but may not lead").isEqualTo(1);
        assertThat(partition.merge(moved).leaderEpoch()).isEqualTo(6);
    }

    @Test
    void removingAReplicaFromTheAssignmentBumpsTheLeaderEpoch() {
        PartitionRegistration partition = rf3(1, 1, 2, 3);
        PartitionChangeRecord record = builder(partition, ALL, 1, false).setTargetReplicas(List.of(1, 2)).setTargetIsr(List.of(1, 2))
            .build().orElseThrow();
        assertThat(record.leader()).as("the current leader is named (KAFKA-12803)").isEqualTo(1);
        assertThat(record.replicas()).containsExactly(1, 2);
        assertThat(partition.merge(record).leaderEpoch()).isEqualTo(6);
        PartitionChangeRecord added = builder(partition, ALL, 1, false).setTargetReplicas(List.of(1, 2, 3, 4)).build().orElseThrow();
        assertThat(added.leader()).as("adding a replica does not").isEqualTo(PartitionChangeBuilder.NO_LEADER_CHANGE);
    }

    @Test
    void withoutElrAnEmptyTargetIsrKeepsTheLastMemberAndTheLeaderGoes() {
        PartitionRegistration partition = rf3(3, 3);
        PartitionChangeRecord record = builder(partition, except(3), 2, false).setTargetIsr(List.of()).build().orElseThrow();
        assertThat(record.isr()).as("ISR unchanged").isNull();
        assertThat(record.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(record.eligibleLeaderReplicas()).isNull();
    }

    @Test
    void withElrMembersLeavingBelowMinIsrEnterTheElrAndReachingMinIsrClearsIt() {
        PartitionRegistration partition = rf3(1, 1, 2, 3);
        PartitionRegistration shrunk = partition.merge(builder(partition, ALL, 2, true).setTargetIsr(List.of(1, 2)).build().orElseThrow());
        assertThat(shrunk.elr()).as("ISR 2 = min ISR: no ELR").isEmpty();
        PartitionRegistration below = shrunk.merge(builder(shrunk, ALL, 2, true).setTargetIsr(List.of(1)).build().orElseThrow());
        assertThat(below.isr()).containsExactly(1);
        assertThat(below.elr()).containsExactly(2);
        PartitionRegistration back = below.merge(builder(below, ALL, 2, true).setTargetIsr(List.of(1, 3)).build().orElseThrow());
        assertThat(back.elr()).as("ISR back at min ISR clears the ELR").isEmpty();
        assertThat(back.leaderEpoch()).isEqualTo(5);
    }

    @Test
    void withElrTheIsrMayEmptyAndAnElrMemberLeadsOnceItMay() {
        PartitionRegistration partition = registration(new int[] {1, 2, 3}, new int[] {1}, 1, new int[] {2, 3}, new int[0]);
        PartitionChangeRecord fenced = builder(partition, except(1, 2, 3), 2, true).setTargetIsr(List.of()).build().orElseThrow();
        PartitionRegistration offline = partition.merge(fenced);
        assertThat(offline.isr()).isEmpty();
        assertThat(offline.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(offline.elr()).containsExactly(1, 2, 3);
        assertThat(offline.lastKnownElr()).as("the last known leader").containsExactly(1);

        PartitionChangeRecord elected = builder(offline, except(1, 2), 2, true).build().orElseThrow();
        PartitionRegistration online = offline.merge(elected);
        assertThat(online.leader()).as("the first unfenced ELR member").isEqualTo(3);
        assertThat(online.isr()).containsExactly(3);
        assertThat(online.elr()).containsExactly(1, 2);
        assertThat(online.lastKnownElr()).as("cleared once the partition has a leader").isEmpty();
        assertThat(online.leaderRecoveryState()).as("an ELR election is clean").isEqualTo(PartitionRegistration.RECOVERED);
    }

    @Test
    void uncleanShutdownReplicasNeverEnterTheElr() {
        PartitionRegistration partition = rf3(1, 1, 2);
        PartitionChangeRecord record = builder(partition, except(2), 2, true).setTargetIsr(List.of(1)).setUncleanShutdownReplicas(Set.of(2))
            .build().orElseThrow();
        assertThat(record.eligibleLeaderReplicas()).as("unchanged: still empty").isNull();
        assertThat(partition.merge(record).elr()).isEmpty();
        PartitionRegistration withElr = registration(new int[] {1, 2, 3}, new int[] {1}, 1, new int[] {2, 3}, new int[0]);
        PartitionChangeRecord removed = builder(withElr, ALL, 2, true).setUncleanShutdownReplicas(Set.of(3)).build().orElseThrow();
        assertThat(removed.eligibleLeaderReplicas()).containsExactly(2);
    }

    @Test
    void theLastKnownLeaderIsElectedUncleanlyWhenIsrAndElrAreEmpty() {
        PartitionRegistration partition = registration(new int[] {1, 2, 3}, new int[0], PartitionRegistration.NO_LEADER, new int[0], new int[] {2});
        assertThat(builder(partition, except(2), 2, true).build()).as("not while it may not lead").isEmpty();
        PartitionRegistration after = partition.merge(builder(partition, ALL, 2, true).build().orElseThrow());
        assertThat(after.leader()).isEqualTo(2);
        assertThat(after.isr()).containsExactly(2);
        assertThat(after.leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);
        assertThat(after.lastKnownElr()).isEmpty();
    }

    @Test
    void anUncleanElectionTakesAnyAcceptableReplicaAndMarksItRecovering() {
        PartitionRegistration partition = rf3(PartitionRegistration.NO_LEADER, 1);
        assertThat(builder(partition, except(1), 1, false).build()).isEmpty();
        PartitionChangeRecord record = builder(partition, except(1), 1, false).setElection(PartitionChangeBuilder.Election.UNCLEAN).build()
            .orElseThrow();
        assertThat(record.leader()).isEqualTo(2);
        assertThat(record.isr()).containsExactly(2);
        assertThat(record.leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERING);
    }

    @Test
    void theRecoveryStateChangesOnlyWhenAsked() {
        PartitionRegistration recovering = new PartitionRegistration(new int[] {1, 2}, new int[] {1}, 1, 5, 9, new int[0], new int[0], new int[0],
            new int[0], PartitionRegistration.RECOVERING);
        Optional<PartitionChangeRecord> recovered = builder(recovering, ALL, 1, false).setTargetLeaderRecoveryState(PartitionRegistration.RECOVERED)
            .build();
        assertThat(recovered.orElseThrow().leaderRecoveryState()).isEqualTo(PartitionRegistration.RECOVERED);
        assertThat(recovered.get().leader()).isEqualTo(PartitionChangeBuilder.NO_LEADER_CHANGE);
    }
}
