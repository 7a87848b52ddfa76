package io.strata.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code .index} file of a log segment: a sparse map from offset to the byte position in the
 * segment's {@code .log} file of the batch holding that offset. Byte-identical to Apache Kafka's
 * offset index, so Kafka's {@code kafka-dump-log} reads it.
 *
 * <h2>Entry layout (8 bytes, big-endian)</h2>
 * <pre>
 *   0                   4                   8
 *   +-------------------+-------------------+
 *   |  relative offset  |   file position   |
 *   +-------------------+-------------------+
 *   relative offset = offset - baseOffset, in [0, 2^31 - 1]  (Kafka reads it as a signed int)
 *   file position   = byte position of the batch in the .log file, in [0, 2^31 - 1]
 * </pre>
 * The file is a plain array of entries with no header; entry {@code n} starts at byte {@code 8n}.
 *
 * <h2>Sparsity</h2>
 * The segment adds an entry only every {@code index.interval.bytes} of log, so a lookup returns
 * the last indexed batch at or before the target and the reader scans the log forward from its
 * position. Offsets are strictly increasing, and so are positions.
 *
 * <h2>Preallocation, crash behaviour, thread contract</h2>
 * See {@link MappedIndexFile}: preallocated to {@code maxIndexSizeBytes} while writable, trimmed
 * to the valid entries on roll and close, not checksummed (rebuilt from the log when past the
 * recovery point), one appender concurrent with any number of lookups.
 */
public final class OffsetIndex extends MappedIndexFile {
    public static final int ENTRY_SIZE_BYTES = 8;

    /** The offset of the last entry, or baseOffset when empty; updated after the entry is published. */
    private volatile long lastOffset;

    /**
     * Opens {@code file}, creating it when missing. A writable index is extended to
     * {@code maxIndexSizeBytes} rounded down to a multiple of {@value #ENTRY_SIZE_BYTES}; an
     * existing file holds {@code fileLength / 8} entries.
     */
    public OffsetIndex(Path file, long baseOffset, int maxIndexSizeBytes, boolean writable) throws IOException {
        super(file, baseOffset, maxIndexSizeBytes, writable, ENTRY_SIZE_BYTES);
        this.lastOffset = read(this::lastOffsetOf);
    }

    /**
     * Adds an entry for the batch holding {@code offset} at byte {@code position} of the log.
     *
     * @throws InvalidOffsetException   if the index is not empty and {@code offset <= lastOffset()}
     * @throws IllegalStateException    if the index is full, read-only or closed
     * @throws IllegalArgumentException if the offset does not fit ({@link #canAppendOffset}) or the position is negative
     */
    public void append(long offset, int position) {
        ReentrantLock lock = mutationLock();
        lock.lock();
        try {
            requireAppendable();
            int slot = entries();
            if (slot > 0 && offset <= lastOffset) {
                throw new InvalidOffsetException("offsets must increase: appending offset=" + offset + " at slot " + slot
                    + " after lastOffset=" + lastOffset + " in " + file());
            }
            if (position < 0) {
                throw new IllegalArgumentException("position must not be negative: position=" + position + ", offset=" + offset + ", file=" + file());
            }
            ByteBuffer buffer = writerBuffer();
            buffer.putInt(slot * ENTRY_SIZE_BYTES, relativeOffset(offset));
            buffer.putInt(slot * ENTRY_SIZE_BYTES + 4, position);
            publishAppendedEntry();
            lastOffset = offset; // after publishing: a reader that sees it finds its entry
            assert entryAt(buffer, slot).equals(new OffsetPosition(offset, position)) : "entry read back differs at slot " + slot;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The entry with the largest offset {@code <= targetOffset}, or {@code (baseOffset, 0)} when
     * there is none (the target is before the first entry or the index is empty).
     */
    public OffsetPosition lookup(long targetOffset) {
        return read((buffer, entries) -> {
            int count = countKeysBelow(buffer, entries, this::offsetAt, targetOffset, true);
            return count == 0 ? new OffsetPosition(baseOffset(), 0) : entryAt(buffer, count - 1);
        });
    }

    /**
     * The entry with the largest position {@code <= targetPosition}, or {@code (baseOffset, 0)}
     * when there is none. Positions increase with offsets, so the same search applies.
     */
    public OffsetPosition lookupByPosition(int targetPosition) {
        return read((buffer, entries) -> {
            int count = countKeysBelow(buffer, entries, OffsetIndex::positionAt, targetPosition, true);
            return count == 0 ? new OffsetPosition(baseOffset(), 0) : entryAt(buffer, count - 1);
        });
    }

    /** The {@code n}th entry, 0-based. @throws IllegalArgumentException if {@code n} is not below {@link #entries()} */
    public OffsetPosition entry(int n) {
        return read((buffer, entries) -> {
            requireValidSlot(n, entries);
            return entryAt(buffer, n);
        });
    }

    /**
     * The offset of the last entry, or {@link #baseOffset()} when empty. It is updated after the
     * entry is published, so a lookup made after reading it finds that entry.
     */
    public long lastOffset() {
        return lastOffset;
    }

    /**
     * Kafka's checks (a non-empty index whose last offset is below the base offset; a length that
     * is not a whole number of entries) plus one of ours: the last two entries must have
     * increasing offsets, which catches an untrimmed, zero-filled file left by a crash.
     */
    @Override
    public void sanityCheck() {
        super.sanityCheck();
        read((buffer, entries) -> {
            if (entries > 0 && lastOffsetOf(buffer, entries) < baseOffset()) {
                throw new CorruptIndexException("non-empty offset index has lastOffset=" + lastOffsetOf(buffer, entries)
                    + " below baseOffset=" + baseOffset() + ": file=" + file());
            }
            if (entries > 1 && offsetAt(buffer, entries - 2) >= offsetAt(buffer, entries - 1)) {
                throw new CorruptIndexException("offset index entries do not increase: entry " + (entries - 2) + " has offset="
                    + offsetAt(buffer, entries - 2) + ", entry " + (entries - 1) + " has offset=" + offsetAt(buffer, entries - 1)
                    + ", file=" + file());
            }
            return null;
        });
    }

    @Override
    long offsetAt(ByteBuffer buffer, int slot) {
        return baseOffset() + buffer.getInt(slot * ENTRY_SIZE_BYTES);
    }

    @Override
    void refreshLastEntry(ByteBuffer buffer, int entries) {
        lastOffset = lastOffsetOf(buffer, entries);
    }

    private long lastOffsetOf(ByteBuffer buffer, int entries) {
        return entries == 0 ? baseOffset() : offsetAt(buffer, entries - 1);
    }

    private static long positionAt(ByteBuffer buffer, int slot) {
        return buffer.getInt(slot * ENTRY_SIZE_BYTES + 4);
    }

    private OffsetPosition entryAt(ByteBuffer buffer, int slot) {
        return new OffsetPosition(offsetAt(buffer, slot), (int) positionAt(buffer, slot));
    }

    @Override
    public String toString() {
        return "OffsetIndex(file=" + file() + ", baseOffset=" + baseOffset() + ", entries=" + entries()
            + ", maxEntries=" + maxEntries() + ", lastOffset=" + lastOffset + ")";
    }
}
