package io.strata.raft;

import java.io.IOException;

/**
 * Durable storage of the {@link ElectionState}. {@link #write} returns only once the state is
 * durable: the quorum acts on it right after (grants a vote, starts an election), and acting
 * on a state that a crash can take back breaks the one-vote-per-epoch rule.
 */
public interface QuorumStateStore {
    /** The stored state, or null if nothing was ever written. */
    ElectionState read() throws IOException;

    void write(ElectionState state) throws IOException;
}
