package io.strata.server.network;

import io.netty.buffer.ByteBuf;
import io.strata.protocol.Writable;
import io.strata.protocol.records.Records;

import java.nio.ByteBuffer;
import java.util.UUID;

/** Writes protocol primitives into a Netty buffer sized in advance. Not thread-safe. */
final class ByteBufWritable implements Writable {
    private final ByteBuf buffer;

    ByteBufWritable(ByteBuf buffer) {
        this.buffer = buffer;
    }

    @Override
    public void writeByte(byte value) {
        buffer.writeByte(value);
    }

    @Override
    public void writeShort(short value) {
        buffer.writeShort(value);
    }

    @Override
    public void writeInt(int value) {
        buffer.writeInt(value);
    }

    @Override
    public void writeLong(long value) {
        buffer.writeLong(value);
    }

    @Override
    public void writeDouble(double value) {
        buffer.writeDouble(value);
    }

    @Override
    public void writeUnsignedVarint(int value) {
        int remaining = value;
        while ((remaining & 0xffffff80) != 0) {
            buffer.writeByte((remaining & 0x7f) | 0x80);
            remaining >>>= 7;
        }
        buffer.writeByte(remaining);
    }

    @Override
    public void writeVarint(int value) {
        writeUnsignedVarint((value << 1) ^ (value >> 31));
    }

    @Override
    public void writeVarlong(long value) {
        long remaining = (value << 1) ^ (value >> 63);
        while ((remaining & 0xffffffffffffff80L) != 0L) {
            buffer.writeByte((int) ((remaining & 0x7f) | 0x80));
            remaining >>>= 7;
        }
        buffer.writeByte((int) remaining);
    }

    @Override
    public void writeByteArray(byte[] bytes) {
        buffer.writeBytes(bytes);
    }

    @Override
    public void writeByteBuffer(ByteBuffer bytes) {
        buffer.writeBytes(bytes.duplicate());
    }

    @Override
    public void writeUuid(UUID uuid) {
        buffer.writeLong(uuid.getMostSignificantBits());
        buffer.writeLong(uuid.getLeastSignificantBits());
    }

    @Override
    public void writeRecords(Records records) {
        records.writeTo(this);
    }
}
