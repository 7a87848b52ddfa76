package io.strata.metadata;

import io.strata.protocol.ErrorCode;

import java.util.Objects;

/**
 * A controller operation refused for bad input (not a bug, not a lost leadership): the client
 * gets {@link #error()} with {@link #getMessage()} verbatim, as Kafka's controller answers an
 * {@code ApiError}. Nothing was written.
 */
public final class ControllerRefusedException extends RuntimeException {
    private final ErrorCode error;

    /**
     * @param error   Kafka's error code for the refusal; never NONE
     * @param message Kafka's message, sent to the client as is
     */
    public ControllerRefusedException(ErrorCode error, String message) {
        super(message, null, false, false);
        this.error = Objects.requireNonNull(error, "error");
        if (error == ErrorCode.NONE) {
            throw new IllegalArgumentException("a refusal needs an error code: error=NONE, message=" + message);
        }
    }

    public ErrorCode error() {
        return error;
    }
}
