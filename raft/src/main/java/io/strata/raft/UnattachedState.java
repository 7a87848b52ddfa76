package io.strata.raft;

/**
 * The replica knows an epoch but not its leader. It may have voted in this epoch (then it
 * votes for no one else in it). A voter whose election timer expires starts a pre-vote
 * ({@link ProspectiveState}); an observer just waits to learn the leader.
 */
public final class UnattachedState implements EpochState {
    private final int epoch;
    private final int votedId;
    final Timer electionTimer;

    UnattachedState(int epoch, int votedId, Timer electionTimer) {
        this.epoch = epoch;
        this.votedId = votedId;
        this.electionTimer = electionTimer;
    }

    @Override
    public int epoch() {
        return epoch;
    }

    public int votedId() {
        return votedId;
    }

    @Override
    public ElectionState election() {
        return new ElectionState(epoch, ElectionState.NONE, votedId);
    }

    @Override
    public String name() {
        return "Unattached";
    }

    @Override
    public String toString() {
        return "Unattached(epoch=" + epoch + ", votedId=" + votedId + ", electionDeadlineMs=" + electionTimer.deadlineMs() + ")";
    }
}
