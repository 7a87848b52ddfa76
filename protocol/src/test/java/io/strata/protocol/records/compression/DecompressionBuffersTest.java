package io.strata.protocol.records.compression;

import io.strata.protocol.records.CompressionType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Decompressing into reused arrays gives the same bytes as fresh ones and keeps every limit. */
class DecompressionBuffersTest {
    private static ByteBuffer data(Random random, int bytes) {
        byte[] data = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            data[i] = (byte) ('a' + random.nextInt(4)); // compressible, like record batches
        }
        return ByteBuffer.wrap(data);
    }

    @Test
    void reusedArraysGiveTheSameBytesAsFreshOnesForEveryCodec() {
        Random random = new Random(7);
        for (CompressionType type : new CompressionType[] {CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD}) {
            DecompressionBuffers reuse = new DecompressionBuffers();
            // Sizes up and down, so the kept array is sometimes too small and sometimes larger than needed.
            for (int size : new int[] {100, 300_000, 10, 1_500_000, 64 * 1024, 0, 2_000_000, 1}) {
                ByteBuffer original = data(random, size);
                ByteBuffer compressed = type.codec().compress(original.duplicate());
                ByteBuffer fresh = type.codec().decompress(compressed, 64 * 1024 * 1024);
                ByteBuffer reused = type.codec().decompress(compressed, 64 * 1024 * 1024, reuse);
                assertThat(reused).as("%s, %d bytes", type, size).isEqualTo(original.duplicate());
                assertThat(fresh).isEqualTo(original.duplicate());
            }
        }
    }

    @Test
    void theLimitHoldsWithAReusedArrayLargerThanIt() {
        DecompressionBuffers reuse = new DecompressionBuffers();
        ByteBuffer big = CompressionType.LZ4.codec().compress(data(new Random(1), 1_000_000));
        assertThat(CompressionType.LZ4.codec().decompress(big, 2_000_000, reuse).remaining()).isEqualTo(1_000_000);
        // The kept array now holds 1 MB or more; a 100 KB limit must still stop the same input.
        assertThatThrownBy(() -> CompressionType.LZ4.codec().decompress(big, 100_000, reuse)).isInstanceOf(DecompressionLimitException.class);
        assertThat(CompressionType.LZ4.codec().decompress(big, 2_000_000, reuse).remaining()).isEqualTo(1_000_000);
    }

    @Test
    void arraysLargerThanTheRetentionCapAreNotKept() {
        DecompressionBuffers reuse = new DecompressionBuffers();
        reuse.keepOutput(new byte[DecompressionBuffers.MAX_RETAINED_BYTES + 1]);
        assertThat(reuse.takeOutput()).isNull();
        byte[] small = new byte[1024];
        reuse.keepOutput(small);
        assertThat(reuse.takeOutput()).isSameAs(small);
        assertThat(reuse.takeOutput()).as("taken once").isNull();
    }
}
