package io.strata.protocol.records.compression;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Objects;

/** Reads a private duplicate of a buffer, so the caller's position never moves. Not thread-safe. */
final class ByteBufferInputStream extends InputStream {
    private final ByteBuffer buffer;

    ByteBufferInputStream(ByteBuffer buffer) {
        this.buffer = buffer.duplicate();
    }

    @Override
    public int read() {
        return buffer.hasRemaining() ? buffer.get() & 0xff : -1;
    }

    @Override
    public int read(byte[] target, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, target.length);
        if (length == 0) {
            return 0;
        }
        if (!buffer.hasRemaining()) {
            return -1;
        }
        int read = Math.min(length, buffer.remaining());
        buffer.get(target, offset, read);
        return read;
    }

    @Override
    public int available() {
        return buffer.remaining();
    }
}
