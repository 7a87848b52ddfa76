package io.strata.protocol.records.compression;

/**
 * Arrays one thread reuses across decompressions whose output it reads once and drops (see
 * {@link CompressionCodec#decompress(java.nio.ByteBuffer, int, DecompressionBuffers)}). It keeps
 * the largest output array it was handed back, up to {@link #MAX_RETAINED_BYTES}, so a handler
 * thread that validates megabyte batches allocates once instead of once per batch (on a 1 GiB
 * G1 heap every array of 512 KiB or more is a humongous allocation). Not thread-safe: one per
 * thread, e.g. in a {@link ThreadLocal}.
 */
public final class DecompressionBuffers {
    /** Arrays larger than this are not kept, so an outsized batch does not pin its memory. */
    public static final int MAX_RETAINED_BYTES = 8 * 1024 * 1024;

    private byte[] output;
    private byte[] block;

    /** The kept output array, or null; the caller owns it until {@link #keepOutput}. */
    byte[] takeOutput() {
        byte[] taken = output;
        output = null;
        return taken;
    }

    /** Keeps {@code array} for the next decompression unless it is too large to hold on to. */
    void keepOutput(byte[] array) {
        if (array.length <= MAX_RETAINED_BYTES) {
            output = array;
        }
    }

    /** A scratch array of at least {@code bytes} for one compressed block. */
    byte[] block(int bytes) {
        if (block == null || block.length < bytes) {
            block = new byte[bytes];
        }
        return block;
    }
}
