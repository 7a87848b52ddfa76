package io.strata.protocol;

import io.strata.protocol.records.Records;

import java.nio.ByteBuffer;
import java.util.UUID;

/**
 * The sink that generated messages write to. {@link ByteBufferWriter} writes into one heap or
 * direct buffer; the network layer supplies writers that keep record sets as separate
 * (possibly file-backed) segments so they are not copied.
 */
public interface Writable {
    void writeByte(byte value);

    void writeShort(short value);

    void writeInt(int value);

    void writeLong(long value);

    void writeDouble(double value);

    void writeUnsignedVarint(int value);

    void writeVarint(int value);

    void writeVarlong(long value);

    void writeByteArray(byte[] bytes);

    /** Writes the remaining bytes of {@code bytes} without moving its position. */
    void writeByteBuffer(ByteBuffer bytes);

    void writeUuid(UUID uuid);

    void writeRecords(Records records);
}
