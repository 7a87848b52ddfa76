package io.strata.storage;

import io.strata.protocol.ErrorCode;

/**
 * A follower append ({@link UnifiedLog#appendAsFollower}) whose first offset is below the log
 * end offset: the leader sent data this log already has, or the fetcher lost track of its fetch
 * offset. Nothing was appended. Kafka's {@code UnexpectedAppendOffsetException}: the fetcher tells
 * it apart from other failures; when the log is empty at its start offset and the append spans
 * that offset (a fetch from a log start that DeleteRecords left inside a batch) the caller may
 * {@link UnifiedLog#truncateFullyAndStartAt} the first offset and append again, as Kafka's
 * Partition does. It never reaches a client; the error code is only the closest Kafka one.
 */
public final class UnexpectedAppendOffsetException extends ErrorCodeException {
    private static final long serialVersionUID = 1L;
    private final long firstOffset;
    private final long lastOffset;

    public UnexpectedAppendOffsetException(String message, long firstOffset, long lastOffset) {
        super(ErrorCode.OFFSET_OUT_OF_RANGE, message);
        this.firstOffset = firstOffset;
        this.lastOffset = lastOffset;
    }

    /** The base offset of the append's first batch. */
    public long firstOffset() {
        return firstOffset;
    }

    /** The last offset of the append's last batch. */
    public long lastOffset() {
        return lastOffset;
    }
}
