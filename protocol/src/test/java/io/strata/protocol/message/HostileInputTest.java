package io.strata.protocol.message;

import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.Frames;
import io.strata.protocol.Message;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.RawTaggedField;
import io.strata.protocol.Reader;
import io.strata.protocol.records.MemoryRecords;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Bad input to the decoders: random bytes, truncated frames, valid frames with corrupted
 * bytes and with huge length and count fields. The only exception that may escape is
 * {@link ProtocolException}, and decoding never allocates more than a small multiple of the
 * frame's own size, whatever a length field claims.
 */
class HostileInputTest {
    /** Allocation allowed per byte of input: each element of a decoded array is an object. */
    private static final long ALLOCATION_BYTES_PER_INPUT_BYTE = 1024;
    private static final long ALLOCATION_SLACK_BYTES = 1 << 20;

    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Property(tries = 3000)
    void randomBytesOnlyEverFailWithProtocolException(@ForAll @Size(max = 200) byte[] bytes,
                                                      @ForAll("apiIndex") int apiIndex, @ForAll short versionSeed,
                                                      @ForAll boolean response) {
        ApiMessageType api = ApiMessageType.values()[apiIndex % ApiMessageType.values().length];
        short version = (short) (api.lowestSchemaVersion + Math.floorMod(versionSeed, api.highestSchemaVersion - api.lowestSchemaVersion + 1));
        decodeExpectingOnlyProtocolErrors(api, version, response, bytes);
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<Integer> apiIndex() {
        return net.jqwik.api.Arbitraries.integers().between(0, ApiMessageType.values().length - 1);
    }

    @Property(tries = 2000)
    void randomRequestFramesOnlyEverFailWithProtocolException(@ForAll @Size(max = 300) byte[] bytes) {
        try {
            ByteBuffer frame = ByteBuffer.wrap(bytes);
            io.strata.protocol.RequestHeader header = Frames.parseRequestHeader(frame);
            Frames.parseRequestBody(header, frame);
        } catch (ProtocolException expected) {
            // the only acceptable failure
        }
    }

    @Test
    void mutatedValidMessagesOfEveryApiAndVersionOnlyFailWithProtocolException() throws Exception {
        Map<String, SchemaRandomizer.Schema> schemas = SchemaRandomizer.loadSchemas();
        Random random = new Random(20261129L);
        int cases = 0;
        for (ApiMessageType api : ApiMessageType.values()) {
            for (boolean response : new boolean[] {false, true}) {
                String className = api.apiName + (response ? "ResponseData" : "RequestData");
                SchemaRandomizer.Schema schema = schemas.get(className);
                ReflectiveLoader loader = new ReflectiveLoader("io.strata.protocol.message." + className,
                    u -> new UUID(u.most(), u.least()),
                    bytes -> MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)),
                    (message, tag, data) -> ((Message) message).unknownTaggedFields().add(new RawTaggedField(tag, data)));
                for (short version = api.lowestSchemaVersion; version <= api.highestSchemaVersion; version++) {
                    for (int i = 0; i < 8; i++) {
                        Message message = (Message) loader.load(new SchemaRandomizer(schema, random).randomMessage(version, true));
                        byte[] valid = encode(message, version);
                        for (int mutation = 0; mutation < 6; mutation++) {
                            decodeExpectingOnlyProtocolErrors(api, version, response, mutate(valid, random));
                            cases++;
                        }
                    }
                }
            }
        }
        assertThat(cases).isGreaterThan(10_000);
    }

    @Test
    void hugeCountsAndLengthsInATinyFrameAllocateNothingSizedByThem() {
        // Metadata v12 request: topics is a compact nullable array; claim 2^31-2 topics in a 6-byte frame.
        byte[] hugeArray = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07, 0x00};
        decodeExpectingOnlyProtocolErrors(ApiMessageType.METADATA, (short) 12, false, hugeArray);
        // Produce v3 request: transactional id i16 length -1, acks, timeout, then topic count 0x7fffffff.
        byte[] hugeTopics = {(byte) 0xff, (byte) 0xff, 0, 1, 0, 0, 0, 100, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff};
        decodeExpectingOnlyProtocolErrors(ApiMessageType.PRODUCE, (short) 3, false, hugeTopics);
        // SaslAuthenticate v1 request: auth bytes with a 2 GiB length.
        byte[] hugeBytes = {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3};
        decodeExpectingOnlyProtocolErrors(ApiMessageType.SASL_AUTHENTICATE, (short) 1, false, hugeBytes);
        // A flexible message whose tagged-field section claims a 2 GiB unknown field.
        byte[] hugeTag = {0, 0, 0, 0, 0x01, 0x05, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07};
        decodeExpectingOnlyProtocolErrors(ApiMessageType.HEARTBEAT, (short) 4, true, hugeTag);
    }

    private static byte[] encode(Message message, short version) {
        ByteBuffer buffer = ByteBuffer.allocate(message.size(version));
        message.write(new ByteBufferWriter(buffer), version);
        return buffer.array();
    }

    private static byte[] mutate(byte[] valid, Random random) {
        if (valid.length == 0) {
            return new byte[] {(byte) random.nextInt()};
        }
        byte[] copy = valid.clone();
        switch (random.nextInt(4)) {
            case 0: // truncate
                return java.util.Arrays.copyOf(copy, random.nextInt(copy.length));
            case 1: // flip bytes
                for (int i = 0; i < 1 + random.nextInt(3); i++) {
                    copy[random.nextInt(copy.length)] ^= (byte) (1 + random.nextInt(255));
                }
                return copy;
            case 2: { // plant a huge big-endian length
                int at = random.nextInt(copy.length);
                byte[] huge = {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xf0};
                System.arraycopy(huge, 0, copy, at, Math.min(4, copy.length - at));
                return copy;
            }
            default: { // plant a huge varint
                int at = random.nextInt(copy.length);
                byte[] huge = {(byte) 0xfe, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07};
                System.arraycopy(huge, 0, copy, at, Math.min(5, copy.length - at));
                return copy;
            }
        }
    }

    private static void decodeExpectingOnlyProtocolErrors(ApiMessageType api, short version, boolean response, byte[] bytes) {
        long threadId = Thread.currentThread().getId();
        long before = THREADS.getThreadAllocatedBytes(threadId);
        try {
            Reader reader = new Reader(ByteBuffer.wrap(bytes));
            if (response) {
                api.readResponse(reader, version);
            } else {
                api.readRequest(reader, version);
            }
        } catch (ProtocolException expected) {
            // the only acceptable failure
        } catch (Throwable unexpected) {
            fail(api.apiName + (response ? " response" : " request") + " v" + version + " leaked " + unexpected
                + " for input " + java.util.HexFormat.of().formatHex(bytes), unexpected);
        }
        long allocated = THREADS.getThreadAllocatedBytes(threadId) - before;
        assertThat(allocated).as("bytes allocated decoding %d input bytes of %s v%d", bytes.length, api.apiName, version)
            .isLessThan(ALLOCATION_SLACK_BYTES + ALLOCATION_BYTES_PER_INPUT_BYTE * bytes.length);
    }
}
