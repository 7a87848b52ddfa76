package io.strata.metadata;

import java.util.Arrays;

/**
 * A partition as the metadata log describes it: replicas (preferred leader first), in-sync
 * replicas, leader and epochs, plus Kafka's reassignment, ELR (KIP-966) and leader recovery
 * (KIP-704) state. Immutable; the arrays are never modified after construction (callers must
 * not modify the arrays they pass or read either).
 *
 * <p>Invariants the controller keeps (not checked here, so a replayed log is never refused):
 * the leader is in the ISR or is {@link #NO_LEADER}; ELR and ISR are disjoint; the ELR is empty
 * while the ISR has at least the effective min ISR members. Only {@code leaderRecoveryState}
 * is checked: {@link #RECOVERED} or {@link #RECOVERING}.
 *
 * @param addingReplicas   replicas a reassignment is adding (KIP-455), empty if none
 * @param removingReplicas replicas a reassignment is removing, empty if none
 * @param elr              eligible leader replicas: former ISR members known to hold every committed record
 * @param lastKnownElr     Kafka 4's "last known leader" slot: the leader when the ISR became empty
 * @param leaderRecoveryState {@link #RECOVERED} (0) or {@link #RECOVERING} (1)
 */
public record PartitionRegistration(int[] replicas, int[] isr, int leader, int leaderEpoch, int partitionEpoch, int[] addingReplicas,
                                    int[] removingReplicas, int[] elr, int[] lastKnownElr, byte leaderRecoveryState) {
    public static final int NO_LEADER = -1;
    /** The leader was elected cleanly or finished recovering. */
    public static final byte RECOVERED = 0;
    /** The leader came from an unclean election and is rebuilding its state (KIP-704). */
    public static final byte RECOVERING = 1;
    private static final int[] NONE = new int[0];

    /** A registration without reassignment or ELR state, RECOVERED. */
    public PartitionRegistration(int[] replicas, int[] isr, int leader, int leaderEpoch, int partitionEpoch) {
        this(replicas, isr, leader, leaderEpoch, partitionEpoch, NONE, NONE, NONE, NONE, RECOVERED);
    }

    public PartitionRegistration {
        if (leaderRecoveryState != RECOVERED && leaderRecoveryState != RECOVERING) {
            throw new IllegalArgumentException("leaderRecoveryState must be 0 (RECOVERED) or 1 (RECOVERING): leaderRecoveryState="
                + leaderRecoveryState);
        }
    }

    public boolean hasLeader() {
        return leader != NO_LEADER;
    }

    /** True if {@code brokerId} is in {@link #replicas()}. */
    public boolean hasReplica(int brokerId) {
        return contains(replicas, brokerId);
    }

    /** True if {@code brokerId} is in {@link #isr()}. */
    public boolean inIsr(int brokerId) {
        return contains(isr, brokerId);
    }

    /** True if {@code brokerId} is in {@link #elr()}. */
    public boolean inElr(int brokerId) {
        return contains(elr, brokerId);
    }

    /**
     * This registration after {@code change}, KRaft's replay rule: a field at its default is
     * unchanged (Leader -2, arrays null, LeaderRecoveryState -1); Leader -1 means no leader. A
     * change naming a Leader (even the current one) bumps the leader epoch; every change bumps the
     * partition epoch. So an ISR-only change keeps the leader epoch (KAFKA-15021), and whoever
     * writes a change that removes replicas names the current leader to bump it (KAFKA-12803,
     * {@link PartitionChangeBuilder}).
     */
    public PartitionRegistration merge(io.strata.metadata.record.PartitionChangeRecord change) {
        boolean leaderNamed = change.leader() != PartitionChangeBuilder.NO_LEADER_CHANGE;
        return new PartitionRegistration(
            change.replicas() != null ? toArray(change.replicas()) : replicas,
            change.isr() != null ? toArray(change.isr()) : isr,
            leaderNamed ? change.leader() : leader,
            leaderNamed ? leaderEpoch + 1 : leaderEpoch,
            partitionEpoch + 1,
            change.addingReplicas() != null ? toArray(change.addingReplicas()) : addingReplicas,
            change.removingReplicas() != null ? toArray(change.removingReplicas()) : removingReplicas,
            change.eligibleLeaderReplicas() != null ? toArray(change.eligibleLeaderReplicas()) : elr,
            change.lastKnownElr() != null ? toArray(change.lastKnownElr()) : lastKnownElr,
            change.leaderRecoveryState() != -1 ? change.leaderRecoveryState() : leaderRecoveryState);
    }

    /** The registration a PartitionRecord describes; null arrays of its tagged fields are empty. */
    public static PartitionRegistration of(io.strata.metadata.record.PartitionRecord record) {
        return new PartitionRegistration(toArray(record.replicas()), toArray(record.isr()), record.leader(), record.leaderEpoch(),
            record.partitionEpoch(), toArray(record.addingReplicas()), toArray(record.removingReplicas()),
            toArray(record.eligibleLeaderReplicas()), toArray(record.lastKnownElr()), record.leaderRecoveryState());
    }

    /** This registration as a PartitionRecord of {@code topicId}; empty reassignment and ELR lists are left out (null). */
    public io.strata.metadata.record.PartitionRecord toRecord(java.util.UUID topicId, int partitionId) {
        io.strata.metadata.record.PartitionRecord record = new io.strata.metadata.record.PartitionRecord().setTopicId(topicId)
            .setPartitionId(partitionId).setLeader(leader).setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch)
            .setReplicas(toList(replicas)).setIsr(toList(isr)).setLeaderRecoveryState(leaderRecoveryState);
        record.setAddingReplicas(addingReplicas.length == 0 ? null : toList(addingReplicas));
        record.setRemovingReplicas(removingReplicas.length == 0 ? null : toList(removingReplicas));
        record.setEligibleLeaderReplicas(elr.length == 0 ? null : toList(elr));
        record.setLastKnownElr(lastKnownElr.length == 0 ? null : toList(lastKnownElr));
        return record;
    }

    static int[] toArray(java.util.List<Integer> values) {
        if (values == null || values.isEmpty()) {
            return NONE;
        }
        int[] array = new int[values.size()];
        for (int i = 0; i < array.length; i++) {
            array[i] = values.get(i);
        }
        return array;
    }

    static java.util.List<Integer> toList(int[] values) {
        java.util.List<Integer> list = new java.util.ArrayList<>(values.length);
        for (int value : values) {
            list.add(value);
        }
        return list;
    }

    static boolean contains(int[] values, int value) {
        for (int v : values) {
            if (v == value) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof PartitionRegistration that && Arrays.equals(replicas, that.replicas) && Arrays.equals(isr, that.isr)
            && leader == that.leader && leaderEpoch == that.leaderEpoch && partitionEpoch == that.partitionEpoch
            && Arrays.equals(addingReplicas, that.addingReplicas) && Arrays.equals(removingReplicas, that.removingReplicas)
            && Arrays.equals(elr, that.elr) && Arrays.equals(lastKnownElr, that.lastKnownElr) && leaderRecoveryState == that.leaderRecoveryState;
    }

    @Override
    public int hashCode() {
        int hash = 31 * (31 * Arrays.hashCode(replicas) + Arrays.hashCode(isr)) + leader * 17 + leaderEpoch;
        hash = 31 * hash + partitionEpoch;
        hash = 31 * hash + Arrays.hashCode(addingReplicas);
        hash = 31 * hash + Arrays.hashCode(removingReplicas);
        hash = 31 * hash + Arrays.hashCode(elr);
        hash = 31 * hash + Arrays.hashCode(lastKnownElr);
        return 31 * hash + leaderRecoveryState;
    }

    @Override
    public String toString() {
        return "PartitionRegistration(replicas=" + Arrays.toString(replicas) + ", isr=" + Arrays.toString(isr) + ", leader=" + leader
            + ", leaderEpoch=" + leaderEpoch + ", partitionEpoch=" + partitionEpoch + ", addingReplicas=" + Arrays.toString(addingReplicas)
            + ", removingReplicas=" + Arrays.toString(removingReplicas) + ", elr=" + Arrays.toString(elr) + ", lastKnownElr="
            + Arrays.toString(lastKnownElr) + ", leaderRecoveryState=" + (leaderRecoveryState == RECOVERED ? "RECOVERED" : "RECOVERING") + ")";
    }
}
