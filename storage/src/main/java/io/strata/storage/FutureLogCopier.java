package io.strata.storage;

import io.strata.protocol.records.MemoryRecords;

import java.io.IOException;

/**
 * Fills a future log from the current log of the same partition, one bounded chunk per
 * {@link #copyOnce} call (the local-leader side of a move between data directories). Batches
 * are appended as a follower appends them, so the future log rebuilds the same producer state
 * and leader-epoch cache as the current log; reads stop at the current log end, so records not
 * yet replicated are copied too (they will be the same after the swap).
 *
 * <p>Not thread-safe: one caller (the mover's thread) drives a copier. The logs themselves are
 * thread-safe; {@link LogManager#replaceCurrentWithFutureLog} must run under the partition's
 * lock once {@link #isCaughtUp} holds there.
 */
public final class FutureLogCopier {
    private final UnifiedLog current;
    private final UnifiedLog future;
    private final int maxBytesPerCopy;

    /** @param maxBytesPerCopy the most bytes one {@link #copyOnce} reads (at least one batch is copied) */
    public FutureLogCopier(UnifiedLog current, UnifiedLog future, int maxBytesPerCopy) {
        if (maxBytesPerCopy < 1) {
            throw new IllegalArgumentException("maxBytesPerCopy must be at least 1: maxBytesPerCopy=" + maxBytesPerCopy);
        }
        if (!current.topicPartition().equals(future.topicPartition())) {
            throw new IllegalArgumentException("logs of different partitions: current=" + current.topicPartition()
                + ", future=" + future.topicPartition());
        }
        this.current = current;
        this.future = future;
        this.maxBytesPerCopy = maxBytesPerCopy;
    }

    /**
     * Copies the batches from the future log end on (at most {@code maxBytesPerCopy}, at least
     * one batch). When the current log was truncated below the future end, or its start moved
     * above it, the future log is first aligned (truncated, or restarted at the new start).
     *
     * @return the bytes copied (0 when caught up)
     */
    public int copyOnce() throws IOException {
        return copyOnce(maxBytesPerCopy);
    }

    /**
     * {@link #copyOnce()} with a budget of its own for this copy (a throttle's share).
     *
     * @param maxBytes the most bytes read (at least one batch is copied)
     * @throws IllegalArgumentException if {@code maxBytes} is below 1
     */
    public int copyOnce(int maxBytes) throws IOException {
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be at least 1: maxBytes=" + maxBytes);
        }
        long futureEnd = future.logEndOffset();
        if (futureEnd > current.logEndOffset()) {
            future.truncateTo(current.logEndOffset());
            futureEnd = future.logEndOffset();
        }
        if (futureEnd < current.logStartOffset()) {
            future.truncateFullyAndStartAt(current.logStartOffset());
            futureEnd = future.logEndOffset();
        }
        if (futureEnd == current.logEndOffset()) {
            return 0;
        }
        FetchDataInfo data = current.read(futureEnd, maxBytes, FetchIsolation.LOG_END, true);
        MemoryRecords records = MemoryRecords.of(data.records());
        if (records.sizeInBytes() == 0) {
            return 0;
        }
        future.appendAsFollower(records);
        return records.sizeInBytes();
    }

    /** Whether the future log ends where the current log ends now. */
    public boolean isCaughtUp() {
        return future.logEndOffset() == current.logEndOffset();
    }

    /** The offset lag DescribeLogDirs reports for the future replica: current end minus future end, never negative. */
    public long offsetLag() {
        return Math.max(current.logEndOffset() - future.logEndOffset(), 0L);
    }
}
