package io.strata.storage;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.OptionalLong;

/**
 * The state of one producer id on one partition: its epoch, the metadata of its last
 * {@link #NUM_BATCHES_TO_RETAIN} batches (idempotent producers keep up to 5 in flight, so a
 * retried duplicate of any of them must be recognised), and its open transaction if any.
 *
 * <p>Not thread-safe: owned by a {@link ProducerStateManager}, under the partition lock.
 */
public final class ProducerStateEntry {
    /** Kafka clients allow at most 5 in-flight requests with idempotence. */
    public static final int NUM_BATCHES_TO_RETAIN = 5;
    public static final short NO_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;

    final long producerId;
    short producerEpoch;
    int coordinatorEpoch;
    long lastTimestamp;
    OptionalLong currentTxnFirstOffset;
    final Deque<BatchMetadata> batches = new ArrayDeque<>(NUM_BATCHES_TO_RETAIN);

    ProducerStateEntry(long producerId, short producerEpoch, int coordinatorEpoch, long lastTimestamp, OptionalLong currentTxnFirstOffset) {
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.coordinatorEpoch = coordinatorEpoch;
        this.lastTimestamp = lastTimestamp;
        this.currentTxnFirstOffset = currentTxnFirstOffset;
    }

    static ProducerStateEntry empty(long producerId) {
        return new ProducerStateEntry(producerId, NO_EPOCH, -1, -1L, OptionalLong.empty());
    }

    public ProducerStateEntry copy() {
        ProducerStateEntry copy = new ProducerStateEntry(producerId, producerEpoch, coordinatorEpoch, lastTimestamp, currentTxnFirstOffset);
        copy.batches.addAll(batches);
        return copy;
    }

    public long producerId() {
        return producerId;
    }

    public short producerEpoch() {
        return producerEpoch;
    }

    public int coordinatorEpoch() {
        return coordinatorEpoch;
    }

    public long lastTimestamp() {
        return lastTimestamp;
    }

    public OptionalLong currentTxnFirstOffset() {
        return currentTxnFirstOffset;
    }

    public boolean isEmpty() {
        return batches.isEmpty();
    }

    public int firstSeq() {
        return batches.isEmpty() ? NO_SEQUENCE : batches.peekFirst().firstSeq();
    }

    public int lastSeq() {
        return batches.isEmpty() ? NO_SEQUENCE : batches.peekLast().lastSeq();
    }

    public long lastDataOffset() {
        return batches.isEmpty() ? -1L : batches.peekLast().lastOffset();
    }

    public int lastOffsetDelta() {
        return batches.isEmpty() ? 0 : batches.peekLast().offsetDelta();
    }

    /** The retained batches, oldest first. */
    public Iterable<BatchMetadata> batches() {
        return batches;
    }

    /** Adds a batch; a new epoch forgets the previous epoch's batches. */
    void addBatch(short epoch, int firstSeq, int lastSeq, long lastOffset, int offsetDelta, long timestamp) {
        if (epoch != producerEpoch) {
            batches.clear();
            producerEpoch = epoch;
        }
        if (batches.size() == NUM_BATCHES_TO_RETAIN) {
            batches.removeFirst();
        }
        batches.addLast(new BatchMetadata(firstSeq, lastSeq, lastOffset, offsetDelta, timestamp));
        lastTimestamp = timestamp;
    }

    /** The retained batch with exactly these sequence numbers in this epoch, or null. */
    public BatchMetadata findDuplicateBatch(short epoch, int firstSeq, int lastSeq) {
        if (epoch != producerEpoch) {
            return null;
        }
        for (Iterator<BatchMetadata> it = batches.descendingIterator(); it.hasNext(); ) {
            BatchMetadata batch = it.next();
            if (batch.firstSeq() == firstSeq && batch.lastSeq() == lastSeq) {
                return batch;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "ProducerStateEntry(producerId=" + producerId + ", epoch=" + producerEpoch + ", coordinatorEpoch=" + coordinatorEpoch
            + ", currentTxnFirstOffset=" + currentTxnFirstOffset + ", batches=" + batches + ")";
    }
}
