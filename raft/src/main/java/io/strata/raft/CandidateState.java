package io.strata.raft;

import java.util.Set;

/**
 * A voter that won a pre-vote, raised the epoch and voted for itself, and now asks the other
 * voters for their votes. A majority makes it {@link LeaderState}; an expired election timer
 * sends it back to a pre-vote.
 */
public final class CandidateState implements EpochState {
    private final int epoch;
    private final int localId;
    final VoteTally tally;
    final Timer electionTimer;

    CandidateState(int epoch, int localId, Set<Integer> voters, Timer electionTimer) {
        this.epoch = epoch;
        this.localId = localId;
        this.tally = new VoteTally(voters, localId);
        this.electionTimer = electionTimer;
    }

    @Override
    public int epoch() {
        return epoch;
    }

    @Override
    public ElectionState election() {
        return new ElectionState(epoch, ElectionState.NONE, localId);
    }

    @Override
    public String name() {
        return "Candidate";
    }

    @Override
    public String toString() {
        return "Candidate(epoch=" + epoch + ", " + tally + ")";
    }
}
