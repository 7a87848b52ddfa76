package io.strata.storage;

import io.strata.protocol.Writable;
import io.strata.protocol.records.CorruptRecordException;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Records;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.NoSuchElementException;

import static io.strata.protocol.records.RecordBatchDescriptor.BASE_OFFSET_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LAST_OFFSET_DELTA_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LOG_OVERHEAD;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V2;
import static io.strata.protocol.records.RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.MIN_BATCH_LENGTH;
import static io.strata.protocol.records.RecordBatchDescriptor.PARTITION_LEADER_EPOCH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.RECORD_BATCH_OVERHEAD;

/**
 * The record bytes of a segment's {@code .log} file, or a slice of them. The file holds
 * RecordBatch v2 bytes exactly as they were appended (offsets already assigned), one after
 * another, with no other framing.
 *
 * <p>A slice is what a Fetch reads: the network layer sends it straight from the file
 * ({@link #channel()}, {@link #position()}) where it can, without copying it through the
 * heap; {@link #writeTo} is the copying fallback.
 *
 * <p>Thread-safety: appends and truncation happen under the partition lock (one writer);
 * readers take slices concurrently and only ever see bytes below the published size, which
 * is volatile and updated after the write completes.
 */
public final class FileRecords implements Records, Closeable {
    private final Path file;
    private final FileChannel channel;
    private final int start;
    private final boolean isSlice;
    private final int sliceSize;
    private volatile int size;
    private volatile Path currentFile;

    private FileRecords(Path file, FileChannel channel, int start, int size, boolean isSlice) {
        this.file = file;
        this.currentFile = file;
        this.channel = channel;
        this.start = start;
        this.isSlice = isSlice;
        this.sliceSize = size;
        this.size = size;
    }

