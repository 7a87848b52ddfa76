package io.strata.raft;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A leader that gave up its epoch (shutting down, or check-quorum lost) and tells the other
 * voters with EndQuorumEpoch, naming its preferred successors, so they start an election
 * without waiting for their fetch timeouts. It never leads this epoch again, also not after a
 * restart (a replica that restarts as the persisted leader of an epoch resumes here): that
 * protects the rule that an (offset, epoch) pair names one entry, which a restarted leader
 * that lost unflushed entries could otherwise break.
 */
public final class ResignedState implements EpochState {
    private final int epoch;
    private final int localId;
    private final List<Integer> preferredSuccessors;
    private final Set<Integer> endEpochUnacked;
    final Timer electionTimer;
    final Timer endEpochRetryTimer;

    ResignedState(int epoch, int localId, Set<Integer> voters, List<Integer> preferredSuccessors, Timer electionTimer, long nowMs) {
        this.epoch = epoch;
        this.localId = localId;
        this.preferredSuccessors = List.copyOf(preferredSuccessors);
        this.endEpochUnacked = new HashSet<>(voters);
        this.endEpochUnacked.remove(localId);
        this.electionTimer = electionTimer;
        this.endEpochRetryTimer = new Timer(nowMs);
    }

    @Override
    public int epoch() {
        return epoch;
    }

    @Override
    public ElectionState election() {
        return new ElectionState(epoch, localId, localId);
    }

    public List<Integer> preferredSuccessors() {
        return preferredSuccessors;
    }

    Set<Integer> endEpochUnacked() {
        return endEpochUnacked;
    }

    @Override
    public String name() {
        return "Resigned";
    }

    @Override
    public String toString() {
        return "Resigned(epoch=" + epoch + ", preferredSuccessors=" + preferredSuccessors + ")";
    }
}
