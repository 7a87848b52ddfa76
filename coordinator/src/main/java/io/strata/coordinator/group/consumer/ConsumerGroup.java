package io.strata.coordinator.group.consumer;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The state of one consumer group (KIP-848), exactly what its records in
 * {@code __consumer_offsets} say: the group epoch, the target assignment and its epoch, the
 * members with their subscriptions and current assignments, and the resolved regular
 * expressions. Changed only by {@link ConsumerGroupManager} replaying records, so the state
 * after a restart equals the state before it.
 *
 * <p>Invariant (checked on every member update): a partition is owned by at most one member,
 * where a member owns its assigned partitions and those it has not revoked yet. A violation is
 * a coordinator bug and throws {@link IllegalStateException} naming the partition and both
 * members.
 *
 * <p>Not thread-safe: owned by its shard's thread.
 */
public final class ConsumerGroup {
    /** Group states as Kafka names them (ListGroups, ConsumerGroupDescribe). */
    public enum State {
        EMPTY("Empty"), ASSIGNING("Assigning"), RECONCILING("Reconciling"), STABLE("Stable"), DEAD("Dead");

        public final String displayName;

        State(String displayName) {
            this.displayName = displayName;
        }
    }

    /** A regular expression resolved against the topics at {@code version}. */
    public record ResolvedRegex(SortedSet<String> topics, long version, long timestampMs) {
    }

    final String groupId;
    int groupEpoch;
    long metadataHash;
    int assignmentEpoch;
    final Map<String, ConsumerGroupMember> members = new TreeMap<>();
    /** Static members: instance id → member id. */
    final Map<String, String> staticMembers = new HashMap<>();
    final Map<String, Assignment> targetAssignment = new HashMap<>();
    /** Owner of each owned partition: topic id → partition → member id. */
    private final Map<UUID, Map<Integer, String>> owners = new HashMap<>();
    final Map<String, ResolvedRegex> regexes = new TreeMap<>();
    /** Soft state: the topics version the subscribed-topics hash and the regexes were last checked against. */
    long topicsCheckedVersion = -1;

    ConsumerGroup(String groupId) {
        this.groupId = groupId;
    }

    public String groupId() {
        return groupId;
    }

    /**
     * An independent copy of this group (members and assignments are immutable values and
     * shared), the undo of a change: the manager takes one before a change's first record and
     * puts it back if the change's write fails.
     */
    ConsumerGroup copy() {
        ConsumerGroup copy = new ConsumerGroup(groupId);
        copy.groupEpoch = groupEpoch;
        copy.metadataHash = metadataHash;
        copy.assignmentEpoch = assignmentEpoch;
        for (ConsumerGroupMember member : members.values()) {
            copy.updateMember(member, false);
        }
        copy.targetAssignment.putAll(targetAssignment);
        copy.regexes.putAll(regexes);
        copy.topicsCheckedVersion = topicsCheckedVersion;
        return copy;
    }

    public int groupEpoch() {
        return groupEpoch;
    }

    public int assignmentEpoch() {
        return assignmentEpoch;
    }

    public Map<String, ConsumerGroupMember> members() {
        return Collections.unmodifiableMap(members);
    }

    public ConsumerGroupMember member(String memberId) {
        return members.get(memberId);
    }

    public ConsumerGroupMember staticMember(String instanceId) {
        String memberId = staticMembers.get(instanceId);
        return memberId == null ? null : members.get(memberId);
    }

    public Assignment targetAssignment(String memberId) {
        return targetAssignment.getOrDefault(memberId, Assignment.EMPTY);
    }

    public boolean isEmpty() {
        return members.isEmpty();
    }

    public State state() {
        if (members.isEmpty()) {
            return State.EMPTY;
        }
        if (groupEpoch > assignmentEpoch) {
            return State.ASSIGNING;
        }
        for (ConsumerGroupMember member : members.values()) {
            if (!member.isReconciledTo(assignmentEpoch)) {
                return State.RECONCILING;
            }
        }
        return State.STABLE;
    }

    /** The member owning {@code topicId}-{@code partition} (assigned or not yet revoked), or null. */
    public String ownerOf(UUID topicId, int partition) {
        Map<Integer, String> topic = owners.get(topicId);
        return topic == null ? null : topic.get(partition);
    }