    /** Opens (creating if needed) a whole log file; its size is the file's length. */
    public static FileRecords open(Path file) throws IOException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        long length = channel.size();
        if (length > Integer.MAX_VALUE) {
            channel.close();
            throw new IOException("segment file larger than 2 GiB: " + file + " length=" + length);
        }
        return new FileRecords(file, channel, 0, (int) length, false);
    }

    public Path file() {
        return currentFile;
    }

    public FileChannel channel() {
        return channel;
    }

    /** The file position where this view starts. */
    public int position() {
        return start;
    }

    @Override
    public int sizeInBytes() {
        return isSlice ? sliceSize : size;
    }

    /**
     * Appends whole batches and returns the bytes written. The write is complete (looped) before
     * the new size is published to readers.
     */
    public int append(MemoryRecords records) throws IOException {
        if (isSlice) {
            throw new IllegalStateException("cannot append to a slice of " + file);
        }
        ByteBuffer buffer = records.buffer();
        int written = buffer.remaining();
        if ((long) size + written > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("append of " + written + " bytes would overflow the 2 GiB segment " + file + " of size " + size);
        }
        long position = size;
        while (buffer.hasRemaining()) {
            position += channel.write(buffer, position);
        }
        size += written;
        return written;
    }

    public void flush() throws IOException {
        channel.force(true);
    }

    /** A view of {@code length} bytes from {@code position} (relative to this view), clipped to the end. */
    public FileRecords slice(int position, int length) {
        int available = sizeInBytes() - position;
        if (position < 0 || available < 0) {
            throw new IllegalArgumentException("slice position " + position + " outside " + file + " of size " + sizeInBytes());
        }
        return new FileRecords(file, channel, start + position, Math.min(length, available), true);
    }

    /** Reads this view's bytes into a heap buffer (the copying path for non-zero-copy transports). */
    public ByteBuffer readAll() {
        ByteBuffer buffer = ByteBuffer.allocate(sizeInBytes());
        readFully(buffer, start);
        return buffer.flip();
    }

    @Override
    public void writeTo(Writable writer) {
        writer.writeByteBuffer(readAll());
    }

    /**
     * Truncates the file to {@code targetSize} bytes; returns the bytes removed.
     */
    public int truncateTo(int targetSize) throws IOException {
        int originalSize = size;
        if (targetSize > originalSize || targetSize < 0) {
            throw new IllegalArgumentException("cannot truncate " + file + " of size " + originalSize + " to " + targetSize);
        }
        if (targetSize < channel.size()) {
            channel.truncate(targetSize);
        }
        size = targetSize;
        return originalSize - targetSize;
    }

    public void renameTo(Path target) throws IOException {
        Files.move(currentFile, target, StandardCopyOption.ATOMIC_MOVE);
        currentFile = target;
    }

    @Override
    public void close() throws IOException {
        if (!isSlice) {
            channel.close();
        }
    }

    public boolean deleteIfExists() throws IOException {
        close();
        return Files.deleteIfExists(currentFile);
    }

    void readFully(ByteBuffer buffer, long position) {
        try {
            long at = position;
            while (buffer.hasRemaining()) {
                int read = channel.read(buffer, at);
                if (read < 0) {
                    throw new EOFException("unexpected end of " + currentFile + " at " + at);
                }
                at += read;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ---------------------------------------------------------------- batch headers

    /**
     * A batch as found in the file: its header fields, read without loading the records.
     * {@link #load()} reads the whole batch for validation or record-level work.
     */
    public final class FileBatch {
        private final int position;
        private final ByteBuffer header;

        FileBatch(int position, ByteBuffer header) {
            this.position = position;
            this.header = header;
        }

        /** File position (relative to this view) of the batch's first byte. */
        public int position() {
            return position;
        }

        public long baseOffset() {
            return header.getLong(BASE_OFFSET_OFFSET);
        }

        public long lastOffset() {
            return baseOffset() + header.getInt(LAST_OFFSET_DELTA_OFFSET);
        }

        public long nextOffset() {
            return lastOffset() + 1;
        }

        public int sizeInBytes() {
            return LOG_OVERHEAD + header.getInt(LENGTH_OFFSET);
        }

        public byte magic() {
            return header.get(MAGIC_OFFSET);
        }

        public long maxTimestamp() {
            return header.getLong(MAX_TIMESTAMP_OFFSET);
        }

        public int partitionLeaderEpoch() {
            return header.getInt(PARTITION_LEADER_EPOCH_OFFSET);
        }

        /** Reads the whole batch into the heap. */
        public DefaultRecordBatch load() {
            ByteBuffer buffer = ByteBuffer.allocate(sizeInBytes());
            readFully(buffer, (long) start + position);
            return DefaultRecordBatch.wrap(buffer.flip());
        }
    }

    /**
     * Iterates batch headers from {@code startPosition}. Ends quietly at a truncated tail
     * (fewer bytes left than the header or than the batch claims); a length field below the
     * smallest batch, or a magic other than 2, throws {@link CorruptRecordException}, which
     * recovery turns into truncation.
     */
    public Iterable<FileBatch> batchesFrom(int startPosition) {
        return () -> new Iterator<>() {
            private int position = startPosition;
            private FileBatch next;

            @Override
            public boolean hasNext() {
                if (next == null) {
                    next = readBatchHeader(position);
                    if (next != null) {
                        position += next.sizeInBytes();
                    }
                }
                return next != null;
            }

            @Override
            public FileBatch next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                FileBatch batch = next;
                next = null;
                return batch;
            }
        };
    }

    private FileBatch readBatchHeader(int position) {
        int end = sizeInBytes();
        if (position + RECORD_BATCH_OVERHEAD > end) {
            return null;
        }
        ByteBuffer header = ByteBuffer.allocate(RECORD_BATCH_OVERHEAD);
        readFully(header, (long) start + position);
        header.flip();
        int length = header.getInt(LENGTH_OFFSET);
        if (length < MIN_BATCH_LENGTH) {
            throw new CorruptRecordException("batch length " + length + " below the minimum " + MIN_BATCH_LENGTH + " at position "
                + position + " of " + currentFile);
        }
        if (header.get(MAGIC_OFFSET) != MAGIC_V2) {
            throw new CorruptRecordException("unsupported magic " + header.get(MAGIC_OFFSET) + " at position " + position + " of " + currentFile);
        }
        if ((long) position + LOG_OVERHEAD + length > end) {
            return null;
        }
        return new FileBatch(position, header);
    }

    /**
     * The first batch at or after {@code startingPosition} whose last offset is at least
     * {@code targetOffset}, or null if there is none.
     */
    public FileBatch searchForOffset(long targetOffset, int startingPosition) {
        for (FileBatch batch : batchesFrom(startingPosition)) {
            if (batch.lastOffset() >= targetOffset) {
                return batch;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "FileRecords(" + currentFile + ", start=" + start + ", size=" + sizeInBytes() + ")";
    }
}
