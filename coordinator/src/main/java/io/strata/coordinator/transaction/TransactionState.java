package io.strata.coordinator.transaction;

import java.util.EnumSet;
import java.util.Set;

/**
 * States of a transactional id, with Kafka's ids (stored in {@code __transaction_state}) and
 * names (reported by DescribeTransactions / ListTransactions).
 *
 * <pre>
 *  Empty ──AddPartitions──▶ Ongoing ──EndTxn(commit)──▶ PrepareCommit ──markers written──▶ CompleteCommit
 *    ▲                        │  └────EndTxn(abort) / timeout / fence──▶ PrepareAbort ──markers──▶ CompleteAbort
 *    └── InitProducerId ◀─────┴──────────────────────────────────────── (from Empty/Complete*) ◀──┘
 * </pre>
 * Every transition is persisted to the log before it is acknowledged.
 */
public enum TransactionState {
    EMPTY((byte) 0, "Empty"),
    ONGOING((byte) 1, "Ongoing"),
    PREPARE_COMMIT((byte) 2, "PrepareCommit"),
    PREPARE_ABORT((byte) 3, "PrepareAbort"),
    COMPLETE_COMMIT((byte) 4, "CompleteCommit"),
    COMPLETE_ABORT((byte) 5, "CompleteAbort"),
    DEAD((byte) 6, "Dead"),
    PREPARE_EPOCH_FENCE((byte) 7, "PrepareEpochFence");

    final byte id;
    public final String displayName;

    TransactionState(byte id, String displayName) {
        this.id = id;
        this.displayName = displayName;
    }

    static TransactionState fromId(byte id) {
        for (TransactionState state : values()) {
            if (state.id == id) {
                return state;
            }
        }
        throw new IllegalArgumentException("unknown transaction state id " + id);
    }

    /** States in which a new transaction (or a new epoch) may begin. */
    static final Set<TransactionState> IDLE = EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD);
}
