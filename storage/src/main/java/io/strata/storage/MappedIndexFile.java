package io.strata.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The machinery shared by the memory-mapped index files, {@link OffsetIndex} and {@link TimeIndex}:
 * a file of fixed-size entries sorted by offset, mapped into memory and searched in place.
 *
 * <h2>File lifecycle</h2>
 * <ul>
 *   <li>A writable index is preallocated: the file is extended (sparsely) to
 *       {@code maxIndexSizeBytes} rounded down to a whole number of entries, so appends never
 *       grow the file and the mapping never moves while the segment is active.</li>
 *   <li>The valid entries are a prefix of the file. The count is kept in memory only; the file
 *       itself does not record it. {@link #trimToValidSize()} (called on roll and by
 *       {@link #close()}) cuts the file to exactly the valid entries, which is how the count
 *       survives a restart: on open, {@code entries = fileLengthBytes / entrySizeBytes}.</li>
 *   <li>A writable index opened on an existing file is re-extended to {@code maxIndexSizeBytes}
 *       (never below its valid entries), unless the file length is not a whole number of
 *       entries: then the file is left alone so that {@link #sanityCheck()} reports it.</li>
 * </ul>
 *
 * <h2>Crash behaviour</h2>
 * Entries are not checksummed and are written to the page cache only, reaching the disk when
 * the OS writes them back or on {@link #flush()}. After a crash an untrimmed index reads as full
 * of entries, the tail of them zeros or stale; the broker never trusts the indexes of segments
 * past the recovery point and rebuilds them from the log.
 *
 * <h2>Thread contract</h2>
 * One writer, many readers. Mutations (append, truncate, resize, close) are serialised by
 * {@code mutationLock}. Lookups take no mutation lock and may run concurrently with an append:
 * <ul>
 *   <li>The writer stores the entry bytes into the mapping first and then publishes the new
 *       count with a volatile write to {@code entries} (release). A reader does a volatile read
 *       of {@code entries} (acquire) before reading any slot, so every slot below the count it
 *       saw is fully written. Readers use absolute gets only, so they share no buffer position
 *       with each other or with the writer. The subclasses' cached last entry is updated after
 *       the count is published, so a reader that sees it will also find its entry.</li>
 *   <li>Anything that replaces or unmaps the mapping, or lowers the count (truncate, reset,
 *       resize, close, delete), also takes the write side of {@code mappingLock}; readers hold
 *       its read side for the whole lookup. So a reader never touches an unmapped buffer (which
 *       would crash the JVM) and never sees slots that a truncation freed and a later append is
 *       rewriting.</li>
 * </ul>
 */
abstract class MappedIndexFile implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(MappedIndexFile.class);

    /**
     * Bytes at the end of the index searched first. Nearly all lookups (followers and consumers
     * reading at the tail) land there, so keeping them inside a couple of pages that every such
     * lookup touches keeps those pages in the page cache; a plain binary search over the whole
     * file would instead touch pages that move with each growth step and may have been evicted.
     * Small enough that the few probes of a warm search touch every page of the warm section on
     * a 4 KiB-page machine.
     */
    static final int WARM_SECTION_BYTES = 8192;

    private static final MethodHandle INVOKE_CLEANER = findInvokeCleaner();

    /** Reads an entry's sort key (an absolute offset or a timestamp) from its slot. */
    @FunctionalInterface
    interface SlotKey {
        long keyAt(ByteBuffer buffer, int slot);
    }

    /** A read-only computation over the published entries. */
    @FunctionalInterface
    interface SlotReader<T> {
        T read(ByteBuffer buffer, int entries);
    }

    private final ReentrantLock mutationLock = new ReentrantLock();
    private final ReentrantReadWriteLock mappingLock = new ReentrantReadWriteLock();
    private final long baseOffset;
    private final int maxIndexSizeBytes;
    private final boolean writable;
    private final int entrySizeBytes;

    private volatile Path file;
    /** Guarded by mappingLock (and mutationLock for replacement); null once closed. */
    private MappedByteBuffer mmap;
    private volatile long fileLengthBytes;
    private volatile int maxEntries;
    /** Published entry count: written after the entry bytes, read before them. */
    private volatile int entries;

    MappedIndexFile(Path file, long baseOffset, int maxIndexSizeBytes, boolean writable, int entrySizeBytes)
            throws IOException {
        this.file = Objects.requireNonNull(file, "file");
        if (baseOffset < 0) {
            throw new IllegalArgumentException("baseOffset must not be negative: baseOffset=" + baseOffset + ", file=" + file);
        }
        if (writable && maxIndexSizeBytes < entrySizeBytes) {
            throw new IllegalArgumentException("maxIndexSizeBytes must hold at least one " + entrySizeBytes
                + "-byte entry: maxIndexSizeBytes=" + maxIndexSizeBytes + ", file=" + file);
        }
        this.baseOffset = baseOffset;
        this.maxIndexSizeBytes = maxIndexSizeBytes;
        this.writable = writable;
        this.entrySizeBytes = entrySizeBytes;
        boolean created = createIfMissing(file);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), writable ? "rw" : "r")) {
            long existingLengthBytes = raf.length();
            if (existingLengthBytes > Integer.MAX_VALUE) {
                throw new CorruptIndexException("index file is larger than 2 GiB: lengthBytes=" + existingLengthBytes + ", file=" + file);
            }
            this.entries = created ? 0 : (int) (existingLengthBytes / entrySizeBytes);
            long lengthBytes = writable ? openLengthBytes(existingLengthBytes) : existingLengthBytes;
            if (lengthBytes != existingLengthBytes) {
                raf.setLength(lengthBytes);
            }
            mapLocked(raf, lengthBytes);
        }
    }

    private static boolean createIfMissing(Path file) throws IOException {
        try {
            Files.createFile(file);
            return true;
        } catch (FileAlreadyExistsException alreadyThere) {
            return false;
        }
    }

    /** The length a writable index is given on open; see the class javadoc. */
    private long openLengthBytes(long existingLengthBytes) {
        if (existingLengthBytes % entrySizeBytes != 0) {
            return existingLengthBytes;
        }
        return Math.max(roundDownToEntries(maxIndexSizeBytes), (long) entries * entrySizeBytes);
    }

    private void mapLocked(RandomAccessFile raf, long lengthBytes) throws IOException {
        FileChannel.MapMode mode = writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY;
        this.mmap = raf.getChannel().map(mode, 0, lengthBytes);
        this.fileLengthBytes = lengthBytes;
        this.maxEntries = (int) (lengthBytes / entrySizeBytes);
    }

    private int roundDownToEntries(int sizeBytes) {
        return Math.max(0, sizeBytes) / entrySizeBytes * entrySizeBytes;
    }

    // ---------------------------------------------------------------- subclass hooks

    /** The absolute offset stored in a slot; entries are sorted by it (non-decreasing). */
    abstract long offsetAt(ByteBuffer buffer, int slot);

    /** Recomputes the subclass's cached last entry after the entry count went down or the file was remapped. */
    abstract void refreshLastEntry(ByteBuffer buffer, int entries);

    // ---------------------------------------------------------------- accessors

    public long baseOffset() {
        return baseOffset;
    }

    public Path file() {
        return file;
    }

    public int entries() {
        return entries;
    }

    public int maxEntries() {
        return maxEntries;
    }

    /** The size the file is preallocated to when writable. */
    public int maxIndexSizeBytes() {
        return maxIndexSizeBytes;
    }

    /** The current length of the file, preallocated slack included. */
    public long lengthBytes() {
        return fileLengthBytes;
    }

    /** Bytes taken by the valid entries. */
    public int sizeInBytes() {
        return entries * entrySizeBytes;
    }

    public boolean isWritable() {
        return writable;
    }

    /** True when no slot is left for another entry. */
    public boolean isFull() {
        return entries >= maxEntries;
    }

    /**
     * Whether {@code offset} can be stored as a relative offset: {@code offset - baseOffset} must
     * lie in [0, {@link Integer#MAX_VALUE}] (Kafka reads the field as a signed 32-bit int).
     */
    public boolean canAppendOffset(long offset) {
        long relative = offset - baseOffset;
        return offset >= baseOffset && relative <= Integer.MAX_VALUE;
    }

    // ---------------------------------------------------------------- writer side

    final ReentrantLock mutationLock() {
        return mutationLock;
    }

    /** The mapping, for the writer; the caller holds the mutation lock and has checked {@link #requireAppendable}. */
    final ByteBuffer writerBuffer() {
        return mmap;
    }

    /** Checks, under the mutation lock, that one more entry can be written. */
    final void requireAppendable() {
        requireOpenAndWritable();
        if (entries >= maxEntries) {
            throw new IllegalStateException("index is full: entries=" + entries + ", maxEntries=" + maxEntries + ", file=" + file);
        }
    }

    final void requireOpenAndWritable() {
        requireOpen();
        if (!writable) {
            throw new IllegalStateException("index is read-only: file=" + file);
        }
    }

    final int relativeOffset(long offset) {
        if (!canAppendOffset(offset)) {
            throw new IllegalArgumentException("offset does not fit a 31-bit relative offset: offset=" + offset
                + ", baseOffset=" + baseOffset + ", file=" + file);
        }
        return (int) (offset - baseOffset);
    }

    /** Makes the entry just written to slot {@code entries} visible to readers (volatile write: release). */
    final void publishAppendedEntry() {
        entries = entries + 1;
    }

    // ---------------------------------------------------------------- reader side

    /** Runs {@code reader} over the published entries while the mapping cannot be replaced or unmapped. */
    final <T> T read(SlotReader<T> reader) {
        mappingLock.readLock().lock();
        try {
            requireOpen();
            int publishedEntries = entries; // volatile read: acquire; slots below it are complete
            return reader.read(mmap, publishedEntries);
        } finally {
            mappingLock.readLock().unlock();
        }
    }

    /**
     * The number of leading entries whose key is below {@code target} ({@code < target}, or
     * {@code <= target} when {@code inclusive}). Keys must be non-decreasing.
     *
     * <p>The last {@link #WARM_SECTION_BYTES} of entries are probed first: one comparison
     * against the first warm entry decides whether the answer lies in the warm section (the
     * common case for tail reads) or in the cold part before it, then a binary search runs on
     * that part only.
     */
    final int countKeysBelow(ByteBuffer buffer, int entryCount, SlotKey key, long target, boolean inclusive) {
        int low = 0;
        int high = entryCount;
        int firstWarmSlot = Math.max(0, entryCount - WARM_SECTION_BYTES / entrySizeBytes);
        if (firstWarmSlot > 0) {
            if (isBelow(key.keyAt(buffer, firstWarmSlot), target, inclusive)) {
                low = firstWarmSlot + 1;
            } else {
                high = firstWarmSlot;
            }
        }
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (isBelow(key.keyAt(buffer, middle), target, inclusive)) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        return low;
    }

    private static boolean isBelow(long key, long target, boolean inclusive) {
        return inclusive ? key <= target : key < target;
    }

    final void requireValidSlot(int slot, int entryCount) {
        if (slot < 0 || slot >= entryCount) {
            throw new IllegalArgumentException("no such index entry: n=" + slot + ", entries=" + entryCount + ", file=" + file);
        }
    }

    private void requireOpen() {
        if (mmap == null) {
            throw new IllegalStateException("index is closed: file=" + file);
        }
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Removes every entry whose offset is {@code >= offset}. Truncating past the last entry has no
     * effect.
     *
     * @throws IllegalStateException if the index is read-only or closed
     */
    public void truncateTo(long offset) {
        lockForRemap();
        try {
            requireOpenAndWritable();
            truncateToEntriesLocked(countKeysBelow(mmap, entries, this::offsetAt, offset, false));
        } finally {
            unlockForRemap();
        }
    }

    /**
     * Removes every entry and re-extends the file to {@code maxIndexSizeBytes}.
     *
     * @throws IllegalStateException if the index is read-only or closed
     */
    public void reset() throws IOException {
        lockForRemap();
        try {
            requireOpenAndWritable();
            truncateToEntriesLocked(0);
            resize(maxIndexSizeBytes);
        } finally {
            unlockForRemap();
        }
    }

    private void truncateToEntriesLocked(int newEntries) {
        if (newEntries < entries) {
            entries = newEntries;
            refreshLastEntry(mmap, newEntries);
        }
    }

    /** Cuts the file to exactly the valid entries. A no-op on a read-only or closed index. */
    public void trimToValidSize() throws IOException {
        mutationLock.lock();
        try {
            if (writable && mmap != null) {
                resize(sizeInBytes());
            }
        } finally {
            mutationLock.unlock();
        }
    }

    /**
     * Changes the file length to {@code newSizeBytes} rounded down to a whole number of entries and
     * remaps it. Valid entries are kept; shrinking below them is refused. If the remap fails with
     * an {@link IOException} the index is left closed.
     *
     * @return whether the length changed
     */
    public boolean resize(int newSizeBytes) throws IOException {
        lockForRemap();
        try {
            requireOpen();
            if (!writable) {
                throw new IllegalStateException("cannot resize a read-only index: newSizeBytes=" + newSizeBytes + ", file=" + file);
            }
            int roundedSizeBytes = roundDownToEntries(newSizeBytes);
            if (roundedSizeBytes < sizeInBytes()) {
                throw new IllegalArgumentException("cannot resize below the valid entries: newSizeBytes=" + newSizeBytes
                    + ", sizeInBytes=" + sizeInBytes() + ", entries=" + entries + ", file=" + file);
            }
            if (roundedSizeBytes == fileLengthBytes) {
                return false;
            }
            unmapLocked();
            try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                raf.setLength(roundedSizeBytes);
                mapLocked(raf, roundedSizeBytes);
            }
            refreshLastEntry(mmap, entries);
            return true;
        } finally {
            unlockForRemap();
        }
    }

    /** Forces the mapped entries to disk. A no-op on a read-only or closed index. */
    public void flush() {
        mutationLock.lock();
        try {
            if (writable && mmap != null) {
                mmap.force();
            }
        } finally {
            mutationLock.unlock();
        }
    }

    /** Trims the file to its valid entries, then unmaps it. Idempotent; any later lookup or append throws. */
    @Override
    public void close() throws IOException {
        lockForRemap();
        try {
            trimToValidSize();
        } finally {
            unmapLocked();
            unlockForRemap();
        }
    }

    /**
     * Closes the file without writing to it (no trim): what a failed log directory's logs get, as
     * Kafka's {@code closeHandler}. The preallocated tail is left for the next start's sanity check.
     */
    public void closeHandler() {
        lockForRemap();
        try {
            unmapLocked();
        } finally {
            unlockForRemap();
        }
    }

    /** Moves the file (atomically where the file system allows); the mapping stays valid. */
    public void renameTo(Path target) throws IOException {
        mutationLock.lock();
        try {
            try {
                Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException notAtomic) {
                Files.move(file, target, StandardCopyOption.REPLACE_EXISTING);
            }
            file = target;
        } finally {
            mutationLock.unlock();
        }
    }

    /** Unmaps without trimming and deletes the file. @return whether a file was deleted */
    public boolean deleteIfExists() throws IOException {
        lockForRemap();
        try {
            unmapLocked();
            return Files.deleteIfExists(file);
        } finally {
            unlockForRemap();
        }
    }

    /**
     * Checks the invariants that can be checked without the log: the file is a whole number of
     * entries (subclasses add their own checks).
     *
     * @throws CorruptIndexException naming the file and the offending values
     */
    public void sanityCheck() {
        if (fileLengthBytes % entrySizeBytes != 0) {
            throw new CorruptIndexException("index file length is not a multiple of " + entrySizeBytes
                + " bytes: lengthBytes=" + fileLengthBytes + ", file=" + file);
        }
    }

    private void lockForRemap() {
        mutationLock.lock();
        mappingLock.writeLock().lock();
    }

    private void unlockForRemap() {
        mappingLock.writeLock().unlock();
        mutationLock.unlock();
    }

    private void unmapLocked() {
        MappedByteBuffer buffer = mmap;
        mmap = null;
        if (buffer != null && INVOKE_CLEANER != null) {
            try {
                INVOKE_CLEANER.invokeExact((ByteBuffer) buffer);
            } catch (Throwable failure) {
                LOG.warn("Could not unmap index {}; the garbage collector will", file, failure);
            }
        }
    }

    /**
     * Unmapping eagerly, rather than waiting for the garbage collector, keeps address space and
     * file handles bounded when many segments roll. The JDK offers no public API for it; the
     * supported-but-unofficial {@code sun.misc.Unsafe.invokeCleaner} is it. If it is missing the
     * mapping is simply left to the collector.
     */
    private static MethodHandle findInvokeCleaner() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            MethodHandle invokeCleaner = MethodHandles.lookup().findVirtual(unsafeClass, "invokeCleaner",
                MethodType.methodType(void.class, ByteBuffer.class));
            return invokeCleaner.bindTo(theUnsafe.get(null));
        } catch (ReflectiveOperationException | RuntimeException unavailable) {
            LOG.warn("Eager unmapping of index files is unavailable; relying on the garbage collector", unavailable);
            return null;
        }
    }
}
