package io.strata.protocol.records.compression;

import io.strata.protocol.ProtocolException;
import net.jpountz.lz4.LZ4FrameOutputStream;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.xerial.snappy.Snappy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * Each codec against itself and against Kafka's own compression streams (both directions),
 * its limit, and the stream variants other clients write (raw Snappy, LZ4 frames with
 * checksums and content size).
 */
class CompressionCodecTest {
    private static final byte KAFKA_MAGIC_V2 = 2;
    private static final int SIZES_BYTES[] = {0, 1, 100, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 300_000};

    static Stream<Arguments> codecs() {
        return Stream.of(
            Arguments.of("gzip", new GzipCodec(), Compression.gzip().build()),
            Arguments.of("snappy", SnappyCodec.INSTANCE, Compression.snappy().build()),
            Arguments.of("lz4", new Lz4FrameCodec(), Compression.lz4().build()),
            Arguments.of("zstd", new ZstdCodec(), Compression.zstd().build()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codecs")
    void roundTripsEverySizeWithoutMovingInputPositions(String name, CompressionCodec codec, Compression unused) {
        for (int size : SIZES_BYTES) {
            for (byte[] data : List.of(compressible(size), random(size, size))) {
                ByteBuffer input = ByteBuffer.wrap(data);
                ByteBuffer compressed = codec.compress(input);
                assertThat(input.position()).isZero();
                int compressedPosition = compressed.position();
                ByteBuffer output = codec.decompress(compressed, data.length);
                assertThat(compressed.position()).isEqualTo(compressedPosition);
                assertThat(toArray(output)).as("%s size %d", name, size).isEqualTo(data);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codecs")
    void readsDirectReadOnlyAndOffsetBuffers(String name, CompressionCodec codec, Compression unused) {
        byte[] data = compressible(100_000);
        byte[] compressed = toArray(codec.compress(ByteBuffer.wrap(data)));
        ByteBuffer direct = ByteBuffer.allocateDirect(compressed.length).put(compressed).flip();
        ByteBuffer readOnly = ByteBuffer.wrap(compressed).asReadOnlyBuffer();
        byte[] padded = new byte[compressed.length + 10];
        System.arraycopy(compressed, 0, padded, 7, compressed.length);
        ByteBuffer offset = ByteBuffer.wrap(padded, 7, compressed.length).slice();
        for (ByteBuffer input : List.of(direct, readOnly, offset)) {
            assertThat(toArray(codec.decompress(input, data.length))).isEqualTo(data);
        }
        assertThat(toArray(codec.decompress(codec.compress(ByteBuffer.allocateDirect(data.length).put(data).flip()), data.length)))
            .isEqualTo(data);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codecs")
    void decompressesWhatKafkaCompresses(String name, CompressionCodec codec, Compression kafka) throws IOException {
        for (int size : SIZES_BYTES) {
            byte[] data = mixed(size);
            ByteBuffer compressed = kafkaCompress(kafka, data);
            assertThat(toArray(codec.decompress(compressed, data.length))).as("%s size %d", name, size).isEqualTo(data);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codecs")
    void kafkaDecompressesWhatWeCompress(String name, CompressionCodec codec, Compression kafka) throws IOException {
        for (int size : SIZES_BYTES) {
            byte[] data = mixed(size);
            ByteBuffer compressed = codec.compress(ByteBuffer.wrap(data));
            try (InputStream in = kafka.wrapForInput(compressed, KAFKA_MAGIC_V2, BufferSupplier.NO_CACHING)) {
                assertThat(in.readAllBytes()).as("%s size %d", name, size).isEqualTo(data);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codecs")
    void outputAtTheLimitIsAcceptedAndOneByteMoreIsRefused(String name, CompressionCodec codec, Compression unused) {
        byte[] data = compressible(200_000);
        ByteBuffer compressed = codec.compress(ByteBuffer.wrap(data));
        assertThat(codec.decompress(compressed, data.length).remaining()).isEqualTo(data.length);
        assertThatThrownBy(() -> codec.decompress(compressed, data.length - 1))
            .isInstanceOf(DecompressionLimitException.class)
            .hasMessageContaining("maxDecompressedBytes=" + (data.length - 1));
        assertThatThrownBy(() -> codec.decompress(compressed, 0)).isInstanceOf(DecompressionLimitException.class);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codecs")
    void truncatedStreamsFailWithProtocolExceptionOnly(String name, CompressionCodec codec, Compression unused) {
        byte[] compressed = toArray(codec.compress(ByteBuffer.wrap(mixed(150_000))));
        for (int length = 0; length < compressed.length; length += Math.max(1, compressed.length / 97)) {
            ByteBuffer truncated = ByteBuffer.wrap(Arrays.copyOf(compressed, length));
            expectOnlyProtocolException(() -> codec.decompress(truncated, 1 << 20));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codecs")
    void randomAndMutatedStreamsFailWithProtocolExceptionOnly(String name, CompressionCodec codec, Compression unused) {
        Random random = new Random(name.hashCode());
        byte[] valid = toArray(codec.compress(ByteBuffer.wrap(mixed(20_000))));
        for (int i = 0; i < 2_000; i++) {
            byte[] bytes = random.nextBoolean() ? random(random.nextInt(300), random.nextLong()) : mutate(valid, random);
            expectOnlyProtocolException(() -> codec.decompress(ByteBuffer.wrap(bytes), 1 << 20));
        }
    }

    @Test
    void noCompressionSharesBytesAndStillHonoursTheLimit() {
        ByteBuffer data = ByteBuffer.wrap(new byte[] {1, 2, 3});
        assertThat(NoCompressionCodec.INSTANCE.decompress(data, 3)).isEqualTo(data);
        assertThatThrownBy(() -> NoCompressionCodec.INSTANCE.decompress(data, 2)).isInstanceOf(DecompressionLimitException.class);
    }

    @Test
    void snappyReadsRawBlocksAsLibrdkafkaWritesThem() throws IOException {
        byte[] data = mixed(100_000);
        byte[] raw = Snappy.compress(data);
        assertThat(toArray(SnappyCodec.INSTANCE.decompress(ByteBuffer.wrap(raw), data.length))).isEqualTo(data);
        assertThatThrownBy(() -> SnappyCodec.INSTANCE.decompress(ByteBuffer.wrap(raw), data.length - 1))
            .isInstanceOf(DecompressionLimitException.class);
    }

    @Test
    void snappyReadsConcatenatedFramedStreams() {
        byte[] first = mixed(40_000);
        byte[] second = compressible(70_000);
        byte[] a = toArray(SnappyCodec.INSTANCE.compress(ByteBuffer.wrap(first)));
        byte[] b = toArray(SnappyCodec.INSTANCE.compress(ByteBuffer.wrap(second)));
        byte[] both = concat(a, b);
        assertThat(toArray(SnappyCodec.INSTANCE.decompress(ByteBuffer.wrap(both), 1 << 20))).isEqualTo(concat(first, second));
    }

    @Test
    void snappyRefusesChunkLengthsThatDoNotFit() {
        byte[] stream = toArray(SnappyCodec.INSTANCE.compress(ByteBuffer.wrap(mixed(1000))));
        for (int chunkLength : new int[] {-1, Integer.MIN_VALUE + 5, stream.length, Integer.MAX_VALUE}) {
            ByteBuffer corrupted = ByteBuffer.wrap(stream.clone());
            corrupted.putInt(SnappyCodec.HEADER_BYTES, chunkLength);
            assertThatThrownBy(() -> SnappyCodec.INSTANCE.decompress(corrupted, 1 << 20)).isInstanceOf(CompressionException.class);
        }
    }

    @Test
    void snappyRefusesABlockWhoseDeclaredLengthPassesTheLimitBeforeDecoding() {
        // A raw block whose varint preamble claims 2^31-1 bytes: refused from the preamble alone.
        byte[] claimsHuge = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07, 0x00};
        assertThatThrownBy(() -> SnappyCodec.INSTANCE.decompress(ByteBuffer.wrap(claimsHuge), 1 << 20))
            .isInstanceOf(DecompressionLimitException.class);
    }

    static Stream<Arguments> lz4FrameVariants() {
        return Stream.of(
            Arguments.of(LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB, new LZ4FrameOutputStream.FLG.Bits[] {
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE}),
            Arguments.of(LZ4FrameOutputStream.BLOCKSIZE.SIZE_256KB, new LZ4FrameOutputStream.FLG.Bits[] {
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE, LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM}),
            Arguments.of(LZ4FrameOutputStream.BLOCKSIZE.SIZE_1MB, new LZ4FrameOutputStream.FLG.Bits[] {
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE, LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM}),
            Arguments.of(LZ4FrameOutputStream.BLOCKSIZE.SIZE_4MB, new LZ4FrameOutputStream.FLG.Bits[] {
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE, LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE,
                LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM, LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM}));
    }

    @ParameterizedTest
    @MethodSource("lz4FrameVariants")
    void lz4ReadsFramesWithChecksumsContentSizeAndLargeBlocks(LZ4FrameOutputStream.BLOCKSIZE blockSize,
                                                              LZ4FrameOutputStream.FLG.Bits[] bits) throws IOException {
        byte[] data = mixed(600_000);
        byte[] frame = lz4Frame(data, blockSize, bits);
        assertThat(toArray(new Lz4FrameCodec().decompress(ByteBuffer.wrap(frame), data.length))).isEqualTo(data);
    }

    @Test
    void lz4RefusesABadBlockChecksum() throws IOException {
        byte[] frame = lz4Frame(mixed(10_000), LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
            LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE, LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM);
        frame[frame.length - 5]++; // last byte of the block checksum, before the 4-byte end mark
        assertThatThrownBy(() -> new Lz4FrameCodec().decompress(ByteBuffer.wrap(frame), 1 << 20))
            .isInstanceOf(CompressionException.class).hasMessageContaining("block checksum");
    }

    @Test
    void lz4RefusesABadDescriptorChecksumAndDependentBlocks() {
        byte[] frame = toArray(new Lz4FrameCodec().compress(ByteBuffer.wrap(mixed(1000))));
        byte[] badChecksum = frame.clone();
        badChecksum[6]++;
        assertThatThrownBy(() -> new Lz4FrameCodec().decompress(ByteBuffer.wrap(badChecksum), 1 << 20))
            .isInstanceOf(CompressionException.class).hasMessageContaining("descriptor checksum");
        // lz4-java refuses to write linked blocks, so clear the flag and re-sign the descriptor.
        byte[] dependent = frame.clone();
        dependent[4] &= ~Lz4FrameCodec.FLG_BLOCK_INDEPENDENCE;
        dependent[6] = (byte) (XXHashFactory.fastestInstance().hash32().hash(dependent, 4, 2, 0) >> 8);
        assertThatThrownBy(() -> new Lz4FrameCodec().decompress(ByteBuffer.wrap(dependent), 1 << 20))
            .isInstanceOf(CompressionException.class).hasMessageContaining("dependent blocks");
    }

    @Test
    void lz4WritesKafkasFrameHeader() {
        byte[] frame = toArray(new Lz4FrameCodec().compress(ByteBuffer.wrap(new byte[] {1, 2, 3})));
        // magic 184D2204 little-endian, FLG 0x60 (version 1, independent blocks), BD 0x40 (64 KiB).
        assertThat(Arrays.copyOf(frame, 6)).containsExactly(0x04, 0x22, 0x4D, 0x18, 0x60, 0x40);
    }

    @Test
    void levelsAreValidated() {
        assertThatThrownBy(() -> new GzipCodec(10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Lz4FrameCodec(18)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ZstdCodec(23)).isInstanceOf(IllegalArgumentException.class);
        byte[] data = compressible(50_000);
        for (CompressionCodec codec : List.of(new GzipCodec(1), new GzipCodec(9), new Lz4FrameCodec(1), new Lz4FrameCodec(17),
            new ZstdCodec(1), new ZstdCodec(19))) {
            assertThat(toArray(codec.decompress(codec.compress(ByteBuffer.wrap(data)), data.length))).isEqualTo(data);
        }
    }

    static void expectOnlyProtocolException(Runnable action) {
        try {
            action.run();
        } catch (ProtocolException expected) {
            // the one acceptable failure for bad bytes
        } catch (Throwable unexpected) {
            fail("only ProtocolException may escape, got " + unexpected, unexpected);
        }
    }

    static ByteBuffer kafkaCompress(Compression kafka, byte[] data) throws IOException {
        ByteBufferOutputStream sink = new ByteBufferOutputStream(1024);
        try (OutputStream out = kafka.wrapForOutput(sink, KAFKA_MAGIC_V2)) {
            out.write(data);
        }
        return sink.buffer().flip();
    }

    private static byte[] lz4Frame(byte[] data, LZ4FrameOutputStream.BLOCKSIZE blockSize, LZ4FrameOutputStream.FLG.Bits... bits)
        throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (LZ4FrameOutputStream out = bits.length > 0 && Arrays.asList(bits).contains(LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE)
            ? new LZ4FrameOutputStream(sink, blockSize, data.length, bits)
            : new LZ4FrameOutputStream(sink, blockSize, bits)) {
            out.write(data);
        }
        return sink.toByteArray();
    }

    static byte[] compressible(int size) {
        byte[] data = new byte[size];
        for (int i = 0; i < size; i++) {
            data[i] = (byte) ("strata-".charAt(i % 7) + (i / 1000) % 3);
        }
        return data;
    }

    static byte[] random(int size, long seed) {
        byte[] data = new byte[size];
        new Random(seed).nextBytes(data);
        return data;
    }

    /** Half repetitive, half random: exercises both compressed and stored LZ4 blocks. */
    static byte[] mixed(int size) {
        byte[] data = compressible(size);
        byte[] noise = random(size / 2, size);
        System.arraycopy(noise, 0, data, size - noise.length, noise.length);
        return data;
    }

    private static byte[] mutate(byte[] valid, Random random) {
        byte[] copy = valid.clone();
        int mutations = 1 + random.nextInt(4);
        for (int i = 0; i < mutations; i++) {
            copy[random.nextInt(copy.length)] = (byte) random.nextInt();
        }
        return random.nextInt(4) == 0 ? Arrays.copyOf(copy, random.nextInt(copy.length + 1)) : copy;
    }

    static byte[] toArray(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }
}
