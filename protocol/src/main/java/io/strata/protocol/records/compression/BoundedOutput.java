package io.strata.protocol.records.compression;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The sink of every decompressor: a byte array that grows by doubling but never past
 * {@code maxBytes}. Growth follows the bytes actually produced, never a size that a header
 * claims, so a decompression bomb stops at the limit with {@link DecompressionLimitException}.
 *
 * <p>Invariant: {@code size <= bytes.length <= maxBytes}. Not thread-safe; one per call.
 */
final class BoundedOutput {
    /** Smallest first allocation; below this, doubling costs more than it saves. */
    private static final int INITIAL_CAPACITY_BYTES_MIN = 256;
    /** Compression ratios of real batches are mostly below this; used to size the first array. */
    private static final int EXPECTED_COMPRESSION_RATIO = 4;

    private final int maxBytes;
    private byte[] bytes;
    private int size;

    BoundedOutput(int maxBytes, int compressedBytes) {
        this(maxBytes, compressedBytes, null);
    }

    /** An output that starts in {@code reuse} (any length, grown by copying if too small), or a new array if null. */
    BoundedOutput(int maxBytes, int compressedBytes, byte[] reuse) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must not be negative: maxBytes=" + maxBytes);
        }
        this.maxBytes = maxBytes;
        long expectedBytes = Math.max(INITIAL_CAPACITY_BYTES_MIN, (long) compressedBytes * EXPECTED_COMPRESSION_RATIO);
        this.bytes = reuse != null ? reuse : new byte[(int) Math.min(maxBytes, expectedBytes)];
    }

    /** The array the output is in now (for handing back to {@link DecompressionBuffers}). */
    byte[] array() {
        return bytes;
    }

    int size() {
        return size;
    }

    void write(byte[] source, int offset, int length) {
        reserve(length);
        System.arraycopy(source, offset, bytes, size, length);
        size += length;
    }

    /** Appends the remaining bytes of {@code source} without moving its position. */
    void write(ByteBuffer source) {
        int length = source.remaining();
        reserve(length);
        source.get(source.position(), bytes, size, length);
        size += length;
    }

    /**
     * Makes room for {@code length} more bytes and returns the array to write them into at
     * {@link #size()}; the writer then calls {@link #commit(int)}. Used by native decoders that
     * write straight into the array.
     */
    byte[] reserve(int length) {
        if (length < 0 || length > maxBytes - size) {
            throw new DecompressionLimitException(maxBytes);
        }
        ensureCapacity(size + length);
        return bytes;
    }

    void commit(int length) {
        assert length >= 0 && size + length <= bytes.length : "commit past reserve: size=" + size + ", length=" + length;
        size += length;
    }

    /** Reads {@code input} to its end, failing once more than {@code maxBytes} would be held. */
    void readFully(InputStream input) throws IOException {
        while (true) {
            if (size == maxBytes) {
                // Full: one more byte means the stream is larger than allowed.
                if (input.read() != -1) {
                    throw new DecompressionLimitException(maxBytes);
                }
                return;
            }
            ensureCapacity(size + 1);
            int read = input.read(bytes, size, bytes.length - size);
            if (read < 0) {
                return;
            }
            size += read;
        }
    }

    /** The output as a heap buffer positioned at 0; shares this object's array. */
    ByteBuffer toByteBuffer() {
        return ByteBuffer.wrap(bytes, 0, size).slice();
    }

    private void ensureCapacity(int requiredBytes) {
        assert requiredBytes <= maxBytes : "capacity past the limit: required=" + requiredBytes + ", max=" + maxBytes;
        if (requiredBytes <= bytes.length) {
            return;
        }
        long doubled = Math.max(INITIAL_CAPACITY_BYTES_MIN, 2L * bytes.length);
        int newCapacity = (int) Math.max(requiredBytes, Math.min(maxBytes, doubled));
        bytes = Arrays.copyOf(bytes, newCapacity);
    }
}
