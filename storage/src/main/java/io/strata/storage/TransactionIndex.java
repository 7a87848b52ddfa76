package io.strata.storage;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The {@code .txnindex} file of a log segment: the transactions aborted by markers written in
 * this segment, which READ_COMMITTED fetches return so that consumers can drop aborted records.
 * Byte-identical to Apache Kafka's transaction index, so Kafka's {@code kafka-dump-log} reads it.
 *
 * <h2>Entry layout (34 bytes, big-endian)</h2>
 * <pre>
 *   0         2               10              18              26              34
 *   +---------+---------------+---------------+---------------+---------------+
 *   | version |  producer id  | first offset  |  last offset  | last stable   |
 *   |  (i16)  |     (i64)     |     (i64)     |     (i64)     | offset (i64)  |
 *   +---------+---------------+---------------+---------------+---------------+
 *   version          = 0
 *   first offset     = offset of the transaction's first record (possibly in an earlier segment)
 *   last offset      = offset of the abort marker, in this segment
 *   last stable      = the partition's last stable offset when the marker was written
 * </pre>
 * The file has no header; entries are in marker order, so last offsets strictly increase.
 *
 * <h2>Allocation and crash behaviour</h2>
 * Not preallocated and not memory-mapped: each append writes one entry at the end of the file
 * through a {@link FileChannel}. The file is created by the first append, so most segments have
 * none. Entries are not checksummed; a crash may leave a partial entry at the end, which readers
 * ignore and {@link #sanityCheck()} reports. Segments past the recovery point have their
 * transaction index rebuilt from the log.
 *
 * <h2>Thread contract</h2>
 * Thread-safe. Reads ({@link #allAbortedTxns()}, {@link #collectAbortedTxns}) share the read side
 * of a read-write lock and use positional reads only; every mutation takes the write side.
 * Aborts are rare, so appends briefly waiting for a fetch to finish reading is acceptable. A
 * channel closed under a reader by thread interruption is reopened by the next access.
 */
public final class TransactionIndex implements Closeable {
    public static final int ENTRY_SIZE_BYTES = 34;
    public static final short CURRENT_VERSION = 0;
    /** Byte position of the lastOffset field within an entry: after version (2), producer id (8), first offset (8). */
    private static final int LAST_OFFSET_FIELD_POSITION = 18;
    /** Entries read per positional read when scanning. */
    private static final int ENTRIES_PER_READ = 128;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final long startOffset;
    private volatile Path file;
    /** Guarded by {@code this}; null until the file exists. */
    private FileChannel channel;
    /** Guarded by lock; the end of the last whole entry. */
    private long validSizeBytes;
    /** Guarded by lock; the last entry's lastOffset, empty when there is none. */
    private OptionalLong lastOffset = OptionalLong.empty();
    private boolean closed;

    /**
     * Opens the index of the segment starting at {@code startOffset}; the file is created only by
     * the first {@link #append}.
     */
    public TransactionIndex(long startOffset, Path file) throws IOException {
        this.startOffset = startOffset;
        this.file = Objects.requireNonNull(file, "file");
        if (Files.exists(file)) {
            openChannel();
            validSizeBytes = channel.size() / ENTRY_SIZE_BYTES * ENTRY_SIZE_BYTES;
            lastOffset = validSizeBytes == 0 ? OptionalLong.empty()
                : OptionalLong.of(readLastOffsetField(validSizeBytes - ENTRY_SIZE_BYTES));
        }
    }

    public long startOffset() {
        return startOffset;
    }

    public Path file() {
        return file;
    }

    /**
     * Appends an aborted transaction.
     *
     * @throws IllegalArgumentException if {@code txn.lastOffset()} does not exceed the previous
     *                                  entry's, or its first offset is after its last
     */
    public void append(AbortedTxn txn) throws IOException {
        lock.writeLock().lock();
        try {
            requireOpen();
            if (lastOffset.isPresent() && txn.lastOffset() <= lastOffset.getAsLong()) {
                throw new IllegalArgumentException("aborted transactions must have increasing last offsets: appending lastOffset="
                    + txn.lastOffset() + " after lastOffset=" + lastOffset.getAsLong() + " in " + file);
            }
            if (txn.firstOffset() > txn.lastOffset()) {
                throw new IllegalArgumentException("aborted transaction starts after it ends: firstOffset=" + txn.firstOffset()
                    + ", lastOffset=" + txn.lastOffset() + ", producerId=" + txn.producerId() + ", file=" + file);
            }
            ByteBuffer entry = encode(txn);
            FileChannel target = channel();
            while (entry.hasRemaining()) {
                target.write(entry, validSizeBytes + entry.position());
            }
            validSizeBytes += ENTRY_SIZE_BYTES;
            lastOffset = OptionalLong.of(txn.lastOffset());
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Every entry, in file order. */
    public List<AbortedTxn> allAbortedTxns() {
        List<AbortedTxn> result = new ArrayList<>();
        scan(entry -> {
            result.add(entry);
            return true;
        });
        return result;
    }

    /**
     * The aborted transactions overlapping the fetch range {@code [fetchOffset, upperBoundOffset)}:
     * those with {@code lastOffset >= fetchOffset} and {@code firstOffset < upperBoundOffset}.
     *
     * <p>The search is complete, and stops, at the first entry whose last stable offset is
     * {@code >= upperBoundOffset}: every transaction that began before that LSO had already
     * finished when the marker was written, so no marker in this or a later segment can belong
     * to a transaction starting inside the range. (The entry's own last offset is not a valid
     * stopping rule: another producer's transaction may start inside the range and abort later.)
     */
    public TxnIndexSearchResult collectAbortedTxns(long fetchOffset, long upperBoundOffset) {
        List<AbortedTxn> overlapping = new ArrayList<>();
        boolean[] complete = {false};
        scan(entry -> {
            if (entry.lastOffset() >= fetchOffset && entry.firstOffset() < upperBoundOffset) {
                overlapping.add(entry);
            }
            complete[0] = entry.lastStableOffset() >= upperBoundOffset;
            return !complete[0];
        });
        return new TxnIndexSearchResult(overlapping, complete[0]);
    }

    /** Removes every entry whose lastOffset is {@code >= offset}. */
    public void truncateTo(long offset) throws IOException {
        lock.writeLock().lock();
        try {
            requireOpen();
            long[] newSizeBytes = {0};
            OptionalLong[] newLastOffset = {OptionalLong.empty()};
            scanLocked(entry -> {
                if (entry.lastOffset() >= offset) {
                    return false;
                }
                newSizeBytes[0] += ENTRY_SIZE_BYTES;
                newLastOffset[0] = OptionalLong.of(entry.lastOffset());
                return true;
            });
            truncateFileTo(newSizeBytes[0]);
            lastOffset = newLastOffset[0];
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Removes every entry. */
    public void reset() throws IOException {
        lock.writeLock().lock();
        try {
            requireOpen();
            truncateFileTo(0);
            lastOffset = OptionalLong.empty();
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void truncateFileTo(long sizeBytes) throws IOException {
        if (channel != null) {
            channel().truncate(sizeBytes);
        }
        validSizeBytes = sizeBytes;
    }

    /** Forces written entries to disk. */
    public void flush() throws IOException {
        lock.writeLock().lock();
        try {
            synchronized (this) {
                if (channel != null && channel.isOpen()) {
                    channel.force(true);
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Closes the file. Idempotent; later reads and appends throw {@link IllegalStateException}. */
    @Override
    public void close() throws IOException {
        lock.writeLock().lock();
        try {
            closed = true;
            closeChannel();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Moves the file, if it exists (atomically where the file system allows). */
    public void renameTo(Path target) throws IOException {
        lock.writeLock().lock();
        try {
            if (Files.exists(file)) {
                try {
                    Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException notAtomic) {
                    Files.move(file, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            file = target;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Closes and deletes the file. @return whether a file was deleted */
    public boolean deleteIfExists() throws IOException {
        lock.writeLock().lock();
        try {
            closed = true;
            closeChannel();
            return Files.deleteIfExists(file);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Checks that the file is a whole number of entries, every entry has version 0, and no entry's
     * last offset is below the segment's start offset (Kafka's check).
     *
     * @throws CorruptIndexException naming the file and the offending values
     */
    public void sanityCheck() {
        lock.readLock().lock();
        try {
            long fileSizeBytes = channel == null ? 0 : channel().size();
            if (fileSizeBytes % ENTRY_SIZE_BYTES != 0) {
                throw new CorruptIndexException("transaction index length is not a multiple of " + ENTRY_SIZE_BYTES
                    + " bytes: lengthBytes=" + fileSizeBytes + ", file=" + file);
            }
            scanLocked(entry -> {
                if (entry.lastOffset() < startOffset) {
                    throw new CorruptIndexException("aborted transaction " + entry + " has lastOffset below the segment's startOffset="
                        + startOffset + ": file=" + file);
                }
                return true;
            });
        } catch (IOException e) {
            throw new UncheckedIOException("failed to read transaction index " + file, e);
        } finally {
            lock.readLock().unlock();
        }
    }

    // ---------------------------------------------------------------- reading

    /** Visits entries in order until the visitor returns false. */
    @FunctionalInterface
    private interface EntryVisitor {
        boolean visit(AbortedTxn entry);
    }

    private void scan(EntryVisitor visitor) {
        lock.readLock().lock();
        try {
            requireOpen();
            scanLocked(visitor);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The caller holds either side of the lock. */
    private void scanLocked(EntryVisitor visitor) {
        long sizeBytes = validSizeBytes;
        ByteBuffer chunk = ByteBuffer.allocate((int) Math.min(sizeBytes, (long) ENTRIES_PER_READ * ENTRY_SIZE_BYTES));
        for (long chunkStart = 0; chunkStart < sizeBytes; chunkStart += chunk.capacity()) {
            chunk.clear().limit((int) Math.min(chunk.capacity(), sizeBytes - chunkStart));
            readFully(chunk, chunkStart);
            chunk.flip();
            while (chunk.hasRemaining()) {
                if (!visitor.visit(decode(chunk, chunkStart + chunk.position()))) {
                    return;
                }
            }
        }
    }

    /** Reads only the lastOffset field, so that opening a corrupt file succeeds and {@link #sanityCheck()} reports it. */
    private long readLastOffsetField(long entryPositionBytes) {
        ByteBuffer buffer = ByteBuffer.allocate(Long.BYTES);
        readFully(buffer, entryPositionBytes + LAST_OFFSET_FIELD_POSITION);
        return buffer.flip().getLong();
    }

    private void readFully(ByteBuffer buffer, long positionBytes) {
        try {
            FileChannel source = channel();
            while (buffer.hasRemaining()) {
                if (source.read(buffer, positionBytes + buffer.position()) < 0) {
                    throw new EOFException("transaction index ended early: position=" + (positionBytes + buffer.position())
                        + ", validSizeBytes=" + validSizeBytes + ", file=" + file);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("failed to read transaction index " + file, e);
        }
    }

    private AbortedTxn decode(ByteBuffer buffer, long positionBytes) {
        short version = buffer.getShort();
        if (version != CURRENT_VERSION) {
            throw new CorruptIndexException("unknown aborted transaction entry version=" + version + " at position="
                + positionBytes + ", file=" + file);
        }
        return new AbortedTxn(buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong());
    }

    private static ByteBuffer encode(AbortedTxn txn) {
        ByteBuffer entry = ByteBuffer.allocate(ENTRY_SIZE_BYTES);
        entry.putShort(CURRENT_VERSION)
            .putLong(txn.producerId())
            .putLong(txn.firstOffset())
            .putLong(txn.lastOffset())
            .putLong(txn.lastStableOffset());
        return entry.flip();
    }

    // ---------------------------------------------------------------- channel

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("transaction index is closed: file=" + file);
        }
    }

    /**
     * The open channel, opening (creating the file) on first use and reopening after an
     * interrupted thread closed it under a read.
     */
    private synchronized FileChannel channel() throws IOException {
        if (channel == null || !channel.isOpen()) {
            requireOpen();
            openChannel();
        }
        return channel;
    }

    private synchronized void openChannel() throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    private synchronized void closeChannel() throws IOException {
        if (channel != null) {
            channel.close();
            channel = null;
        }
    }

    @Override
    public String toString() {
        return "TransactionIndex(file=" + file + ", startOffset=" + startOffset + ")";
    }
}
