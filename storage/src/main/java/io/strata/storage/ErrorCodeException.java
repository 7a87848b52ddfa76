package io.strata.storage;

import io.strata.protocol.ErrorCode;

/**
 * An operating error with the exact Kafka error code the client must receive: bad records,
 * out-of-range offsets, fenced or out-of-sequence producers. Thrown where the condition is
 * detected and turned into the response's error code at the API boundary.
 */
public class ErrorCodeException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient ErrorCode error;

    public ErrorCodeException(ErrorCode error, String message) {
        super(message, null, false, false);
        this.error = error;
    }

    public ErrorCode error() {
        return error;
    }

    @Override
    public String toString() {
        return error + ": " + getMessage();
    }
}
