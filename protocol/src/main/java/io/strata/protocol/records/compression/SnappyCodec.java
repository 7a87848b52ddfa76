package io.strata.protocol.records.compression;

import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyError;
import org.xerial.snappy.SnappyOutputStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * Compression type 2: Snappy in snappy-java's ("xerial") framing, which is what Kafka writes
 * with {@link SnappyOutputStream} and reads with {@code SnappyInputStream}.
 *
 * <pre>
 *  stream  := header chunk* (header chunk*)*      concatenated streams repeat the header
 *  header  := 0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00  (8-byte magic)
 *             version i32 BE (>= 1)  compatibleVersion i32 BE
 *  chunk   := length i32 BE (>= 0)  rawSnappyBlock[length]
 * </pre>
 *
 * Each raw block starts with its uncompressed length as a varint; the block is decoded
 * straight into the output after that length is checked against the limit. Input that does
 * not start with the 8-byte magic is read as one raw Snappy block, because
 * {@code SnappyInputStream} falls back to that and some clients (librdkafka) write raw
 * blocks. Fewer than 4 bytes after the last chunk are ignored, as Kafka's reader ignores them.
 *
 * <p>We parse the framing ourselves instead of using {@code SnappyInputStream}: it allocates
 * whatever a chunk length says (up to 512 MiB) and throws {@link Error}s for negative ones.
 *
 * <p>Stateless and thread-safe.
 */
public final class SnappyCodec implements CompressionCodec {
    public static final SnappyCodec INSTANCE = new SnappyCodec();

    static final byte[] MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    static final int HEADER_BYTES = MAGIC.length + Integer.BYTES + Integer.BYTES;
    private static final int CHUNK_LENGTH_BYTES = Integer.BYTES;
    /** snappy-java refuses streams whose version is below this. */
    private static final int MINIMUM_COMPATIBLE_VERSION = 1;

    private SnappyCodec() {
    }

    @Override
    public ByteBuffer compress(ByteBuffer uncompressed) {
        ByteArrayOutputStream output = new ByteArrayOutputStream(Math.max(64, uncompressed.remaining() / 2));
        try (SnappyOutputStream snappy = new SnappyOutputStream(output)) {
            Buffers.writeTo(uncompressed, snappy);
        } catch (IOException e) {
            throw new UncheckedIOException("in-memory snappy compression failed", e);
        }
        return ByteBuffer.wrap(output.toByteArray());
    }

    @Override
    public ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes) {
        ByteBuffer input = compressed.slice();
        BoundedOutput output = new BoundedOutput(maxDecompressedBytes, input.remaining());
        if (startsWithMagic(input, 0) && input.remaining() >= HEADER_BYTES) {
            readFramed(input, output);
        } else {
            decodeRawBlock(input, 0, input.remaining(), output);
        }
        return output.toByteBuffer();
    }

    private static void readFramed(ByteBuffer input, BoundedOutput output) {
        int position = readHeader(input, 0);
        while (input.limit() - position >= CHUNK_LENGTH_BYTES) {
            if (startsWithMagic(input, position)) {
                position = readHeader(input, position);
                continue;
            }
            int chunkBytes = input.getInt(position);
            position += CHUNK_LENGTH_BYTES;
            if (chunkBytes < 0 || chunkBytes > input.limit() - position) {
                throw new CompressionException("snappy chunk does not fit the input: chunkBytes=" + chunkBytes
                    + ", remainingBytes=" + (input.limit() - position));
            }
            decodeRawBlock(input, position, chunkBytes, output);
            position += chunkBytes;
        }
    }

    /** Checks the 16-byte header at {@code position} and returns the position after it. */
    private static int readHeader(ByteBuffer input, int position) {
        if (input.limit() - position < HEADER_BYTES) {
            throw new CompressionException("truncated snappy stream header: remainingBytes=" + (input.limit() - position));
        }
        int version = input.getInt(position + MAGIC.length);
        if (version < MINIMUM_COMPATIBLE_VERSION) {
            throw new CompressionException("unsupported snappy stream version: version=" + version);
        }
        return position + HEADER_BYTES;
    }

    private static boolean startsWithMagic(ByteBuffer input, int position) {
        if (input.limit() - position < MAGIC.length) {
            return false;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (input.get(position + i) != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Decodes one raw Snappy block of {@code length} bytes at {@code position}. The native
     * decoder writes exactly the length the block declares and does not check the output
     * array's size, so that length is checked against the limit and reserved first.
     */
    private static void decodeRawBlock(ByteBuffer input, int position, int length, BoundedOutput output) {
        byte[] block;
        int blockOffset;
        if (input.hasArray()) {
            block = input.array();
            blockOffset = input.arrayOffset() + position;
        } else {
            block = new byte[length];
            blockOffset = 0;
            input.get(position, block);
        }
        try {
            int declaredBytes = Snappy.uncompressedLength(block, blockOffset, length);
            if (declaredBytes < 0) {
                throw new CompressionException("snappy block declares a negative length: declaredBytes=" + declaredBytes);
            }
            byte[] target = output.reserve(declaredBytes);
            int writtenBytes = Snappy.uncompress(block, blockOffset, length, target, output.size());
            if (writtenBytes != declaredBytes) {
                throw new CompressionException("snappy block length mismatch: declaredBytes=" + declaredBytes
                    + ", writtenBytes=" + writtenBytes);
            }
            output.commit(writtenBytes);
        } catch (IOException | SnappyError e) {
            // snappy-java reports a corrupt block as IOException (and some failures as SnappyError).
            throw new CompressionException("malformed snappy data: " + e.getMessage(), e);
        }
    }
}
