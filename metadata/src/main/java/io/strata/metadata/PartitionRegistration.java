package io.strata.metadata;

import java.util.Arrays;

/**
 * A partition as the metadata log describes it: replicas (preferred leader first), in-sync
 * replicas, leader and epochs. Immutable; the arrays are never modified after construction.
 */
public record PartitionRegistration(int[] replicas, int[] isr, int leader, int leaderEpoch, int partitionEpoch) {
    public static final int NO_LEADER = -1;

    public boolean hasLeader() {
        return leader != NO_LEADER;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof PartitionRegistration that && Arrays.equals(replicas, that.replicas) && Arrays.equals(isr, that.isr)
            && leader == that.leader && leaderEpoch == that.leaderEpoch && partitionEpoch == that.partitionEpoch;
    }

    @Override
    public int hashCode() {
        return 31 * (31 * Arrays.hashCode(replicas) + Arrays.hashCode(isr)) + leader * 17 + leaderEpoch;
    }

    @Override
    public String toString() {
        return "PartitionRegistration(replicas=" + Arrays.toString(replicas) + ", isr=" + Arrays.toString(isr) + ", leader=" + leader
            + ", leaderEpoch=" + leaderEpoch + ", partitionEpoch=" + partitionEpoch + ")";
    }
}
