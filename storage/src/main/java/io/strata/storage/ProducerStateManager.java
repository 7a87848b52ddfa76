package io.strata.storage;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.DefaultRecordBatch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * Per-partition state of idempotent and transactional producers: for each producer id its
 * epoch, its last five batches (to recognise retried duplicates) and its open transaction;
 * plus the set of open transactions, which bounds the last stable offset.
 *
 * <p>Validation follows Kafka's rules for writes from clients: a batch from an older epoch is
 * refused with INVALID_PRODUCER_EPOCH; in a new epoch of a known producer the first sequence
 * must be 0; otherwise the batch must continue the last sequence exactly. Both sequence errors
 * are OUT_OF_ORDER_SEQUENCE_NUMBER. Duplicates are detected by the caller with
 * {@link ProducerStateEntry#findDuplicateBatch} before validation, and answered with the
 * original offsets.
 *
 * <p>A producer the partition has no state for (its state expired after
 * {@code producer.id.expiration.ms}, or it never wrote here) may start at any sequence, as in
 * Kafka since KIP-360 (2.5): an idle idempotent producer keeps its id and epoch and simply
 * continues its sequence after expiry. The one exception is a partition whose log has never
 * held a record (the batch's base offset is 0): there only sequence 0 is accepted and anything
 * else is OUT_OF_ORDER_SEQUENCE_NUMBER, as in Kafka 4.5 (KAFKA-15591). Otherwise a later
 * request that overtook an earlier one refused while the partition was being created would be
 * appended, and the earlier one could never be, as its sequences then lie behind the last one.
 *
 * <h2>Expiry</h2>
 * {@link #removeExpiredProducers} forgets a producer whose last batch or marker timestamp is
 * {@code producer.id.expiration.ms} or more in the past and that has no open transaction; the
 * log manager calls it every {@code producer.id.expiration.check.interval.ms}. Its retried
 * duplicates are no longer recognised after that, as in Kafka.
 *
 * <h2>Snapshot file ({@code <20-digit offset>.snapshot})</h2>
 * Kafka's producer snapshot, version 1, big-endian:
 * <pre>
 *  version i16 = 1 | crc u32 (CRC32C of every byte after it) | entry count i32 |
 *  entries: producerId i64 | epoch i16 | lastSequence i32 | lastOffset i64 | offsetDelta i32 |
 *           timestamp i64 | coordinatorEpoch i32 | currentTxnFirstOffset i64 (-1: none)
 * </pre>
 * The file name is the log offset up to which the snapshot covers the log; the log replays
 * batches from there on load.
 *
 * <h2>Writing a snapshot, and crashes</h2>
 * In three steps, so that the slow one runs off the partition lock (a segment roll happens on
 * the append path):
 * <ol>
 *   <li>{@link #captureSnapshot} (under the lock): the state's bytes, in memory;</li>
 *   <li>{@link #writeSnapshotFile} (no lock): to {@code <name>.snapshot.<n>.tmp}, fsynced;</li>
 *   <li>{@link #publishSnapshot} (under the lock): renamed atomically to {@code <name>.snapshot}
 *       unless a truncation or a deletion of older snapshots happened since the capture (then
 *       the temp file is deleted: the state no longer matches the log), then the directory is
 *       fsynced so the rename survives a crash.</li>
 * </ol>
 * A crash at any point leaves either no file for the snapshot or a complete, fsynced one: temp
 * files are removed by the loader, and a snapshot is never visible (listed, loaded, counted as
 * the newest) before its bytes are durable. The log flushes the rolled segment, which moves the
 * recovery point past the snapshot's offset, only after the snapshot is published.
 *
 * <p>Not thread-safe: guarded by the partition lock, except {@link #writeSnapshotFile}.
 */
public final class ProducerStateManager {
    public static final String SNAPSHOT_SUFFIX = ".snapshot";
    private static final short SNAPSHOT_VERSION = 1;
    private static final int SNAPSHOT_ENTRY_BYTES = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;
    private static final int SNAPSHOT_HEADER_BYTES = 2 + 4 + 4;

    private final TopicPartition topicPartition;
    private volatile Path logDir;
    /** Volatile: a dynamic producer.id.expiration.ms is set from the metadata thread ({@link #setProducerIdExpirationMs}). */
    private volatile long producerIdExpirationMs;
    private final Map<Long, ProducerStateEntry> producers = new HashMap<>();
    /** Open transactions by first offset. */
    private final TreeMap<Long, Long> ongoingTxns = new TreeMap<>();
    private long mapEndOffset;
    /** Bumped by every change that makes a captured, unpublished snapshot wrong (truncation, a moved directory). */
    private long snapshotGeneration;
    /** Snapshots below this offset were deleted (log start moved): a capture below it is not published. */
    private long snapshotsDeletedBelow = Long.MIN_VALUE;
    private final java.util.concurrent.atomic.AtomicLong tempFileSequence = new java.util.concurrent.atomic.AtomicLong();
    /** Test seam: runs just before a snapshot's temp file is fsynced. */
    private volatile Runnable beforeSnapshotFsync = () -> { };

    public ProducerStateManager(TopicPartition topicPartition, Path logDir, long producerIdExpirationMs) {
        this.topicPartition = topicPartition;
        this.logDir = logDir;
        this.producerIdExpirationMs = producerIdExpirationMs;
    }

    /** A new producer.id.expiration.ms, used from the next expiry check on (Kafka's DynamicProducerStateManagerConfig). */
    public void setProducerIdExpirationMs(long producerIdExpirationMs) {
        this.producerIdExpirationMs = producerIdExpirationMs;
    }

    void updateDir(Path newDir) {
        this.logDir = newDir;
        snapshotGeneration++;
    }

    /** The offset up to which the state reflects the log. */
    public long mapEndOffset() {
        return mapEndOffset;
    }

    public void updateMapEndOffset(long offset) {
        this.mapEndOffset = offset;
    }

    public ProducerStateEntry lastEntry(long producerId) {
        return producers.get(producerId);
    }

    public Map<Long, ProducerStateEntry> activeProducers() {
        return Collections.unmodifiableMap(producers);
    }

    /** The first offset of the oldest open transaction, if any: nothing at or past it is stable. */
    public OptionalLong firstUnstableOffset() {
        return ongoingTxns.isEmpty() ? OptionalLong.empty() : OptionalLong.of(ongoingTxns.firstKey());
    }

    // ---------------------------------------------------------------- appends

    /**
     * Checks a batch of a producer against its state and, if valid, records it. The batch's
     * offsets must already be assigned.
     *
     * @param fromClient true for a leader append of a client's write (sequence rules apply);
     *                   false for replication and recovery (the log is authoritative)
     * @throws ErrorCodeException with INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER or
     *                            INVALID_TXN_STATE
     */
    public void validate(DefaultRecordBatch batch, boolean fromClient) {
        ProducerStateEntry current = producers.get(batch.producerId());
        short epoch = batch.producerEpoch();
        if (current != null && epoch < current.producerEpoch && fromClient) {
            throw new ErrorCodeException(ErrorCode.INVALID_PRODUCER_EPOCH, "Epoch of producer " + batch.producerId() + " at offset "
                + batch.baseOffset() + " in " + topicPartition + " is " + epoch + ", which is smaller than the last seen epoch " + current.producerEpoch);
        }
        if (fromClient && !batch.isControlBatch()) {
            checkSequence(batch, current);
        }
        if (fromClient && !batch.isTransactional() && !batch.isControlBatch() && current != null
            && current.currentTxnFirstOffset.isPresent() && epoch == current.producerEpoch) {
            throw new ErrorCodeException(ErrorCode.INVALID_TXN_STATE, "Expected a transactional write from producer " + batch.producerId()
                + " in " + topicPartition + ": its transaction opened at offset " + current.currentTxnFirstOffset.getAsLong() + " is still open");
        }
    }

    private void checkSequence(DefaultRecordBatch batch, ProducerStateEntry current) {
        int firstSeq = batch.baseSequence();
        short epoch = batch.producerEpoch();
        short currentEpoch = current == null ? ProducerStateEntry.NO_EPOCH : current.producerEpoch;
        if (epoch != currentEpoch) {
            if (firstSeq != 0 && currentEpoch != ProducerStateEntry.NO_EPOCH) {
                throw new ErrorCodeException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "Invalid sequence " + firstSeq + " for new epoch "
                    + epoch + " of producer " + batch.producerId() + " in " + topicPartition + ": a new epoch starts at 0");
            }
            // Offsets are assigned already, so base offset 0 means the log has never held a record.
            if (firstSeq != 0 && batch.baseOffset() == 0) {
                throw new ErrorCodeException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "Invalid sequence " + firstSeq + " for producer "
                    + batch.producerId() + " in " + topicPartition + ", which has never held a record: its first batch must start at 0");
            }
            return;
        }
        int lastSeq = current.lastSeq();
        boolean inSequence = firstSeq == lastSeq + 1 || (firstSeq == 0 && lastSeq == Integer.MAX_VALUE)
            || (lastSeq == ProducerStateEntry.NO_SEQUENCE && firstSeq == 0);
        if (!inSequence) {
            throw new ErrorCodeException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "Out of order sequence for producer " + batch.producerId()
                + " in " + topicPartition + " at offset " + batch.baseOffset() + ": expected " + (lastSeq + 1) + " (epoch " + epoch
                + "), got " + firstSeq);
        }
    }

    /**
     * Records a data batch that has been (or is being) appended. For transactional batches
     * opens the producer's transaction at the batch's base offset if none is open.
     */
    public void recordDataBatch(DefaultRecordBatch batch) {
        long producerId = batch.producerId();
        ProducerStateEntry entry = producers.computeIfAbsent(producerId, ProducerStateEntry::empty);
        if (batch.producerEpoch() != entry.producerEpoch) {
            entry.coordinatorEpoch = entry.producerEpoch == ProducerStateEntry.NO_EPOCH ? -1 : entry.coordinatorEpoch;
        }
        entry.addBatch(batch.producerEpoch(), batch.baseSequence(), batch.lastSequence(), batch.lastOffset(),
            (int) (batch.lastOffset() - batch.baseOffset()), batch.maxTimestamp());
        if (batch.isTransactional() && entry.currentTxnFirstOffset.isEmpty()) {
            entry.currentTxnFirstOffset = OptionalLong.of(batch.baseOffset());
            ongoingTxns.put(batch.baseOffset(), producerId);
        }
    }

    /** A transaction completed by a commit or abort marker at {@code markerOffset}. */
    public record CompletedTxn(long producerId, long firstOffset, long lastOffset, boolean isAborted) {
    }

    /**
     * Records a transaction marker. Returns the completed transaction, or null if the producer
     * had no open transaction here (a marker for a partition it never wrote to).
     *
     * @throws ErrorCodeException with INVALID_PRODUCER_EPOCH for a marker from an older epoch (or,
     *                            under {@link MarkerCheck#NEWER_WHILE_OPEN}, one not newer than an
     *                            open transaction's) or TRANSACTION_COORDINATOR_FENCED for a stale coordinator
     */
    public CompletedTxn recordMarker(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
                                     long markerOffset, long timestamp, MarkerCheck check) {
        boolean validate = check != MarkerCheck.NONE;
        ProducerStateEntry existing = producers.get(producerId);
        if (check == MarkerCheck.NEWER_WHILE_OPEN && existing != null && existing.currentTxnFirstOffset.isPresent()
                && producerEpoch <= existing.producerEpoch) {
            throw new ErrorCodeException(ErrorCode.INVALID_PRODUCER_EPOCH, "Transactions v2 marker epoch " + producerEpoch
                + " is not above the epoch " + existing.producerEpoch + " of producer " + producerId + "'s open transaction in " + topicPartition);
        }
        ProducerStateEntry entry = existing != null ? existing : producers.computeIfAbsent(producerId, ProducerStateEntry::empty);
        if (validate && producerEpoch < entry.producerEpoch) {
            throw new ErrorCodeException(ErrorCode.INVALID_PRODUCER_EPOCH, "Marker epoch " + producerEpoch + " is older than producer "
                + producerId + "'s epoch " + entry.producerEpoch + " in " + topicPartition);
        }
        if (validate && coordinatorEpoch < entry.coordinatorEpoch) {
            throw new ErrorCodeException(ErrorCode.TRANSACTION_COORDINATOR_FENCED, "Coordinator epoch " + coordinatorEpoch
                + " is older than " + entry.coordinatorEpoch + " for producer " + producerId + " in " + topicPartition);
        }
        CompletedTxn completed = null;
        if (entry.currentTxnFirstOffset.isPresent()) {
            long first = entry.currentTxnFirstOffset.getAsLong();
            completed = new CompletedTxn(producerId, first, markerOffset, !commit);
            ongoingTxns.remove(first);
        }
        if (producerEpoch != entry.producerEpoch) {
            entry.batches.clear();
        }
        entry.producerEpoch = producerEpoch;
        entry.coordinatorEpoch = coordinatorEpoch;
        entry.currentTxnFirstOffset = OptionalLong.empty();
        entry.lastTimestamp = timestamp;
        return completed;
    }

    // ---------------------------------------------------------------- expiry and truncation

    /**
     * Forgets every producer with no open transaction whose last timestamp (the max timestamp of
     * its last batch, or its last marker's timestamp) is {@code producer.id.expiration.ms} or
     * more before {@code nowMs}.
     */
    public void removeExpiredProducers(long nowMs) {
        producers.values().removeIf(entry -> entry.currentTxnFirstOffset.isEmpty()
            && nowMs - entry.lastTimestamp >= producerIdExpirationMs);
    }

    /** Drops all state and snapshots and restarts at {@code offset} (log truncated fully). */
    public void truncateFullyAndStartAt(long offset) throws IOException {
        snapshotGeneration++;
        producers.clear();
        ongoingTxns.clear();
        for (Path snapshot : listSnapshots().values()) {
            Files.deleteIfExists(snapshot);
        }
        mapEndOffset = offset;
    }

    /**
     * Prepares for rebuilding state of a log spanning {@code [logStartOffset, logEndOffset)}:
     * deletes snapshots beyond the end, loads the newest remaining snapshot, and returns the
     * offset from which the log must replay batches into this state.
     */
    public long truncateAndReload(long logStartOffset, long logEndOffset) throws IOException {
        snapshotGeneration++;
        TreeMap<Long, Path> snapshots = listSnapshots();
        for (Map.Entry<Long, Path> snapshot : snapshots.entrySet()) {
            if (snapshot.getKey() > logEndOffset) {
                Files.deleteIfExists(snapshot.getValue());
            }
        }
        producers.clear();
        ongoingTxns.clear();
        snapshots = listSnapshots();
        for (Long offset : snapshots.descendingKeySet()) {
            if (offset < logStartOffset) {
                break;
            }
            try {
                loadSnapshot(snapshots.get(offset));
                mapEndOffset = offset;
                return offset;
            } catch (CorruptSnapshotException e) {
                Files.deleteIfExists(snapshots.get(offset));
                producers.clear();
                ongoingTxns.clear();
            }
        }
        mapEndOffset = logStartOffset;
        return logStartOffset;
    }

    /** Deletes snapshots below {@code offset} except the newest one (still needed to load). */
    public void deleteSnapshotsBefore(long offset) throws IOException {
        snapshotsDeletedBelow = Math.max(snapshotsDeletedBelow, offset);
        TreeMap<Long, Path> snapshots = listSnapshots();
        for (Map.Entry<Long, Path> snapshot : snapshots.headMap(offset, false).entrySet()) {
            Files.deleteIfExists(snapshot.getValue());
        }
    }

    /** Removes state of transactions and producers at or after {@code offset} cannot be known exactly; callers reload instead. */
    public Collection<Long> ongoingTransactionFirstOffsets() {
        return new ArrayList<>(ongoingTxns.keySet());
    }

    // ---------------------------------------------------------------- snapshots

    static Path snapshotFile(Path dir, long offset) {
        return dir.resolve(LogSegment.filenamePrefixFromOffset(offset) + SNAPSHOT_SUFFIX);
    }

    public TreeMap<Long, Path> listSnapshots() throws IOException {
        TreeMap<Long, Path> snapshots = new TreeMap<>();
        if (!Files.isDirectory(logDir)) {
            return snapshots;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(logDir, "*" + SNAPSHOT_SUFFIX)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                try {
                    snapshots.put(Long.parseLong(name.substring(0, name.length() - SNAPSHOT_SUFFIX.length())), file);
                } catch (NumberFormatException notASnapshot) {
                    // an unrelated file; leave it alone
                }
            }
        }
        return snapshots;
    }

    /** A snapshot captured under the partition lock, not yet on disk. */
    public static final class PendingSnapshot {
        final long offset;
        final ByteBuffer bytes;
        final long generation;
        Path tempFile;

        PendingSnapshot(long offset, ByteBuffer bytes, long generation) {
            this.offset = offset;
            this.bytes = bytes;
            this.generation = generation;
        }

        public long offset() {
            return offset;
        }
    }

    /** Writes a snapshot of the state at {@link #mapEndOffset()} (skipped if one exists), all three steps in the caller's thread. */
    public void takeSnapshot() throws IOException {
        PendingSnapshot pending = captureSnapshot();
        if (pending != null) {
            writeSnapshotFile(pending);
            if (publishSnapshot(pending)) {
                syncSnapshotDirectory();
            }
        }
    }

    /** Step 1, under the partition lock: the state at {@link #mapEndOffset()} as snapshot bytes, or null if that snapshot exists. */
    public PendingSnapshot captureSnapshot() {
        Path file = snapshotFile(logDir, mapEndOffset);
        if (Files.exists(file)) {
            return null;
        }
        List<ProducerStateEntry> entries = new ArrayList<>(producers.values());
        ByteBuffer buffer = ByteBuffer.allocate(SNAPSHOT_HEADER_BYTES + entries.size() * SNAPSHOT_ENTRY_BYTES);
        buffer.putShort(SNAPSHOT_VERSION).putInt(0).putInt(entries.size());
        for (ProducerStateEntry entry : entries) {
            buffer.putLong(entry.producerId).putShort(entry.producerEpoch).putInt(entry.lastSeq()).putLong(entry.lastDataOffset())
                .putInt(entry.lastOffsetDelta()).putLong(entry.lastTimestamp).putInt(entry.coordinatorEpoch)
                .putLong(entry.currentTxnFirstOffset.orElse(-1L));
        }
        CRC32C crc = new CRC32C();
        crc.update(buffer.array(), 6, buffer.position() - 6);
        buffer.putInt(2, (int) crc.getValue());
        buffer.flip();
        return new PendingSnapshot(mapEndOffset, buffer, snapshotGeneration);
    }

    /**
     * Step 2, without the lock (the slow part): the bytes to a fresh temp file, fsynced. On
     * failure the temp file is removed and nothing is published.
     */
    public void writeSnapshotFile(PendingSnapshot pending) throws IOException {
        Path file = snapshotFile(logDir, pending.offset);
        Path temp = file.resolveSibling(file.getFileName() + "." + tempFileSequence.incrementAndGet() + ".tmp");
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer bytes = pending.bytes.duplicate();
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
            beforeSnapshotFsync.run();
            channel.force(true);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
        pending.tempFile = temp;
    }

    /**
     * Step 3, under the partition lock: renames the written snapshot into place, or drops it if
     * the log was truncated (or its older snapshots deleted past it) since the capture. Returns
     * whether it was published; then the caller fsyncs the directory with
     * {@link #syncSnapshotDirectory} (no lock needed) before relying on it.
     */
    public boolean publishSnapshot(PendingSnapshot pending) throws IOException {
        if (pending.tempFile == null) {
            throw new IllegalStateException("snapshot at " + pending.offset + " of " + topicPartition + " was not written");
        }
        if (pending.generation != snapshotGeneration || pending.offset < snapshotsDeletedBelow) {
            Files.deleteIfExists(pending.tempFile);
            return false;
        }
        Path file = snapshotFile(logDir, pending.offset);
        Files.move(pending.tempFile, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return true;
    }

    /** Fsyncs the log directory, so that renames into it (a published snapshot) survive a crash. */
    public void syncSnapshotDirectory() throws IOException {
        try (FileChannel directory = FileChannel.open(logDir, StandardOpenOption.READ)) {
            directory.force(true);
        }
    }

    /** Test seam: {@code hook} runs before every snapshot fsync (it may block or throw). */
    void setBeforeSnapshotFsync(Runnable hook) {
        this.beforeSnapshotFsync = hook;
    }

    private void loadSnapshot(Path file) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(Files.readAllBytes(file));
        if (buffer.remaining() < SNAPSHOT_HEADER_BYTES) {
            throw new CorruptSnapshotException("snapshot " + file + " is " + buffer.remaining() + " bytes, shorter than its header");
        }
        short version = buffer.getShort();
        if (version != SNAPSHOT_VERSION) {
            throw new CorruptSnapshotException("snapshot " + file + " has unknown version " + version);
        }
        long storedCrc = buffer.getInt() & 0xffffffffL;
        CRC32C crc = new CRC32C();
        crc.update(buffer.array(), 6, buffer.limit() - 6);
        if (crc.getValue() != storedCrc) {
            throw new CorruptSnapshotException("snapshot " + file + " fails its checksum");
        }
        int count = buffer.getInt();
        if (count < 0 || (long) count * SNAPSHOT_ENTRY_BYTES != buffer.remaining()) {
            throw new CorruptSnapshotException("snapshot " + file + " claims " + count + " entries in " + buffer.remaining() + " bytes");
        }
        for (int i = 0; i < count; i++) {
            long producerId = buffer.getLong();
            short epoch = buffer.getShort();
            int lastSeq = buffer.getInt();
            long lastOffset = buffer.getLong();
            int offsetDelta = buffer.getInt();
            long timestamp = buffer.getLong();
            int coordinatorEpoch = buffer.getInt();
            long txnFirstOffset = buffer.getLong();
            ProducerStateEntry entry = new ProducerStateEntry(producerId, epoch, coordinatorEpoch, timestamp,
                txnFirstOffset >= 0 ? OptionalLong.of(txnFirstOffset) : OptionalLong.empty());
            if (lastOffset >= 0) {
                int firstSeq = lastSeq == ProducerStateEntry.NO_SEQUENCE ? lastSeq : Math.max(0, lastSeq - offsetDelta);
                entry.batches.add(new BatchMetadata(firstSeq, lastSeq, lastOffset, offsetDelta, timestamp));
            }
            producers.put(producerId, entry);
            if (txnFirstOffset >= 0) {
                ongoingTxns.put(txnFirstOffset, producerId);
            }
        }
    }

    /** A snapshot that cannot be trusted; it is deleted and the state rebuilt from the log. */
    static final class CorruptSnapshotException extends IOException {
        private static final long serialVersionUID = 1L;

        CorruptSnapshotException(String message) {
            super(message);
        }
    }
}
