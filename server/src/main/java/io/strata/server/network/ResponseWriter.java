package io.strata.server.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.strata.protocol.Writable;
import io.strata.protocol.records.Records;
import io.strata.storage.FileRecords;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Writes a response as a sequence of parts: heap/direct buffers for the protocol fields and,
 * for record sets that are segment-file slices, file regions the transport sends with
 * sendfile, so fetched records never pass through the JVM heap. Without zero copy (TLS, whose
 * encryption needs the bytes) such slices are read from the file into the response buffer.
 *
 * <p>Not thread-safe; one per response. The parts are owned by the caller once {@link #finish()} returns.
 */
final class ResponseWriter implements Writable {
    private static final int INITIAL_BUFFER_BYTES = 256;

    private final ByteBufAllocator allocator;
    private final boolean zeroCopy;
    private final List<Object> parts = new ArrayList<>(3);
    private ByteBuf current;
    private ByteBufWritable writable;

    ResponseWriter(ByteBufAllocator allocator, int expectedBytes, boolean zeroCopy) {
        this.allocator = allocator;
        this.zeroCopy = zeroCopy;
        startBuffer(expectedBytes);
    }

    private void startBuffer(int capacity) {
        current = allocator.buffer(Math.max(INITIAL_BUFFER_BYTES, capacity));
        writable = new ByteBufWritable(current);
    }

    @Override
    public void writeByte(byte value) {
        writable.writeByte(value);
    }

    @Override
    public void writeShort(short value) {
        writable.writeShort(value);
    }

    @Override
    public void writeInt(int value) {
        writable.writeInt(value);
    }

    @Override
    public void writeLong(long value) {
        writable.writeLong(value);
    }

    @Override
    public void writeDouble(double value) {
        writable.writeDouble(value);
    }

    @Override
    public void writeUnsignedVarint(int value) {
        writable.writeUnsignedVarint(value);
    }

    @Override
    public void writeVarint(int value) {
        writable.writeVarint(value);
    }

    @Override
    public void writeVarlong(long value) {
        writable.writeVarlong(value);
    }

    @Override
    public void writeByteArray(byte[] bytes) {
        writable.writeByteArray(bytes);
    }

    @Override
    public void writeByteBuffer(ByteBuffer bytes) {
        writable.writeByteBuffer(bytes);
    }

    @Override
    public void writeUuid(UUID uuid) {
        writable.writeUuid(uuid);
    }

    @Override
    public void writeRecords(Records records) {
        if (records instanceof FileRecords file && file.sizeInBytes() > 0) {
            if (zeroCopy) {
                parts.add(current);
                parts.add(new SegmentFileRegion(file.channel(), file.position(), file.sizeInBytes()));
                startBuffer(INITIAL_BUFFER_BYTES);
            } else {
                copyFromFile(file);
            }
        } else {
            records.writeTo(this);
        }
    }

    /** Reads the slice straight into the (pooled, usually direct) response buffer: one copy, none through the heap. */
    private void copyFromFile(FileRecords file) {
        int size = file.sizeInBytes();
        current.ensureWritable(size);
        int copied = 0;
        try {
            while (copied < size) {
                int read = current.writeBytes(file.channel(), (long) file.position() + copied, size - copied);
                if (read < 0) {
                    throw new EOFException("segment file ended " + (size - copied) + " bytes before the end of a fetched slice");
                }
                copied += read;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The parts in order. */
    List<Object> finish() {
        if (current.isReadable() || parts.isEmpty()) {
            parts.add(current);
        } else {
            current.release();
        }
        current = null;
        return parts;
    }

    /** Releases everything written so far (on an encoding failure). */
    void discard() {
        for (Object part : parts) {
            io.netty.util.ReferenceCountUtil.release(part);
        }
        if (current != null) {
            current.release();
        }
    }
}
