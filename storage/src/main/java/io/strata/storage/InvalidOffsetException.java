package io.strata.storage;

/**
 * An offset was appended to an index out of order. Indexes only accept increasing offsets, so
 * this is always a bug in the caller; the message names the offending and the last offsets.
 */
public class InvalidOffsetException extends RuntimeException {
    public InvalidOffsetException(String message) {
        super(message);
    }
}