    /**
     * Adds or replaces a member. With {@code strict}, a partition the new state claims that
     * another member owns is a bug and throws; without (while loading records another
     * coordinator wrote), the newer claim wins.
     */
    void updateMember(ConsumerGroupMember member, boolean strict) {
        ConsumerGroupMember previous = members.put(member.memberId(), member);
        if (previous != null) {
            releaseOwnership(previous);
            if (previous.instanceId() != null && !previous.instanceId().equals(member.instanceId())) {
                staticMembers.remove(previous.instanceId(), previous.memberId());
            }
        }
        claimOwnership(member, member.assignedPartitions(), strict);
        claimOwnership(member, member.partitionsPendingRevocation(), strict);
        if (member.instanceId() != null) {
            staticMembers.put(member.instanceId(), member.memberId());
        }
    }

    void removeMember(String memberId) {
        ConsumerGroupMember removed = members.remove(memberId);
        if (removed != null) {
            releaseOwnership(removed);
            if (removed.instanceId() != null) {
                staticMembers.remove(removed.instanceId(), memberId);
            }
        }
    }

    private void claimOwnership(ConsumerGroupMember member, Assignment partitions, boolean strict) {
        for (Map.Entry<UUID, SortedSet<Integer>> topic : partitions.partitions().entrySet()) {
            Map<Integer, String> topicOwners = owners.computeIfAbsent(topic.getKey(), t -> new HashMap<>());
            for (int partition : topic.getValue()) {
                String owner = topicOwners.put(partition, member.memberId());
                if (owner != null && !owner.equals(member.memberId()) && strict) {
                    throw new IllegalStateException("Partition " + topic.getKey() + "-" + partition + " of group " + groupId
                        + " would be owned by two members: owner=" + owner + ", claimant=" + member.memberId() + ", claimantEpoch=" + member.memberEpoch());
                }
            }
        }
    }

    private void releaseOwnership(ConsumerGroupMember member) {
        for (Assignment partitions : new Assignment[] {member.assignedPartitions(), member.partitionsPendingRevocation()}) {
            for (Map.Entry<UUID, SortedSet<Integer>> topic : partitions.partitions().entrySet()) {
                Map<Integer, String> topicOwners = owners.get(topic.getKey());
                if (topicOwners == null) {
                    continue;
                }
                for (int partition : topic.getValue()) {
                    topicOwners.remove(partition, member.memberId());
                }
                if (topicOwners.isEmpty()) {
                    owners.remove(topic.getKey());
                }
            }
        }
    }

    /** The topic names a member subscribes to: its names plus what its regular expression resolved to. */
    Set<String> subscribedTopicNames(ConsumerGroupMember member) {
        if (member.subscribedTopicRegex() == null) {
            return new TreeSet<>(member.subscribedTopicNames());
        }
        Set<String> names = new TreeSet<>(member.subscribedTopicNames());
        ResolvedRegex resolved = regexes.get(member.subscribedTopicRegex());
        if (resolved != null) {
            names.addAll(resolved.topics());
        }
        return names;
    }

    /** The topic names any of {@code groupMembers} subscribes to. */
    Set<String> subscribedTopicNames(Collection<ConsumerGroupMember> groupMembers) {
        Set<String> names = new TreeSet<>();
        for (ConsumerGroupMember member : groupMembers) {
            names.addAll(subscribedTopicNames(member));
        }
        return names;
    }

    /** Whether any member subscribes to {@code topic} (OffsetDelete refuses to delete such offsets). */
    public boolean isSubscribedTo(String topic) {
        for (ConsumerGroupMember member : members.values()) {
            if (subscribedTopicNames(member).contains(topic)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a member other than {@code exceptMemberId} subscribes with {@code regex}. */
    boolean regexUsedByOthers(String regex, String exceptMemberId) {
        for (ConsumerGroupMember member : members.values()) {
            if (!member.memberId().equals(exceptMemberId) && regex.equals(member.subscribedTopicRegex())) {
                return true;
            }
        }
        return false;
    }

    /** The server assignor most members asked for (ties: by name), or {@code defaultAssignor}. */
    static String preferredAssignor(Collection<ConsumerGroupMember> groupMembers, String defaultAssignor) {
        Map<String, Integer> votes = new TreeMap<>();
        for (ConsumerGroupMember member : groupMembers) {
            if (member.serverAssignor() != null) {
                votes.merge(member.serverAssignor(), 1, Integer::sum);
            }
        }
        String best = defaultAssignor;
        int bestVotes = 0;
        for (Map.Entry<String, Integer> vote : votes.entrySet()) {
            if (vote.getValue() > bestVotes) {
                best = vote.getKey();
                bestVotes = vote.getValue();
            }
        }
        return best;
    }
}
