package io.strata.protocol.records.compression;

import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Compression type 3: the LZ4 frame format (lz4 spec v1.5.1) as Kafka writes it for magic-2
 * batches ({@code Lz4BlockOutputStream}). All integers are little-endian.
 *
 * <pre>
 *  0        4     5     6                 (6|14)
 *  +--------+-----+-----+----------------+----+--------------------------------+--------+-----------------+
 *  | magic  | FLG | BD  | contentSize u64| HC | block*                         | 0 (i32)| contentChecksum |
 *  | 184D2204     |     | if FLG.3       |    |                                | endmark| u32, if FLG.2   |
 *  +--------+-----+-----+----------------+----+--------------------------------+--------+-----------------+
 *
 *  FLG  bits 7-6 version (must be 01), bit 5 block independence (must be 1), bit 4 block
 *       checksum, bit 3 content size, bit 2 content checksum, bits 1-0 reserved (0)
 *  BD   bits 6-4 block maximum size: 4=64KiB 5=256KiB 6=1MiB 7=4MiB, other bits reserved (0)
 *  HC   second byte of xxHash32(seed 0) over FLG..end of descriptor: (hash &gt;&gt; 8) &amp; 0xFF
 *  block := size i32 (bit 31 set: stored uncompressed; low 31 bits: byte count)
 *           data[size]  [xxHash32 of data, u32, if FLG.4]
 * </pre>
 *
 * Kafka's writer: 64 KiB blocks, no checksums, no content size. Its reader requires block
 * independence, checks HC for magic-2 batches (older magics used a broken HC over the magic
 * too, which we never need), verifies block checksums, and neither verifies the content
 * checksum nor looks past the end mark. We accept exactly what it accepts, so frames from
 * other clients' LZ4 libraries (content size, checksums) are read too.
 *
 * <p>Stateless and thread-safe (the lz4-java compressors, decompressor and hash are).
 */
public final class Lz4FrameCodec implements CompressionCodec {
    /** Kafka's default LZ4 level; at this level Kafka uses the fast (non-HC) compressor. */
    public static final int DEFAULT_LEVEL = 9;
    public static final int MIN_LEVEL = 1;
    public static final int MAX_LEVEL = 17;

    static final int MAGIC = 0x184D2204;
    static final int FLG_VERSION_MASK = 0xC0;
    static final int FLG_VERSION_1 = 0x40;
    static final int FLG_BLOCK_INDEPENDENCE = 0x20;
    static final int FLG_BLOCK_CHECKSUM = 0x10;
    static final int FLG_CONTENT_SIZE = 0x08;
    static final int FLG_CONTENT_CHECKSUM = 0x04;
    static final int FLG_RESERVED_MASK = 0x03;
    static final int BD_BLOCK_SIZE_SHIFT = 4;
    static final int BD_BLOCK_SIZE_MASK = 0x70;
    static final int BD_RESERVED_MASK = 0x8F;
    static final int BLOCK_SIZE_ID_64KB = 4;
    static final int BLOCK_SIZE_ID_MAX = 7;
    static final int UNCOMPRESSED_BLOCK_FLAG = 0x80000000;

    private static final int MAGIC_BYTES = 4;
    private static final int DESCRIPTOR_MIN_BYTES = 3;
    private static final int CONTENT_SIZE_BYTES = 8;
    private static final int WRITE_BLOCK_BYTES = blockMaximumBytes(BLOCK_SIZE_ID_64KB);

    private static final XXHash32 XXHASH = XXHashFactory.fastestInstance().hash32();
    // The safe decompressor bounds-checks both input and output (the "fast" one does not).
    private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4Factory.fastestInstance().safeDecompressor();

    private final int level;

    public Lz4FrameCodec() {
        this(DEFAULT_LEVEL);
    }

    public Lz4FrameCodec(int level) {
        if (level < MIN_LEVEL || level > MAX_LEVEL) {
            throw new IllegalArgumentException("lz4 level must be " + MIN_LEVEL + ".." + MAX_LEVEL + ": level=" + level);
        }
        this.level = level;
    }

