package io.strata.storage;

/**
 * What a transaction marker's producer epoch is checked against when it is appended
 * ({@link ProducerStateManager#recordMarker}). The check runs under the log's lock, together with
 * the append, so no produce of the same producer can slip between them.
 */
public enum MarkerCheck {
    /** Replication and recovery: the leader already decided; nothing is checked. */
    NONE,
    /**
     * A marker of a transactions v1 coordinator (or of this node's own): refused with
     * INVALID_PRODUCER_EPOCH if its epoch is below the producer's, TRANSACTION_COORDINATOR_FENCED
     * if its coordinator epoch is.
     */
    NOT_OLDER,
    /**
     * WriteTxnMarkers v2 for a transactions v2 transaction (KIP-1228): the coordinator bumps the
     * epoch at every end, so a marker ending a transaction that is open here must carry an epoch
     * above the one the transaction's data was written with; one that does not is stale or
     * duplicated and refused with INVALID_PRODUCER_EPOCH. Otherwise as {@link #NOT_OLDER}.
     */
    NEWER_WHILE_OPEN
}
