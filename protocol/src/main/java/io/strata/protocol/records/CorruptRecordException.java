package io.strata.protocol.records;

import io.strata.protocol.ProtocolException;

/**
 * Record-batch bytes that do not follow the format: a size or count that does not fit, a CRC
 * mismatch, an unknown magic or compression id, a record whose fields overrun it. Always bad
 * input, never a bug; the broker maps it to Kafka's CORRUPT_MESSAGE or INVALID_RECORD.
 */
public class CorruptRecordException extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public CorruptRecordException(String message) {
        super(message);
    }

    public CorruptRecordException(String message, Throwable cause) {
        super(message, cause);
    }
}
