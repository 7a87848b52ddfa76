package io.strata.protocol.records.compression;

import java.nio.ByteBuffer;

/**
 * One compression algorithm in the exact stream format Kafka puts inside a magic-2 record
 * batch (the bytes after the 61-byte batch header).
 *
 * <p>Decompression is always bounded: the caller passes the most bytes it is willing to hold,
 * and the codec stops with {@link DecompressionLimitException} as soon as the output would
 * pass it, so a few kilobytes that inflate to gigabytes (a decompression bomb) cost at most
 * {@code maxDecompressedBytes} of heap. Malformed input fails with {@link CompressionException}.
 * Both extend {@link io.strata.protocol.ProtocolException}; nothing else escapes for bad bytes.
 *
 * <p>Neither method moves the position of its argument. Implementations are stateless and
 * thread-safe.
 */
public interface CompressionCodec {
    /** Compresses the remaining bytes of {@code uncompressed} into a new buffer positioned at 0. */
    ByteBuffer compress(ByteBuffer uncompressed);

    /**
     * Decompresses the remaining bytes of {@code compressed} into a new heap buffer positioned
     * at 0 whose remaining bytes are the output.
     *
     * @throws DecompressionLimitException if the output would exceed {@code maxDecompressedBytes}
     * @throws CompressionException if {@code compressed} is not a valid stream of this codec
     */
    ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes);

    /**
     * As {@link #decompress(ByteBuffer, int)}, but may decompress into {@code reuse}'s arrays
     * instead of new ones: the result is then only valid until {@code reuse} is used again. For
     * reading a batch once and letting go of it (produce validation), where a fresh output array of
     * a megabyte per batch is what the decompression costs most. Codecs that gain nothing keep the
     * default, which allocates.
     */
    default ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes, DecompressionBuffers reuse) {
        return decompress(compressed, maxDecompressedBytes);
    }
}
