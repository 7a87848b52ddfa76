package io.strata.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code .timeindex} file of a log segment: a sparse map from timestamp to offset, used to
 * answer ListOffsets by time and to decide time-based retention. Byte-identical to Apache Kafka's
 * time index, so Kafka's {@code kafka-dump-log} reads it.
 *
 * <h2>Entry layout (12 bytes, big-endian)</h2>
 * <pre>
 *   0                                       8                   12
 *   +---------------------------------------+-------------------+
 *   |               timestamp               |  relative offset  |
 *   +---------------------------------------+-------------------+
 *   timestamp       = milliseconds since the epoch (signed 64-bit)
 *   relative offset = offset - baseOffset, in [0, 2^31 - 1]
 * </pre>
 * An entry {@code (T, O)} says: T is the largest timestamp in the segment up to the batch that
 * holds offset O, so any record with a timestamp above T comes after O. The file has no header;
 * entry {@code n} starts at byte {@code 12n}.
 *
 * <h2>Sparsity and monotonicity</h2>
 * An entry is added only when the segment's maximum timestamp grows ({@link #maybeAppend}), so
 * timestamps are strictly increasing and offsets non-decreasing along the file. The last slot is
 * reserved: {@link #isFull()} reports full one entry early so that the final
 * {@code maybeAppend(..., skipFullCheck = true)} made when the segment is rolled or closed always
 * has room.
 *
 * <h2>Preallocation, crash behaviour, thread contract</h2>
 * See {@link MappedIndexFile}: preallocated while writable, trimmed on roll and close, not
 * checksummed (rebuilt from the log when past the recovery point), one appender concurrent with
 * any number of lookups.
 */
public final class TimeIndex extends MappedIndexFile {
    public static final int ENTRY_SIZE_BYTES = 12;
    /** The timestamp of "no entry", as Kafka's {@code RecordBatch.NO_TIMESTAMP}. */
    public static final long NO_TIMESTAMP = -1L;

    /** The last entry, or (NO_TIMESTAMP, baseOffset) when empty; updated after the entry is published. */
    private volatile TimestampOffset lastEntry;

    /** Opens {@code file}, creating it when missing; see {@link OffsetIndex#OffsetIndex} for sizing. */
    public TimeIndex(Path file, long baseOffset, int maxIndexSizeBytes, boolean writable) throws IOException {
        super(file, baseOffset, maxIndexSizeBytes, writable, ENTRY_SIZE_BYTES);
        this.lastEntry = read(this::lastEntryOf);
    }

    /** Full one slot early: the last slot is kept for the entry written when the segment is rolled. */
    @Override
    public boolean isFull() {
        return entries() >= maxEntries() - 1;
    }

    /** Equivalent to {@code maybeAppend(timestamp, offset, false)}. */
    public void maybeAppend(long timestamp, long offset) {
        maybeAppend(timestamp, offset, false);
    }

    /**
     * Appends {@code (timestamp, offset)} if {@code timestamp} is above the last entry's timestamp;
     * otherwise does nothing (the segment's maximum timestamp did not grow).
     *
     * @param skipFullCheck true only for the final entry written on roll or close, which may use
     *                      the reserved last slot
     * @throws IllegalStateException  if the index is full (honouring {@code skipFullCheck}), read-only or closed
     * @throws InvalidOffsetException if the index is not empty and {@code offset} is below the last entry's offset
     */
    public void maybeAppend(long timestamp, long offset, boolean skipFullCheck) {
        ReentrantLock lock = mutationLock();
        lock.lock();
        try {
            requireOpenAndWritable();
            if (!skipFullCheck && isFull()) {
                throw new IllegalStateException("time index is full: entries=" + entries() + ", maxEntries=" + maxEntries()
                    + " (last slot reserved for roll), file=" + file());
            }
            TimestampOffset last = lastEntry;
            if (entries() > 0 && offset < last.offset()) {
                throw new InvalidOffsetException("offsets must not decrease: appending offset=" + offset + " at slot " + entries()
                    + " after lastOffset=" + last.offset() + " in " + file());
            }
            if (timestamp > last.timestamp()) {
                append(timestamp, offset);
            }
        } finally {
            lock.unlock();
        }
    }

    private void append(long timestamp, long offset) {
        requireAppendable();
        int slot = entries();
        ByteBuffer buffer = writerBuffer();
        buffer.putLong(slot * ENTRY_SIZE_BYTES, timestamp);
        buffer.putInt(slot * ENTRY_SIZE_BYTES + 8, relativeOffset(offset));
        publishAppendedEntry();
        lastEntry = new TimestampOffset(timestamp, offset); // after publishing: a reader that sees it finds its entry
        assert entryAt(buffer, slot).equals(lastEntry) : "entry read back differs at slot " + slot;
    }

    /**
     * The entry with the largest timestamp {@code <= targetTimestamp}, or
     * {@code (NO_TIMESTAMP, baseOffset)} when there is none.
     */
    public TimestampOffset lookup(long targetTimestamp) {
        return read((buffer, entries) -> {
            int count = countKeysBelow(buffer, entries, TimeIndex::timestampAt, targetTimestamp, true);
            return count == 0 ? new TimestampOffset(NO_TIMESTAMP, baseOffset()) : entryAt(buffer, count - 1);
        });
    }

    /** The {@code n}th entry, 0-based. @throws IllegalArgumentException if {@code n} is not below {@link #entries()} */
    public TimestampOffset entry(int n) {
        return read((buffer, entries) -> {
            requireValidSlot(n, entries);
            return entryAt(buffer, n);
        });
    }

    /** The last entry, or {@code (NO_TIMESTAMP, baseOffset)} when empty. */
    public TimestampOffset lastEntry() {
        return lastEntry;
    }

    /** The offset of the last entry, or {@link #baseOffset()} when empty. */
    public long lastOffset() {
        return lastEntry.offset();
    }

    /**
     * Kafka's checks: a non-empty index whose last timestamp is below its first, or whose last
     * offset is below the base offset, or whose length is not a whole number of entries.
     */
    @Override
    public void sanityCheck() {
        super.sanityCheck();
        read((buffer, entries) -> {
            if (entries == 0) {
                return null;
            }
            TimestampOffset last = entryAt(buffer, entries - 1);
            if (last.timestamp() < timestampAt(buffer, 0)) {
                throw new CorruptIndexException("time index last timestamp=" + last.timestamp() + " is below first timestamp="
                    + timestampAt(buffer, 0) + ": entries=" + entries + ", file=" + file());
            }
            if (last.offset() < baseOffset()) {
                throw new CorruptIndexException("time index last offset=" + last.offset() + " is below baseOffset="
                    + baseOffset() + ": file=" + file());
            }
            return null;
        });
    }

    @Override
    long offsetAt(ByteBuffer buffer, int slot) {
        return baseOffset() + buffer.getInt(slot * ENTRY_SIZE_BYTES + 8);
    }

    private static long timestampAt(ByteBuffer buffer, int slot) {
        return buffer.getLong(slot * ENTRY_SIZE_BYTES);
    }

    @Override
    void refreshLastEntry(ByteBuffer buffer, int entries) {
        lastEntry = lastEntryOf(buffer, entries);
    }

    private TimestampOffset lastEntryOf(ByteBuffer buffer, int entries) {
        return entries == 0 ? new TimestampOffset(NO_TIMESTAMP, baseOffset()) : entryAt(buffer, entries - 1);
    }

    private TimestampOffset entryAt(ByteBuffer buffer, int slot) {
        return new TimestampOffset(timestampAt(buffer, slot), offsetAt(buffer, slot));
    }

    @Override
    public String toString() {
        return "TimeIndex(file=" + file() + ", baseOffset=" + baseOffset() + ", entries=" + entries()
            + ", maxEntries=" + maxEntries() + ", lastEntry=" + lastEntry + ")";
    }
}
