package io.strata.storage;

import io.strata.protocol.ErrorCode;

/**
 * A follower append ({@link UnifiedLog#appendAsFollower}) whose batches' offsets do not strictly
 * increase (a batch whose last offset is below its base offset, or one starting at or below the
 * previous batch's last offset). Nothing was appended. Kafka's {@code OffsetsOutOfOrderException};
 * the leader never writes such data, so the bytes are treated as corrupt.
 */
public final class OffsetsOutOfOrderException extends ErrorCodeException {
    private static final long serialVersionUID = 1L;

    public OffsetsOutOfOrderException(String message) {
        super(ErrorCode.CORRUPT_MESSAGE, message);
    }
}
