package io.strata.protocol.records.compression;

import io.strata.protocol.ProtocolException;

/**
 * Decompression stopped because the output would have exceeded the caller's limit. Raised
 * before the bytes past the limit are produced, so memory stays bounded whatever the
 * compressed stream claims or contains.
 */
public class DecompressionLimitException extends ProtocolException {
    private static final long serialVersionUID = 1L;

    private final int maxDecompressedBytes;

    public DecompressionLimitException(int maxDecompressedBytes) {
        super("decompressed data exceeds the limit: maxDecompressedBytes=" + maxDecompressedBytes);
        this.maxDecompressedBytes = maxDecompressedBytes;
    }

    public int maxDecompressedBytes() {
        return maxDecompressedBytes;
    }
}
