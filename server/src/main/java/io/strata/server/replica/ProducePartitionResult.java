package io.strata.server.replica;

import io.strata.protocol.ErrorCode;

/** The answer for one partition of a produce request. */
public record ProducePartitionResult(ErrorCode error, long baseOffset, long logAppendTimeMs, long logStartOffset, String errorMessage,
                                     long lastOffset) {
    public static ProducePartitionResult error(ErrorCode error, String message) {
        return new ProducePartitionResult(error, -1L, -1L, -1L, message, -1L);
    }
}
