package io.strata.raft;

import java.util.List;

/**
 * What a state machine over the quorum's log is told, on the quorum's thread, by
 * {@link RaftNode}: every committed batch exactly once and in offset order, the snapshots that
 * replace its state, and leader changes. Implementations hand the work to their own thread
 * and return at once: the quorum does not poll while a callback runs.
 *
 * <p>At start the latest snapshot (if any) comes first, then the batches from its end; a
 * snapshot loaded from the leader later (FetchSnapshot) comes the same way, and the batches
 * after it continue from its end. Control batches (LEADER_CHANGE and others) come too, marked,
 * with no values: a committed control batch of epoch {@code e} tells a new leader of epoch
 * {@code e} that everything before its epoch is committed and delivered.
 */
public interface CommitListener {
    /** A committed batch. */
    void handleCommit(CommittedBatch batch);

    /**
     * The state is the content of this snapshot: forget everything delivered before and load
     * {@code values} (the snapshot's data records, in order). Entries below
     * {@code snapshotId.offset()} will not be delivered again.
     */
    void handleSnapshot(OffsetAndEpoch snapshotId, List<byte[]> values, long lastContainedLogTimestampMs);

    /**
     * The replica learned of a new epoch or leader ({@code leaderId} -1: unknown). {@code leaderId}
     * is this replica's own id only while it is the leader (not when it resumed Resigned).
     */
    default void handleLeaderChange(int epoch, int leaderId) {
    }

    /** One committed batch of the log: its offsets, the epoch of the leader that appended it, its size on disk, its records' values. */
    record CommittedBatch(long baseOffset, long lastOffset, int epoch, long appendTimestampMs, boolean control, int sizeInBytes, List<byte[]> values) {
    }
}
