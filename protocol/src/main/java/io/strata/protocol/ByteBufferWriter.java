package io.strata.protocol;

import io.strata.protocol.records.Records;

import java.nio.ByteBuffer;
import java.util.UUID;

/** Writes protocol primitives into a buffer sized in advance from {@link Message#size(short)}. Not thread-safe. */
public final class ByteBufferWriter implements Writable {
    private final ByteBuffer buffer;

    public ByteBufferWriter(ByteBuffer buffer) {
        this.buffer = buffer;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    @Override
    public void writeByte(byte value) {
        buffer.put(value);
    }

    @Override
    public void writeShort(short value) {
        buffer.putShort(value);
    }

    @Override
    public void writeInt(int value) {
        buffer.putInt(value);
    }

    @Override
    public void writeLong(long value) {
        buffer.putLong(value);
    }

    @Override
    public void writeDouble(double value) {
        buffer.putDouble(value);
    }

    @Override
    public void writeUnsignedVarint(int value) {
        ByteUtils.writeUnsignedVarint(value, buffer);
    }

    @Override
    public void writeVarint(int value) {
        ByteUtils.writeUnsignedVarint((value << 1) ^ (value >> 31), buffer);
    }

    @Override
    public void writeVarlong(long value) {
        ByteUtils.writeVarlong(value, buffer);
    }

    @Override
    public void writeByteArray(byte[] bytes) {
        buffer.put(bytes);
    }

    @Override
    public void writeByteBuffer(ByteBuffer bytes) {
        buffer.put(bytes.duplicate());
    }

    @Override
    public void writeUuid(UUID uuid) {
        buffer.putLong(uuid.getMostSignificantBits());
        buffer.putLong(uuid.getLeastSignificantBits());
    }

    @Override
    public void writeRecords(Records records) {
        records.writeTo(this);
    }
}
