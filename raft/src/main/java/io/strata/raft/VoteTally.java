package io.strata.raft;

import java.util.HashSet;
import java.util.Set;

/**
 * The answers to one round of (pre-)vote requests: who granted, who refused, who has not
 * answered. The local voter grants its own vote. Not thread-safe.
 */
final class VoteTally {
    private final Set<Integer> voters;
    private final Set<Integer> granted = new HashSet<>();
    private final Set<Integer> rejected = new HashSet<>();

    VoteTally(Set<Integer> voters, int localId) {
        if (!voters.contains(localId)) {
            throw new IllegalArgumentException("only a voter can ask for votes: localId=" + localId + ", voters=" + voters);
        }
        this.voters = Set.copyOf(voters);
        granted.add(localId);
    }

    /** Records an answer; returns false for a non-voter or a voter that already answered. */
    boolean record(int voterId, boolean voteGranted) {
        if (!voters.contains(voterId) || granted.contains(voterId) || rejected.contains(voterId)) {
            return false;
        }
        (voteGranted ? granted : rejected).add(voterId);
        return true;
    }

    private int majority() {
        return voters.size() / 2 + 1;
    }

    boolean isWon() {
        return granted.size() >= majority();
    }

    /** No majority can be reached any more. */
    boolean isLost() {
        return rejected.size() > voters.size() - majority();
    }

    /**
     * The refusals used up every failure the quorum tolerates: with one more voter silent (a
     * crashed one never answers) no majority is left. With three voters, one refusal.
     */
    boolean isLostIfOneMoreFails() {
        return rejected.size() >= voters.size() - majority();
    }

    /** Voters that have not answered yet. */
    Set<Integer> unanswered() {
        Set<Integer> pending = new HashSet<>(voters);
        pending.removeAll(granted);
        pending.removeAll(rejected);
        return pending;
    }

    Set<Integer> granted() {
        return Set.copyOf(granted);
    }

    @Override
    public String toString() {
        return "granted=" + granted + ", rejected=" + rejected;
    }
}
