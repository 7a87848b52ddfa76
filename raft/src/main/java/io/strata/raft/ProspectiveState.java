package io.strata.raft;

import java.util.Set;

/**
 * A voter asking whether it could win an election (pre-vote, KIP-996) before it starts one:
 * the requests carry {@code epoch + 1} but nobody, the prospective voter included, changes its
 * epoch or its vote. Only a won pre-vote leads to {@link CandidateState}; a voter cut off from
 * the others therefore does not raise the epoch again and again and disrupt the quorum when
 * it comes back.
 *
 * <p>It keeps the leader it was following and its vote of the current epoch, so that a lost
 * pre-vote can go back to following, and the vote is never cast twice.
 */
public final class ProspectiveState implements EpochState {
    private final int epoch;
    private final int leaderId;
    private final int votedId;
    final VoteTally tally;
    final Timer electionTimer;

    ProspectiveState(int epoch, int leaderId, int votedId, Set<Integer> voters, int localId, Timer electionTimer) {
        this.epoch = epoch;
        this.leaderId = leaderId;
        this.votedId = votedId;
        this.tally = new VoteTally(voters, localId);
        this.electionTimer = electionTimer;
    }

    @Override
    public int epoch() {
        return epoch;
    }

    @Override
    public ElectionState election() {
        return new ElectionState(epoch, leaderId, votedId);
    }

    public int votedId() {
        return votedId;
    }

    @Override
    public String name() {
        return "Prospective";
    }

    @Override
    public String toString() {
        return "Prospective(epoch=" + epoch + ", leaderId=" + leaderId + ", votedId=" + votedId + ", " + tally + ")";
    }
}