    @Override
    public ByteBuffer compress(ByteBuffer uncompressed) {
        LZ4Compressor compressor = level == DEFAULT_LEVEL
            ? LZ4Factory.fastestInstance().fastCompressor()
            : LZ4Factory.fastestInstance().highCompressor(level);
        ByteBuffer source = uncompressed.slice();
        int blocks = (source.remaining() + WRITE_BLOCK_BYTES - 1) / WRITE_BLOCK_BYTES;
        long capacity = MAGIC_BYTES + DESCRIPTOR_MIN_BYTES + Integer.BYTES
            + (long) blocks * (Integer.BYTES + compressor.maxCompressedLength(WRITE_BLOCK_BYTES));
        ByteBuffer output = ByteBuffer.allocate(Math.toIntExact(capacity)).order(ByteOrder.LITTLE_ENDIAN);
        writeHeader(output);
        for (int start = 0; start < source.limit(); start += WRITE_BLOCK_BYTES) {
            writeBlock(compressor, source, start, Math.min(WRITE_BLOCK_BYTES, source.limit() - start), output);
        }
        output.putInt(0); // end mark
        return output.flip();
    }

    private static void writeHeader(ByteBuffer output) {
        output.putInt(MAGIC);
        int descriptorStart = output.position();
        output.put((byte) (FLG_VERSION_1 | FLG_BLOCK_INDEPENDENCE));
        output.put((byte) (BLOCK_SIZE_ID_64KB << BD_BLOCK_SIZE_SHIFT));
        output.put(headerChecksum(output, descriptorStart, output.position() - descriptorStart));
    }

    private static void writeBlock(LZ4Compressor compressor, ByteBuffer source, int start, int length, ByteBuffer output) {
        int sizePosition = output.position();
        int dataPosition = sizePosition + Integer.BYTES;
        int compressedBytes = compressor.compress(source, start, length, output, dataPosition, output.capacity() - dataPosition);
        if (compressedBytes >= length) {
            // Incompressible: store the block as it is, flagged, as Kafka's writer does.
            output.put(dataPosition, source, start, length);
            output.putInt(sizePosition, length | UNCOMPRESSED_BLOCK_FLAG);
            output.position(dataPosition + length);
        } else {
            output.putInt(sizePosition, compressedBytes);
            output.position(dataPosition + compressedBytes);
        }
    }

