package io.strata.coordinator.group.consumer;

import java.util.UUID;
import java.util.function.BiFunction;

/**
 * Moves a member's current assignment towards its target assignment, one safe step at a time
 * (Kafka's CurrentAssignmentBuilder, written from the KIP-848 rules):
 *
 * <pre>
 *   assigned'  = assigned ∩ target
 *   revoke     = assigned − assigned'
 *   newly      = target − assigned' − {partitions another member still owns}
 *
 *   revoke ≠ ∅ and the member still reports owning some of it
 *        → UNREVOKED_PARTITIONS at the member's current epoch: it must give them up first
 *   otherwise the member moves to the target epoch owning assigned' ∪ newly:
 *        → UNRELEASED_PARTITIONS if some target partition is still owned by another member
 *        → STABLE otherwise
 * </pre>
 *
 * A partition therefore changes hands only after its previous owner reported (in a heartbeat)
 * that it no longer owns it: no partition is ever owned by two members. A member in
 * UNREVOKED_PARTITIONS that keeps reporting the revoked partitions stays where it is (until
 * its rebalance timeout fences it); one in UNRELEASED_PARTITIONS picks the partitions up as
 * their owners release them.
 *
 * <p>Stateless; pure function of its arguments.
 */
final class Reconciler {
    private Reconciler() {
    }

    /**
     * The member's next state.
     *
     * @param owner         the member owning a partition (assigned or pending revocation), or null
     * @param ownedReported the partitions the member reported owning in this heartbeat; null if
     *                      it did not report them (then it is assumed to still own everything)
     */
    static ConsumerGroupMember reconcile(ConsumerGroupMember member, int targetEpoch, Assignment target,
                                         BiFunction<UUID, Integer, String> owner, Assignment ownedReported) {
        switch (member.state()) {
            case STABLE:
                if (member.memberEpoch() == targetEpoch) {
                    return member;
                }
                return next(member, targetEpoch, target, owner, ownedReported);
            case UNREVOKED_PARTITIONS:
                if (stillOwns(member.partitionsPendingRevocation(), ownedReported)) {
                    return member;
                }
                return next(member, targetEpoch, target, owner, ownedReported);
            case UNRELEASED_PARTITIONS:
                return next(member, targetEpoch, target, owner, ownedReported);
            case UNKNOWN:
            default:
                // Written by a newer coordinator: start over from the target (the member was fenced to get here).
                return next(member.withAssignment(member.memberEpoch(), member.previousMemberEpoch(), MemberState.STABLE, Assignment.EMPTY,
                    Assignment.EMPTY, AssignmentEpochs.EMPTY), targetEpoch, target, owner, Assignment.EMPTY);
        }
    }

    private static ConsumerGroupMember next(ConsumerGroupMember member, int targetEpoch, Assignment target,
                                            BiFunction<UUID, Integer, String> owner, Assignment ownedReported) {
        Assignment kept = member.assignedPartitions().intersect(target);
        Assignment revoke = member.assignedPartitions().minus(kept);
        Assignment wanted = target.minus(kept);
        Assignment newly = wanted.filter((topic, partition) -> {
            String current = owner.apply(topic, partition);
            return current == null || current.equals(member.memberId());
        });
        boolean unreleased = newly.size() < wanted.size();
        if (!revoke.isEmpty() && stillOwns(revoke, ownedReported)) {
            return member.transition(member.memberEpoch(), MemberState.UNREVOKED_PARTITIONS, kept, revoke);
        }
        MemberState state = unreleased ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE;
        return member.transition(targetEpoch, state, kept.union(newly), Assignment.EMPTY);
    }

    private static boolean stillOwns(Assignment partitions, Assignment ownedReported) {
        return ownedReported == null || partitions.intersects(ownedReported);
    }
}
