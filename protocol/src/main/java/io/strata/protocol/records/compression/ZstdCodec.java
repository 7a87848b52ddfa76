package io.strata.protocol.records.compression;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Compression type 4: one or more Zstandard frames (RFC 8878) via zstd-jni, the library Kafka
 * uses. Frames with and without a content-size field are read, as Kafka's streaming reader
 * does.
 *
 * <p>Memory: the output is bounded by the caller's limit. zstd's own window buffer lives off
 * the heap and is bounded by the library's default {@code windowLogMax} (2^27 bytes); frames
 * asking for a larger window are refused by zstd itself, which Kafka's reader does too.
 *
 * <p>Stateless and thread-safe.
 */
public final class ZstdCodec implements CompressionCodec {
    /** Kafka's default zstd level (KIP-390). */
    public static final int DEFAULT_LEVEL = 3;

    private final int level;

    public ZstdCodec() {
        // No range check here: asking zstd-jni for its range would load the native library
        // when the codec table is built, not when zstd is first used.
        this.level = DEFAULT_LEVEL;
    }

    public ZstdCodec(int level) {
        if (level < Zstd.minCompressionLevel() || level > Zstd.maxCompressionLevel()) {
            throw new IllegalArgumentException("zstd level out of range: level=" + level
                + ", min=" + Zstd.minCompressionLevel() + ", max=" + Zstd.maxCompressionLevel());
        }
        this.level = level;
    }

    @Override
    public ByteBuffer compress(ByteBuffer uncompressed) {
        return ByteBuffer.wrap(Zstd.compress(Buffers.toArray(uncompressed), level));
    }

    @Override
    public ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes) {
        BoundedOutput output = new BoundedOutput(maxDecompressedBytes, compressed.remaining());
        try (ZstdInputStreamNoFinalizer zstd = new ZstdInputStreamNoFinalizer(new ByteBufferInputStream(compressed))) {
            output.readFully(zstd);
        } catch (IOException | ZstdException e) {
            // zstd-jni reports corrupt frames as ZstdIOException and some as unchecked ZstdException.
            throw new CompressionException("malformed zstd data: " + e.getMessage(), e);
        }
        return output.toByteBuffer();
    }
}