    @Override
    public ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes) {
        return decompress(compressed, maxDecompressedBytes, (DecompressionBuffers) null);
    }

    @Override
    public ByteBuffer decompress(ByteBuffer compressed, int maxDecompressedBytes, DecompressionBuffers reuse) {
        ByteBuffer input = compressed.slice().order(ByteOrder.LITTLE_ENDIAN);
        BoundedOutput output = new BoundedOutput(maxDecompressedBytes, input.remaining(), reuse == null ? null : reuse.takeOutput());
        try {
            return decompressFrame(input, output, reuse);
        } finally {
            if (reuse != null) {
                reuse.keepOutput(output.array());
            }
        }
    }

    private ByteBuffer decompressFrame(ByteBuffer input, BoundedOutput output, DecompressionBuffers reuse) {
        FrameDescriptor descriptor = readDescriptor(input);
        byte[] blockBuffer = null;
        while (true) {
            requireBytes(input, Integer.BYTES, "block size");
            int sizeField = input.getInt();
            int blockBytes = sizeField & ~UNCOMPRESSED_BLOCK_FLAG;
            if (blockBytes == 0) {
                skipContentChecksum(input, descriptor);
                return output.toByteBuffer();
            }
            if (blockBytes > descriptor.blockMaximumBytes) {
                throw new CompressionException("lz4 block is larger than the frame allows: blockBytes=" + blockBytes
                    + ", blockMaximumBytes=" + descriptor.blockMaximumBytes);
            }
            requireBytes(input, blockBytes, "block data");
            verifyBlockChecksum(input, blockBytes, descriptor);
            if ((sizeField & UNCOMPRESSED_BLOCK_FLAG) != 0) {
                output.write(input.slice(input.position(), blockBytes));
            } else {
                if (blockBuffer == null) {
                    blockBuffer = reuse != null ? reuse.block(descriptor.blockMaximumBytes) : new byte[descriptor.blockMaximumBytes];
                }
                decompressBlock(input, blockBytes, blockBuffer, descriptor.blockMaximumBytes, output);
            }
            input.position(input.position() + blockBytes + (descriptor.blockChecksum ? Integer.BYTES : 0));
        }
    }

    /** Decompresses one block into {@code blockBuffer} (at most {@code blockMaximumBytes}, the frame's limit) and appends it. */
    private static void decompressBlock(ByteBuffer input, int blockBytes, byte[] blockBuffer, int blockMaximumBytes, BoundedOutput output) {
        int decompressedBytes;
        try {
            decompressedBytes = DECOMPRESSOR.decompress(input, input.position(), blockBytes,
                ByteBuffer.wrap(blockBuffer), 0, blockMaximumBytes);
        } catch (LZ4Exception e) {
            throw new CompressionException("malformed lz4 block: " + e.getMessage(), e);
        }
        output.write(blockBuffer, 0, decompressedBytes);
    }

    /** Reads magic and frame descriptor, leaving {@code input} at the first block. */
    private static FrameDescriptor readDescriptor(ByteBuffer input) {
        requireBytes(input, MAGIC_BYTES + DESCRIPTOR_MIN_BYTES, "frame header");
        int magic = input.getInt();
        if (magic != MAGIC) {
            throw new CompressionException("not an lz4 frame: magic=0x" + Integer.toHexString(magic));
        }
        int descriptorStart = input.position();
        int flg = input.get() & 0xff;
        int bd = input.get() & 0xff;
        FrameDescriptor descriptor = FrameDescriptor.parse(flg, bd);
        if (descriptor.contentSize) {
            requireBytes(input, CONTENT_SIZE_BYTES + 1, "content size");
            input.position(input.position() + CONTENT_SIZE_BYTES);
        }
        byte expectedChecksum = headerChecksum(input, descriptorStart, input.position() - descriptorStart);
        byte storedChecksum = input.get();
        if (storedChecksum != expectedChecksum) {
            throw new CompressionException("lz4 frame descriptor checksum mismatch: stored=" + (storedChecksum & 0xff)
                + ", computed=" + (expectedChecksum & 0xff));
        }
        return descriptor;
    }

    private static void verifyBlockChecksum(ByteBuffer input, int blockBytes, FrameDescriptor descriptor) {
        if (!descriptor.blockChecksum) {
            return;
        }
        requireBytes(input, blockBytes + Integer.BYTES, "block checksum");
        int stored = input.getInt(input.position() + blockBytes);
        int computed = XXHASH.hash(input, input.position(), blockBytes, 0);
        if (stored != computed) {
            throw new CompressionException("lz4 block checksum mismatch: stored=" + Integer.toHexString(stored)
                + ", computed=" + Integer.toHexString(computed));
        }
    }

    /** Kafka reads but does not verify the content checksum; we do the same. */
    private static void skipContentChecksum(ByteBuffer input, FrameDescriptor descriptor) {
        if (descriptor.contentChecksum) {
            requireBytes(input, Integer.BYTES, "content checksum");
            input.position(input.position() + Integer.BYTES);
        }
    }

    private static byte headerChecksum(ByteBuffer buffer, int offset, int length) {
        return (byte) ((XXHASH.hash(buffer, offset, length, 0) >> 8) & 0xff);
    }

    private static void requireBytes(ByteBuffer input, int bytes, String what) {
        if (input.remaining() < bytes) {
            throw new CompressionException("truncated lz4 frame: missing " + what + ", neededBytes=" + bytes
                + ", remainingBytes=" + input.remaining());
        }
    }

    static int blockMaximumBytes(int blockSizeId) {
        return 1 << (2 * blockSizeId + 8);
    }

    /** The FLG and BD bytes, validated. */
    private record FrameDescriptor(boolean blockChecksum, boolean contentSize, boolean contentChecksum, int blockMaximumBytes) {
        static FrameDescriptor parse(int flg, int bd) {
            if ((flg & FLG_VERSION_MASK) != FLG_VERSION_1) {
                throw new CompressionException("unsupported lz4 frame version: flg=0x" + Integer.toHexString(flg));
            }
            if ((flg & FLG_RESERVED_MASK) != 0 || (bd & BD_RESERVED_MASK) != 0) {
                throw new CompressionException("lz4 frame descriptor has reserved bits set: flg=0x" + Integer.toHexString(flg)
                    + ", bd=0x" + Integer.toHexString(bd));
            }
            if ((flg & FLG_BLOCK_INDEPENDENCE) == 0) {
                // Kafka refuses linked blocks too; each block must decode on its own.
                throw new CompressionException("lz4 frames with dependent blocks are not supported: flg=0x" + Integer.toHexString(flg));
            }
            int blockSizeId = (bd & BD_BLOCK_SIZE_MASK) >>> BD_BLOCK_SIZE_SHIFT;
            if (blockSizeId < BLOCK_SIZE_ID_64KB || blockSizeId > BLOCK_SIZE_ID_MAX) {
                throw new CompressionException("invalid lz4 block size id: blockSizeId=" + blockSizeId);
            }
            return new FrameDescriptor((flg & FLG_BLOCK_CHECKSUM) != 0, (flg & FLG_CONTENT_SIZE) != 0,
                (flg & FLG_CONTENT_CHECKSUM) != 0, Lz4FrameCodec.blockMaximumBytes(blockSizeId));
        }
    }
}
