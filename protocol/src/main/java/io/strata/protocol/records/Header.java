package io.strata.protocol.records;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A record header: a non-null UTF-8 key and a nullable value. Values read from a batch share
 * the batch's bytes; {@link #value()} returns a read-only duplicate, so callers may move its
 * position freely. Immutable.
 */
public record Header(String key, ByteBuffer value) {
    public Header {
        Objects.requireNonNull(key, "header key");
        value = value == null ? null : value.slice().asReadOnlyBuffer();
    }

    public static Header of(String key, byte[] value) {
        return new Header(key, value == null ? null : ByteBuffer.wrap(value));
    }

    @Override
    public ByteBuffer value() {
        return value == null ? null : value.duplicate();
    }
}
