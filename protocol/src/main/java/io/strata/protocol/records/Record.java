package io.strata.protocol.records;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * One record of a magic-2 batch with its absolute offset, timestamp and sequence resolved
 * against the batch header. Key, value and header values are read-only views of the batch's
 * (decompressed) bytes, not copies; each accessor returns a fresh duplicate. Immutable.
 */
public final class Record {
    private final long offset;
    private final int sequence;
    private final long timestampMs;
    private final byte attributes;
    private final ByteBuffer key;
    private final ByteBuffer value;
    private final List<Header> headers;
    private final int sizeInBytes;

    Record(long offset, int sequence, long timestampMs, byte attributes, ByteBuffer key, ByteBuffer value,
           List<Header> headers, int sizeInBytes) {
        this.offset = offset;
        this.sequence = sequence;
        this.timestampMs = timestampMs;
        this.attributes = attributes;
        this.key = key == null ? null : key.asReadOnlyBuffer();
        this.value = value == null ? null : value.asReadOnlyBuffer();
        this.headers = headers;
        this.sizeInBytes = sizeInBytes;
    }

    public long offset() {
        return offset;
    }

    /** baseSequence + offsetDelta, wrapping at Integer.MAX_VALUE; {@code -1} without a producer sequence. */
    public int sequence() {
        return sequence;
    }

    /** Create time, or the batch's maxTimestamp when the batch uses LogAppendTime. */
    public long timestamp() {
        return timestampMs;
    }

    /** The record's attribute byte (unused by Kafka, written as 0). */
    public byte attributes() {
        return attributes;
    }

    public boolean hasKey() {
        return key != null;
    }

    /** The key, or null. */
    public ByteBuffer key() {
        return key == null ? null : key.duplicate();
    }

    /** Key length in bytes, or -1 for a null key. */
    public int keySize() {
        return key == null ? -1 : key.remaining();
    }

    public boolean hasValue() {
        return value != null;
    }

    /** The value, or null (a tombstone on compacted topics). */
    public ByteBuffer value() {
        return value == null ? null : value.duplicate();
    }

    /** Value length in bytes, or -1 for a null value. */
    public int valueSize() {
        return value == null ? -1 : value.remaining();
    }

    /** Headers in wire order; unmodifiable. */
    public List<Header> headers() {
        return headers;
    }

    /** Encoded size including the length varint. */
    public int sizeInBytes() {
        return sizeInBytes;
    }

    @Override
    public String toString() {
        return "Record(offset=" + offset + ", timestamp=" + timestampMs + ", keySize=" + keySize()
            + ", valueSize=" + valueSize() + ", headers=" + headers.size() + ")";
    }
}
