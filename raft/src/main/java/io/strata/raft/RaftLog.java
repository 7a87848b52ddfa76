package io.strata.raft;

import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.Records;

import java.util.List;

/**
 * The replicated log as the quorum sees it: record batches v2 whose partition leader epoch is
 * the epoch of the leader that appended them, offsets dense from 0.
 *
 * <p>Durability is explicit: appends may stay in memory until {@link #flush()}; a crash loses
 * everything at or above {@link #flushedOffset()}. The quorum counts only flushed entries
 * towards the high watermark, so a committed entry survives any minority of crashes.
 *
 * <p>Not thread-safe: driven by the quorum's thread.
 */
public interface RaftLog {
    /** The log end offset and the epoch of the last entry ((0, 0) when empty). */
    OffsetAndEpoch endOffset();

    /** Every entry below this offset is durable. */
    long flushedOffset();

    /**
     * For the largest epoch {@code e <= epoch} that has entries here: {@code (end, e)} where
     * {@code end} is the offset after the last entry of {@code e} (the log end offset if
     * {@code e} is the last epoch); {@code (0, 0)} if no such epoch exists. Used to find where
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
}
