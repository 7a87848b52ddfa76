package io.strata.protocol;

import java.nio.ByteBuffer;

/** Varint encoding into buffers (protobuf-style base-128, zig-zag for signed values). */
public final class ByteUtils {
    private ByteUtils() {
    }

    public static void writeUnsignedVarint(int value, ByteBuffer buffer) {
        int remaining = value;
        while ((remaining & 0xffffff80) != 0) {
            buffer.put((byte) ((remaining & 0x7f) | 0x80));
            remaining >>>= 7;
        }
        buffer.put((byte) remaining);
    }

    public static void writeVarint(int value, ByteBuffer buffer) {
        writeUnsignedVarint((value << 1) ^ (value >> 31), buffer);
    }

    public static void writeVarlong(long value, ByteBuffer buffer) {
        long remaining = (value << 1) ^ (value >> 63);
        while ((remaining & 0xffffffffffffff80L) != 0L) {
            buffer.put((byte) ((remaining & 0x7f) | 0x80));
            remaining >>>= 7;
        }
        buffer.put((byte) remaining);
    }

    /** Reads a zig-zag varint from {@code buffer}, throwing {@link ProtocolException} on truncation or overlong input. */
    public static int readVarint(ByteBuffer buffer) {
        int raw = readUnsignedVarint(buffer);
        return (raw >>> 1) ^ -(raw & 1);
    }

    public static int readUnsignedVarint(ByteBuffer buffer) {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            if (!buffer.hasRemaining()) {
                throw new ProtocolException("truncated varint");
            }
            byte b = buffer.get();
            value |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new ProtocolException("varint is longer than 5 bytes");
    }

    public static long readVarlong(ByteBuffer buffer) {
        long value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (!buffer.hasRemaining()) {
                throw new ProtocolException("truncated varlong");
            }
            byte b = buffer.get();
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return (value >>> 1) ^ -(value & 1);
            }
        }
        throw new ProtocolException("varlong is longer than 10 bytes");
    }
}
