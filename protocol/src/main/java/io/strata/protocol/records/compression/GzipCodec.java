package io.strata.protocol.records.compression;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Compression type 1: a gzip stream (RFC 1952) produced and read by {@code java.util.zip}, as
 * Kafka does. Concatenated gzip members are accepted, as {@link GZIPInputStream} accepts them.
 * Stateless and thread-safe.
 */
public final class GzipCodec implements CompressionCodec {
    /** Kafka's default gzip level is zlib's default (6). */
    public static final int DEFAULT_LEVEL = Deflater.DEFAULT_COMPRESSION;
    /** Stream buffer; matches Kafka's 8 KiB so that block boundaries are similar. */
    private static final int STREAM_BUFFER_BYTES = 8 * 1024;

    private final int level;

    public GzipCodec() {
        this(DEFAULT_LEVEL);
    }

    public GzipCodec(int level) {
        if (level != Deflater.DEFAULT_COMPRESSION && (level < Deflater.BEST_SPEED || level > Deflater.BEST_COMPRESSION)) {
            throw new IllegalArgumentException("gzip level must be -1 or 1..9: level=" + level);
        }
        this.level = level;
    }

    @Override
    public ByteBuffer compress(ByteBuffer uncompressed) {
        ByteArrayOutputStream output = new ByteArrayOutputStream(Math.max(64, uncompressed.remaining() / 2));
        try (GZIPOutputStream gzip = new LeveledGzipOutputStream(output, level)) {
            Buffers.writeTo(uncompressed, gzip);
        } catch (IOException e) {
            throw new UncheckedIOException("in-memory gzip compression failed", e);
        }
        return ByteBuffer.wrap(output.toByteArray());
    }

    @Override
    public ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes) {
        BoundedOutput output = new BoundedOutput(maxDecompressedBytes, compressed.remaining());
        try (GZIPInputStream gzip = new GZIPInputStream(new ByteBufferInputStream(compressed), STREAM_BUFFER_BYTES)) {
            output.readFully(gzip);
        } catch (IOException e) {
            // ZipException, EOFException: the bytes are not a complete gzip stream.
            throw new CompressionException("malformed gzip data: " + e.getMessage(), e);
        }
        return output.toByteBuffer();
    }

    /** {@link GZIPOutputStream} with a chosen level; the JDK exposes it only to subclasses. */
    private static final class LeveledGzipOutputStream extends GZIPOutputStream {
        LeveledGzipOutputStream(ByteArrayOutputStream output, int level) throws IOException {
            super(output, STREAM_BUFFER_BYTES);
            def.setLevel(level);
        }
    }
}
