package io.strata.protocol.records.compression;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/** Small copies between buffers and streams that the codecs share. */
final class Buffers {
    private Buffers() {
    }

    /** Writes the remaining bytes of {@code source} to {@code output} without moving its position. */
    static void writeTo(ByteBuffer source, OutputStream output) throws IOException {
        if (source.hasArray()) {
            output.write(source.array(), source.arrayOffset() + source.position(), source.remaining());
        } else {
            output.write(toArray(source));
        }
    }

    /** A copy of the remaining bytes of {@code source}; its position does not move. */
    static byte[] toArray(ByteBuffer source) {
        byte[] copy = new byte[source.remaining()];
        source.get(source.position(), copy);
        return copy;
    }
}
