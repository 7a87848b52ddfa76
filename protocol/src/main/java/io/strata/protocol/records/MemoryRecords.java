package io.strata.protocol.records;

import io.strata.protocol.Writable;

import java.nio.ByteBuffer;
import java.util.Iterator;

/**
 * Record batches held in a buffer (usually a slice of a request frame). The buffer's position
 * is never moved; the broker rewrites header fields of the batches in place when it assigns
 * offsets (see {@link DefaultRecordBatch} setters), which changes these bytes.
 */
public final class MemoryRecords implements Records {
    public static final MemoryRecords EMPTY = new MemoryRecords(ByteBuffer.allocate(0));

    private final ByteBuffer buffer;

    private MemoryRecords(ByteBuffer buffer) {
        this.buffer = buffer;
    }

    /** Wraps the remaining bytes of {@code buffer} (shared, not copied). */
    /** {@code records} as a buffer: itself if it is one, else a copy of its bytes (a file slice read into memory). */
    public static MemoryRecords of(Records records) {
        if (records instanceof MemoryRecords memory) {
            return memory;
        }
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(records.sizeInBytes());
        records.writeTo(new io.strata.protocol.ByteBufferWriter(buffer));
        return readableRecords(buffer.flip());
    }

    public static MemoryRecords readableRecords(ByteBuffer buffer) {
        return new MemoryRecords(buffer.slice());
    }

    /** A read-only view of the bytes, positioned at 0. */
    public ByteBuffer buffer() {
        return buffer.duplicate();
    }

    /**
     * The batches in order, as zero-copy views sharing this buffer (so in-place setters on a
     * {@link DefaultRecordBatch} change these bytes). Iteration ends quietly at a truncated last
     * batch, as a Fetch response may end; compare {@link #validBytes()} with
     * {@link #sizeInBytes()} where a partial batch is an error. Lengths that can never be
     * valid and unknown magics throw {@link CorruptRecordException} from {@code hasNext()}.
     * Contents (CRC, records) are not checked here.
     */
    public Iterable<RecordBatch> batches() {
        return this::batchIterator;
    }

    /** See {@link #batches()}. */
    public Iterator<RecordBatch> batchIterator() {
        return new BatchIterator(buffer);
    }

    /**
     * Bytes covered by complete batches from the start; equal to {@link #sizeInBytes()} unless
     * the last batch is truncated.
     *
     * @throws CorruptRecordException as {@link #batches()} does
     */
    public int validBytes() {
        BatchIterator iterator = new BatchIterator(buffer);
        while (iterator.hasNext()) {
            iterator.next();
        }
        return iterator.validBytes();
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
