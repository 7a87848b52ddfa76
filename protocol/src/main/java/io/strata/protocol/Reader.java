package io.strata.protocol;

import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Records;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Reads protocol primitives from a buffer that holds one untrusted frame.
 *
 * <p>Every read checks the bytes that remain first and throws {@link ProtocolException} when
 * they do not suffice; every length or count is checked against the remaining bytes before
 * anything is allocated for it, so a hostile length field can never make the decoder
 * allocate more than the frame itself holds. Byte, bytes and records fields are returned as
 * slices of the frame where the schema asks for zero copy.
 *
 * <p>Not thread-safe.
 */
public final class Reader {
    /** Kafka refuses strings longer than a signed 16-bit length, in both encodings. */
    public static final int MAX_STRING_LENGTH = Short.MAX_VALUE;

    private final ByteBuffer buffer;

    public Reader(ByteBuffer buffer) {
        this.buffer = buffer;
    }

    public int remaining() {
        return buffer.remaining();
    }

    public int position() {
        return buffer.position();
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    private void require(int bytes) {
        if (buffer.remaining() < bytes) {
            throw new ProtocolException("truncated: needed " + bytes + " bytes at position " + buffer.position()
                + " but only " + buffer.remaining() + " remain");
        }
    }

    public byte readByte() {
        require(1);
        return buffer.get();
    }

    public short readShort() {
        require(2);
        return buffer.getShort();
    }

    public int readUnsignedShort() {
        return readShort() & 0xffff;
    }

    public int readInt() {
        require(4);
        return buffer.getInt();
    }

    public long readUnsignedInt() {
        return readInt() & 0xffffffffL;
    }

    public long readLong() {
        require(8);
        return buffer.getLong();
    }

    public double readDouble() {
        require(8);
        return buffer.getDouble();
    }

    public UUID readUuid() {
        require(16);
        return new UUID(buffer.getLong(), buffer.getLong());
    }

    public int readUnsignedVarint() {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte b = readByte();
            value |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                if (shift == 28 && (b & 0xf0) != 0) {
                    throw new ProtocolException("unsigned varint overflows 32 bits");
                }
                return value;
            }
        }
        throw new ProtocolException("unsigned varint is longer than 5 bytes");
    }

    public int readVarint() {
        int raw = readUnsignedVarint();
        return (raw >>> 1) ^ -(raw & 1);
    }

    public long readVarlong() {
        long value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            byte b = readByte();
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                if (shift == 63 && (b & 0x7e) != 0) {
                    throw new ProtocolException("varlong overflows 64 bits");
                }
                return (value >>> 1) ^ -(value & 1);
            }
        }
        throw new ProtocolException("varlong is longer than 10 bytes");
    }

    private void checkLength(int length, String what) {
        if (length < 0 || length > buffer.remaining()) {
            throw new ProtocolException(what + " length " + length + " does not fit the " + buffer.remaining() + " remaining bytes");
        }
    }

    public String readString(int length) {
        if (length > MAX_STRING_LENGTH) {
            throw new ProtocolException("string length " + length + " exceeds the maximum of " + MAX_STRING_LENGTH);
        }
        checkLength(length, "string");
        String value;
        if (buffer.hasArray()) {
            value = new String(buffer.array(), buffer.arrayOffset() + buffer.position(), length, StandardCharsets.UTF_8);
            buffer.position(buffer.position() + length);
        } else {
            byte[] bytes = new byte[length];
            buffer.get(bytes);
            value = new String(bytes, StandardCharsets.UTF_8);
        }
        return value;
    }

    public byte[] readBytes(int length) {
        checkLength(length, "bytes");
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }

    /** A slice of the frame: valid as long as the frame's buffer is. */
    public ByteBuffer readByteBuffer(int length) {
        checkLength(length, "bytes");
        ByteBuffer slice = buffer.slice(buffer.position(), length);
        buffer.position(buffer.position() + length);
        return slice;
    }

    public Records readRecords(int length) {
        return MemoryRecords.readableRecords(readByteBuffer(length));
    }

    /** Every array element takes at least one byte, so a count above the remaining bytes is a lie. */
    public void checkArrayLength(int count) {
        if (count > buffer.remaining()) {
            throw new ProtocolException("array count " + count + " exceeds the " + buffer.remaining() + " remaining bytes");
        }
    }

    public List<RawTaggedField> readUnknownTaggedField(List<RawTaggedField> fields, int tag, int size) {
        List<RawTaggedField> result = fields == null ? new ArrayList<>(1) : fields;
        result.add(new RawTaggedField(tag, readBytes(size)));
        return result;
    }
}
