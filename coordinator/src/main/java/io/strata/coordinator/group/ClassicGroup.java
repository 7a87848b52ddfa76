package io.strata.coordinator.group;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;

/**
 * The state of one classic group: members, generation, selected protocol and leader, plus
 * what a rebalance in progress is waiting for. Not thread-safe: owned by its shard's thread.
 */
final class ClassicGroup {
    final String groupId;
    ClassicGroupState state = ClassicGroupState.EMPTY;
    String protocolType;
    String protocolName;
    String leaderId;
    int generationId;
    long stateTimestampMs;
    final LinkedHashMap<String, ClassicGroupMember> members = new LinkedHashMap<>();
    /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet. */
    final Set<String> pendingMembers = new LinkedHashSet<>();
    /** Static members: group.instance.id → member id. */
    final Map<String, String> staticMembers = new HashMap<>();
    ScheduledFuture<?> joinTimer;
    /** Rebalance statistics (metrics only): when the running rebalance began (-1: none), and the completed ones. */
    long rebalanceStartMs = -1;
    long completedRebalances;
    long lastRebalanceDurationMs = -1;
    long totalRebalanceDurationMs;
    /** Set while the initial rebalance delay of an empty group is running. */
    boolean initialDelayRunning;
    long initialDelayDeadlineMs;

    ClassicGroup(String groupId) {
        this.groupId = groupId;
    }

    boolean is(ClassicGroupState expected) {
        return state == expected;
    }

    void transitionTo(ClassicGroupState next, long nowMs) {
        if (next == ClassicGroupState.PREPARING_REBALANCE && rebalanceStartMs < 0) {
            rebalanceStartMs = nowMs;
        } else if (next == ClassicGroupState.STABLE && rebalanceStartMs >= 0) {
            completedRebalances++;
            lastRebalanceDurationMs = nowMs - rebalanceStartMs;
            totalRebalanceDurationMs += lastRebalanceDurationMs;
            rebalanceStartMs = -1;
        } else if (next == ClassicGroupState.EMPTY || next == ClassicGroupState.DEAD) {
            rebalanceStartMs = -1;
        }
        state = next;
        stateTimestampMs = nowMs;
    }

    boolean hasMember(String memberId) {
        return members.containsKey(memberId);
    }

    int size() {
        return members.size() + pendingMembers.size();
    }

    void add(ClassicGroupMember member) {
        if (members.isEmpty()) {
            protocolType = member.protocolType;
        }
        members.put(member.memberId, member);
        if (member.isStatic()) {
            staticMembers.put(member.groupInstanceId, member.memberId);
        }
        if (leaderId == null) {
            leaderId = member.memberId;
        }
        pendingMembers.remove(member.memberId);
    }

    ClassicGroupMember remove(String memberId) {
        ClassicGroupMember removed = members.remove(memberId);
        if (removed != null) {
            removed.cancelSessionTimer();
            if (removed.isStatic()) {
                staticMembers.remove(removed.groupInstanceId);
            }
        }
        if (memberId.equals(leaderId)) {
            leaderId = members.isEmpty() ? null : members.keySet().iterator().next();
        }
        return removed;
    }

    /** Whether every member supports one of {@code protocols} (a new member may join). */
    boolean supportsProtocols(String memberProtocolType, Set<String> protocols) {
        if (members.isEmpty()) {
            return !memberProtocolType.isEmpty() && !protocols.isEmpty();
        }
        if (!memberProtocolType.equals(protocolType)) {
            return false;
        }
        Set<String> common = candidateProtocols();
        common.retainAll(protocols);
        return !common.isEmpty();
    }

    Set<String> candidateProtocols() {
        Set<String> candidates = null;
        for (ClassicGroupMember member : members.values()) {
            if (candidates == null) {
                candidates = new LinkedHashSet<>(member.protocols.keySet());
            } else {
                candidates.retainAll(member.protocols.keySet());
            }
        }
        return candidates == null ? new HashSet<>() : candidates;
    }

    /** Each member votes for its most preferred protocol that all support; the most votes wins. */
    String selectProtocol() {
        Set<String> candidates = candidateProtocols();
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (ClassicGroupMember member : members.values()) {
            for (String protocol : member.protocols.keySet()) {
                if (candidates.contains(protocol)) {
                    votes.merge(protocol, 1, Integer::sum);
                    break;
                }
            }
        }
        String best = null;
        int bestVotes = -1;
        for (Map.Entry<String, Integer> vote : votes.entrySet()) {
            if (vote.getValue() > bestVotes) {
                best = vote.getKey();
                bestVotes = vote.getValue();
            }
        }
        return best;
    }

    boolean allMembersJoined() {
        if (!pendingMembers.isEmpty()) {
            return false;
        }
        for (ClassicGroupMember member : members.values()) {
            if (!member.isAwaitingJoin()) {
                return false;
            }
        }
        return true;
    }

    int maxRebalanceTimeoutMs() {
        int max = 0;
        for (ClassicGroupMember member : members.values()) {
            max = Math.max(max, member.rebalanceTimeoutMs);
        }
        return max;
    }

    List<ClassicGroupMember> membersNotRejoined() {
        List<ClassicGroupMember> missing = new ArrayList<>();
        for (ClassicGroupMember member : members.values()) {
            if (!member.isAwaitingJoin()) {
                missing.add(member);
            }
        }
        return missing;
    }

    void cancelJoinTimer() {
        if (joinTimer != null) {
            joinTimer.cancel(false);
            joinTimer = null;
        }
    }
}
