package io.strata.raft;

import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.Records;

import java.util.List;
import java.util.Optional;

/**
 * The replicated log as the quorum sees it: record batches v2 whose partition leader epoch is
 * the epoch of the leader that appended them, offsets dense from 0.
 *
 * <p>Durability is explicit: appends may stay in memory until {@link #flush()}; a crash loses
 * everything at or above {@link #flushedOffset()}. The quorum counts only flushed entries
 * towards the high watermark, so a committed entry survives any minority of crashes.
 *
 * <p>Snapshots (KIP-630): a frozen snapshot {@code (offset, epoch)} holds the state of every
 * entry below {@code offset}, the last of which has epoch {@code epoch}. The log may then drop
 * its prefix: {@link #logStartOffset()} moves to the latest snapshot's end offset, but only once
 * that snapshot is at or below the high watermark ({@link #deleteBeforeSnapshot}). Invariant:
 * the log start offset is 0 or the end offset of a frozen snapshot. With an empty log past
 * the snapshot, {@link #endOffset()} is the snapshot id.
 *
 * <p>Not thread-safe: driven by the quorum's thread.
 */
public interface RaftLog {
    /**
     * The log end offset and the epoch of the last entry ((0, 0) when empty; the latest
     * snapshot's id when the log holds no entry past it).
     */
    OffsetAndEpoch endOffset();

    /** Every entry below this offset is durable. */
    long flushedOffset();

    /**
     * For the largest epoch {@code e <= epoch} that has entries here: {@code (end, e)} where
     * {@code end} is the offset after the last entry of {@code e} (the log end offset if
     * {@code e} is the last epoch); the latest snapshot's id if {@code epoch} is at least the
     * snapshot's epoch and no entry of the log qualifies; {@code (0, 0)} if no such epoch exists
     * (with a log start above 0 the answer for an epoch older than the snapshot's is then
     * unknown: callers compare with {@link #logStartOffset()} first). Used to find where
     * a follower's log diverges from the leader's (KIP-279).
     */
    OffsetAndEpoch endOffsetForEpoch(int epoch);

    /**
     * Appends one batch of data records at {@code epoch}, which must be at least the epoch of
     * the last entry.
     *
     * @return the offset of the last record appended
     */
    long appendAsLeader(List<byte[]> values, int epoch, long timestampMs);

    /** Appends one control batch of one record (e.g. LEADER_CHANGE) at {@code epoch}; returns its offset. */
    long appendControlAsLeader(ControlRecordType type, byte[] value, int epoch, long timestampMs);

    /**
     * Appends batches a leader sent, which must start at the log end offset and carry
     * non-decreasing epochs no lower than the last entry's.
     *
     * @throws IllegalArgumentException if they do not
     */
    void appendAsFollower(Records records);

    /** Removes every entry at or above {@code offset} (a no-op at or past the end). */
    void truncateTo(long offset);

    /** Makes every appended entry durable. */
    void flush();

    /** Whole batches from {@code startOffset} (a batch boundary) up to about {@code maxBytes} (at least one batch). */
    Records read(long startOffset, int maxBytes);

    /** The first offset the log holds (0, or the end offset of the snapshot it starts at). */
    long logStartOffset();

    /** The id of the latest frozen snapshot, if any. */
    Optional<OffsetAndEpoch> latestSnapshotId();

    /**
     * Starts a snapshot {@code snapshotId}; it becomes visible (and {@link #latestSnapshotId()}
     * if newest) when the writer is frozen.
     *
     * @throws IllegalArgumentException if a frozen snapshot with that id exists
     */
    SnapshotWriter createSnapshot(OffsetAndEpoch snapshotId);

    /** The frozen snapshot {@code snapshotId}, if it exists. */
    Optional<SnapshotReader> readSnapshot(OffsetAndEpoch snapshotId);

    /**
     * Drops the entries below the latest snapshot if that snapshot's end offset is at or below
     * {@code highWatermark} and above the log start; older snapshots go too. Returns whether
     * the log start moved.
     */
    boolean deleteBeforeSnapshot(long highWatermark);

    /**
     * Empties the log and starts it at the frozen snapshot {@code snapshotId} (a follower that
     * fetched the leader's snapshot); older snapshots go.
     *
     * @throws IllegalArgumentException if no such frozen snapshot exists
     */
    void truncateFullyAndStartAt(OffsetAndEpoch snapshotId);
}
