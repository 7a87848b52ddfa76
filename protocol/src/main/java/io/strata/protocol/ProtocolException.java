package io.strata.protocol;

/**
 * Bytes that do not form a valid protocol message: truncated, a length or count that does not
 * fit the bytes that remain, a null where the schema forbids one, a malformed varint. The
 * one exception the decoders throw for bad input; the broker turns it into Kafka's answer
 * (an error code or a closed connection) at one boundary.
 */
public class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }

    public ProtocolException(String message, Throwable cause) {
        super(message, cause);
    }
}
