package io.strata.coordinator.group.consumer;

import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/**
 * One member of a consumer group: its subscription (persisted as ConsumerGroupMemberMetadata)
 * and its current assignment and epochs (persisted as ConsumerGroupCurrentMemberAssignment).
 * Immutable; a change produces a new member.
 *
 * <p>Epochs: a new member has epoch 0; it moves to the target assignment epoch once it owns no
 * partition it must give up. {@code memberEpoch == -2} marks a static member that left
 * temporarily (it keeps its partitions until it rejoins or its session expires).
 *
 * @param subscribedTopicNames sorted, without duplicates
 * @param subscribedTopicRegex null when the member does not subscribe by pattern
 * @param serverAssignor null when the member did not ask for one
 * @param assignmentEpochs the epoch each assigned or revoking partition was assigned at (exactly those partitions)
 */
public record ConsumerGroupMember(String memberId, String instanceId, String rackId, String clientId, String clientHost,
                                  List<String> subscribedTopicNames, String subscribedTopicRegex, int rebalanceTimeoutMs,
                                  String serverAssignor, int memberEpoch, int previousMemberEpoch, MemberState state,
                                  Assignment assignedPartitions, Assignment partitionsPendingRevocation, AssignmentEpochs assignmentEpochs) {
    /** The epoch of a static member that left and is expected back within its session timeout. */
    public static final int LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;
    /** The epoch a member sends to leave the group. */
    public static final int LEAVE_GROUP_MEMBER_EPOCH = -1;

    public ConsumerGroupMember {
        subscribedTopicNames = List.copyOf(new TreeSet<>(subscribedTopicNames));
        if (subscribedTopicRegex != null && subscribedTopicRegex.isEmpty()) {
            subscribedTopicRegex = null;
        }
        // O(partitions), so checked with -ea only (tests); every constructor call site derives the epochs from the partitions.
        assert assignmentEpochs.equals(assignmentEpochs.extendTo(assignedPartitions.union(partitionsPendingRevocation), 0))
            : "Assignment epochs must cover exactly the assigned and revoking partitions of member " + memberId + ": assigned="
                + assignedPartitions + ", revoking=" + partitionsPendingRevocation + ", epochs=" + assignmentEpochs;
    }

    /** A member that just joined: no subscription, no partitions, epoch 0. */
    public static ConsumerGroupMember newMember(String memberId) {
        return new ConsumerGroupMember(memberId, null, null, "", "", List.of(), null, -1, null, 0, 0, MemberState.STABLE,
            Assignment.EMPTY, Assignment.EMPTY, AssignmentEpochs.EMPTY);
    }

    public ConsumerGroupMember withMemberId(String newMemberId) {
        return new ConsumerGroupMember(newMemberId, instanceId, rackId, clientId, clientHost, subscribedTopicNames, subscribedTopicRegex,
            rebalanceTimeoutMs, serverAssignor, memberEpoch, previousMemberEpoch, state, assignedPartitions, partitionsPendingRevocation,
            assignmentEpochs);
    }

    /** The member with the subscription fields of a ConsumerGroupMemberMetadata record. */
    public ConsumerGroupMember withMetadata(String newInstanceId, String newRackId, String newClientId, String newClientHost,
                                            Collection<String> newTopicNames, String newRegex, int newRebalanceTimeoutMs,
                                            String newServerAssignor) {
        return new ConsumerGroupMember(memberId, newInstanceId, newRackId, newClientId, newClientHost, List.copyOf(newTopicNames), newRegex,
            newRebalanceTimeoutMs, newServerAssignor, memberEpoch, previousMemberEpoch, state, assignedPartitions, partitionsPendingRevocation,
            assignmentEpochs);
    }

    /** The member with the fields of a ConsumerGroupCurrentMemberAssignment record. */
    public ConsumerGroupMember withAssignment(int newMemberEpoch, int newPreviousMemberEpoch, MemberState newState, Assignment assigned,
                                              Assignment pendingRevocation, AssignmentEpochs epochs) {
        return new ConsumerGroupMember(memberId, instanceId, rackId, clientId, clientHost, subscribedTopicNames, subscribedTopicRegex,
            rebalanceTimeoutMs, serverAssignor, newMemberEpoch, newPreviousMemberEpoch, newState, assigned, pendingRevocation, epochs);
    }

    /**
     * Moves to {@code epoch}, remembering the current epoch as the previous one (as Kafka does on
     * every transition). Partitions the member keeps keep their assignment epochs; new ones are
     * assigned at {@code epoch}.
     */
    public ConsumerGroupMember transition(int epoch, MemberState newState, Assignment assigned, Assignment pendingRevocation) {
        return withAssignment(epoch, memberEpoch, newState, assigned, pendingRevocation,
            assignmentEpochs.extendTo(assigned.union(pendingRevocation), epoch));
    }

    /** Whether the subscription fields (what the metadata record holds) differ. */
    public boolean metadataDiffers(ConsumerGroupMember other) {
        return !java.util.Objects.equals(instanceId, other.instanceId) || !java.util.Objects.equals(rackId, other.rackId)
            || !clientId.equals(other.clientId) || !clientHost.equals(other.clientHost) || !subscribedTopicNames.equals(other.subscribedTopicNames)
            || !java.util.Objects.equals(subscribedTopicRegex, other.subscribedTopicRegex) || rebalanceTimeoutMs != other.rebalanceTimeoutMs
            || !java.util.Objects.equals(serverAssignor, other.serverAssignor);
    }

    /** Whether the assignment fields (what the current assignment record holds) differ. */
    public boolean assignmentDiffers(ConsumerGroupMember other) {
        return memberEpoch != other.memberEpoch || previousMemberEpoch != other.previousMemberEpoch || state != other.state
            || !assignedPartitions.equals(other.assignedPartitions) || !partitionsPendingRevocation.equals(other.partitionsPendingRevocation)
            || !assignmentEpochs.equals(other.assignmentEpochs);
    }

    public boolean subscriptionDiffers(ConsumerGroupMember other) {
        return !subscribedTopicNames.equals(other.subscribedTopicNames) || !java.util.Objects.equals(subscribedTopicRegex, other.subscribedTopicRegex);
    }

    public boolean isStatic() {
        return instanceId != null;
    }

    /** Whether the member owns exactly its target at {@code targetEpoch} and waits for nothing. */
    public boolean isReconciledTo(int targetEpoch) {
        return state == MemberState.STABLE && memberEpoch == targetEpoch;
    }
}
