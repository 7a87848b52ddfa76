package io.strata.protocol.records;

import io.strata.protocol.Writable;

import java.nio.ByteBuffer;

/** Record batches held in a buffer (usually a slice of a request frame). Immutable view: the buffer's position is never moved. */
public final class MemoryRecords implements Records {
    public static final MemoryRecords EMPTY = new MemoryRecords(ByteBuffer.allocate(0));

    private final ByteBuffer buffer;

    private MemoryRecords(ByteBuffer buffer) {
        this.buffer = buffer;
    }

    /** Wraps the remaining bytes of {@code buffer} (shared, not copied). */
    public static MemoryRecords readableRecords(ByteBuffer buffer) {
        return new MemoryRecords(buffer.slice());
    }

    /** A read-only view of the bytes, positioned at 0. */
    public ByteBuffer buffer() {
        return buffer.duplicate();
    }

    @Override
    public int sizeInBytes() {
        return buffer.remaining();
    }

    @Override
    public void writeTo(Writable writer) {
        writer.writeByteBuffer(buffer);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof MemoryRecords that && buffer.equals(that.buffer);
    }

    @Override
    public int hashCode() {
        return buffer.hashCode();
    }

    @Override
    public String toString() {
        return "MemoryRecords(" + buffer.remaining() + " bytes)";
    }
}
