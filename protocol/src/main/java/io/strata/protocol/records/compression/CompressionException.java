package io.strata.protocol.records.compression;

import io.strata.protocol.ProtocolException;

/**
 * Compressed bytes that the codec cannot decode: a bad magic number or header checksum, a
 * block that does not fit the input, or a failure reported by the native library. Bad input,
 * never a bug: the broker answers it like any other corrupt record batch.
 */
public class CompressionException extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public CompressionException(String message) {
        super(message);
    }

    public CompressionException(String message, Throwable cause) {
        super(message, cause);
    }
}
