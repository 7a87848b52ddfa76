package io.strata.storage;

/**
 * Answer to an OffsetForLeaderEpoch question: the largest known epoch not above the requested
 * one, and the offset at which it ended. {@link #UNDEFINED} means "no answer".
 *
 * @param epoch     a leader epoch, or {@link LeaderEpochFileCache#UNDEFINED_EPOCH}
 * @param endOffset the exclusive end offset of that epoch, or {@link LeaderEpochFileCache#UNDEFINED_OFFSET}
 */
public record EpochOffset(int epoch, long endOffset) {
    public static final EpochOffset UNDEFINED =
        new EpochOffset(LeaderEpochFileCache.UNDEFINED_EPOCH, LeaderEpochFileCache.UNDEFINED_OFFSET);
}
