package io.strata.protocol.records.compression;

import java.nio.ByteBuffer;

/**
 * Compression type 0: the records are stored as they are. Both directions return a slice that
 * shares the argument's bytes; the limit still applies so callers can treat all codecs alike.
 * Stateless and thread-safe.
 */
public final class NoCompressionCodec implements CompressionCodec {
    public static final NoCompressionCodec INSTANCE = new NoCompressionCodec();

    private NoCompressionCodec() {
    }

    @Override
    public ByteBuffer compress(ByteBuffer uncompressed) {
        return uncompressed.slice();
    }

    @Override
    public ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes) {
        if (compressed.remaining() > maxDecompressedBytes) {
            throw new DecompressionLimitException(maxDecompressedBytes);
        }
        return compressed.slice();
    }
}
