package io.strata.coordinator.group;

/**
 * A committed offset as stored. {@code expireTimestampMs} is the explicit expiry of a commit
 * that carried a retention time (OffsetCommit v2-v4, written as offset commit value version 1),
 * or -1: then the broker's {@code offsets.retention.minutes} applies.
 */
public record OffsetAndMetadata(long offset, int leaderEpoch, String metadata, long commitTimestampMs, long expireTimestampMs) {
    /** No explicit expiry. */
    public static final long NO_EXPIRE_TIMESTAMP = -1L;

    public OffsetAndMetadata(long offset, int leaderEpoch, String metadata, long commitTimestampMs) {
        this(offset, leaderEpoch, metadata, commitTimestampMs, NO_EXPIRE_TIMESTAMP);
    }

    public boolean hasExpireTimestamp() {
        return expireTimestampMs != NO_EXPIRE_TIMESTAMP;
    }
}
