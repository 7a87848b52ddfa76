package io.strata.raft;

/**
 * The role of a replica in one epoch; each role is its own class, and {@link QuorumState} is
 * the only place that moves between them.
 */
public sealed interface EpochState permits UnattachedState, ProspectiveState, CandidateState, LeaderState, FollowerState, ResignedState {
    int epoch();

    /** What this role persists in the quorum-state file. */
    ElectionState election();

    /** The leader of the epoch if this replica knows it, else -1. */
    default int leaderId() {
        return election().leaderId();
    }

    String name();
}
