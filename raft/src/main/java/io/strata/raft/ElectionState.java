package io.strata.raft;

/**
 * What a replica must remember across restarts about elections (the {@code quorum-state}
 * file): the highest epoch it has seen, the leader of that epoch if known, and whom it voted
 * for in that epoch. A voter that forgot its vote could vote twice in one epoch and let two
 * leaders be elected; one that forgot its epoch could grant a vote in an epoch it already left.
 *
 * @param epoch    the latest epoch; 0 before any election
 * @param leaderId the epoch's leader, or -1 if unknown
 * @param votedId  the candidate this replica voted for in {@code epoch} (itself when it was a
 *                 candidate), or -1
 */
public record ElectionState(int epoch, int leaderId, int votedId) {
    public static final int NONE = -1;

    public ElectionState {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch must not be negative: epoch=" + epoch);
        }
        if (leaderId < NONE || votedId < NONE) {
            throw new IllegalArgumentException("ids must be -1 or a node id: leaderId=" + leaderId + ", votedId=" + votedId);
        }
    }

    public static ElectionState initial() {
        return new ElectionState(0, NONE, NONE);
    }

    public boolean hasLeader() {
        return leaderId != NONE;
    }

    public boolean hasVoted() {
        return votedId != NONE;
    }
}
