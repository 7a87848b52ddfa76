package io.strata.server.replica;

import java.util.Set;
import java.util.TreeSet;

/**
 * The in-sync replica set of a partition this node leads, as the leader sees it (Kafka's
 * {@code PartitionState}, KIP-497). {@link #isr()} is the set the controller committed;
 * {@link #maximalIsr()} also holds a member a pending change may add, and still holds a member a
 * pending shrink removes, so the high watermark (computed over the maximal set) is safe whichever
 * way the pending change ends, while {@code min.insync.replicas} is checked against the committed set.
 *
 * <p>At most one change is pending per partition: while one is, no other ISR change starts.
 * Immutable; a {@link Partition} swaps its state under its write lock.
 */
public sealed interface PartitionState {
    /** The ISR the controller committed. */
    Set<Integer> isr();

    /** The committed ISR plus any member a pending change adds (a pending shrink keeps its leaving members). */
    Set<Integer> maximalIsr();

    /** Whether an AlterPartition for this partition is in flight. */
    boolean isInflight();

    /** The leader recovery state (KIP-704): 0 RECOVERED, 1 RECOVERING. */
    byte leaderRecoveryState();

    /** Recovery state of a partition whose leader has all of its data (KIP-704). */
    byte RECOVERED = 0;

    /** The ISR as committed, nothing pending. */
    record Committed(Set<Integer> isr, byte leaderRecoveryState) implements PartitionState {
        public Committed {
            isr = Set.copyOf(isr);
        }

        @Override
        public Set<Integer> maximalIsr() {
            return isr;
        }

        @Override
        public boolean isInflight() {
            return false;
        }
    }

    /**
     * An AlterPartition adding {@code newMember} was sent and is not answered yet. The maximal ISR
     * is derived once here: every append and follower fetch reads it while the change is pending.
     */
    record PendingExpand(Set<Integer> isr, int newMember, byte leaderRecoveryState, Set<Integer> maximalIsr) implements PartitionState {
        public PendingExpand(Set<Integer> isr, int newMember, byte leaderRecoveryState) {
            this(isr, newMember, leaderRecoveryState, Set.of());
        }

        /** {@code maximalIsr} is always {@code isr} plus {@code newMember}, whatever is passed. */
        public PendingExpand {
            isr = Set.copyOf(isr);
            if (isr.contains(newMember)) {
                throw new IllegalArgumentException("replica " + newMember + " is already in the ISR " + isr);
            }
            Set<Integer> maximal = new TreeSet<>(isr);
            maximal.add(newMember);
            maximalIsr = Set.copyOf(maximal);
        }

        /** The ISR the request asks for. */
        public Set<Integer> proposedIsr() {
            return maximalIsr();
        }

        @Override
        public boolean isInflight() {
            return true;
        }
    }

    /**
     * KIP-704: this leader was elected uncleanly (the image says RECOVERING) and an AlterPartition
     * with the same ISR and RECOVERED was sent and is not answered yet; {@link #leaderRecoveryState()}
     * is the state asked for.
     */
    record PendingRecovery(Set<Integer> isr) implements PartitionState {
        public PendingRecovery {
            isr = Set.copyOf(isr);
        }

        @Override
        public Set<Integer> maximalIsr() {
            return isr;
        }

        @Override
        public boolean isInflight() {
            return true;
        }

        @Override
        public byte leaderRecoveryState() {
            return RECOVERED;
        }
    }

    /** An AlterPartition removing {@code outOfSync} was sent and is not answered yet. */
    record PendingShrink(Set<Integer> isr, Set<Integer> outOfSync, byte leaderRecoveryState) implements PartitionState {
        public PendingShrink {
            isr = Set.copyOf(isr);
            outOfSync = Set.copyOf(outOfSync);
            if (!isr.containsAll(outOfSync)) {
                throw new IllegalArgumentException("out-of-sync replicas " + outOfSync + " are not all in the ISR " + isr);
            }
        }

        /** A pending shrink still counts the leaving members: the high watermark waits for them until it is committed. */
        @Override
        public Set<Integer> maximalIsr() {
            return isr;
        }

        /** The ISR the request asks for. */
        public Set<Integer> proposedIsr() {
            Set<Integer> proposed = new TreeSet<>(isr);
            proposed.removeAll(outOfSync);
            return Set.copyOf(proposed);
        }

        @Override
        public boolean isInflight() {
            return true;
        }
    }
}
