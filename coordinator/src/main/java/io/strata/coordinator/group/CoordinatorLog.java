package io.strata.coordinator.group;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.MemoryRecords;

import java.nio.ByteBuffer;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * How a coordinator reaches its internal topic's partitions: the broker appends with acks=all
 * through the replica manager (so a write is acknowledged only once durable by the cluster's
 * rules) and replays a partition when the coordinator takes it over.
 */
public interface CoordinatorLog {
    /** Appends a batch to partition {@code partition}; {@code callback} gets NONE or the error. */
    void append(int partition, MemoryRecords records, Consumer<ErrorCode> callback);

    /** Replays every record (key, value or null for a tombstone) of the partition in offset order. */
    void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> records);

    /** What a transaction-aware replay sees: records with their producer, and transaction markers. */
    interface TransactionalReplay {
        void record(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional);

        /**
         * A record with its offset in the partition, so a record that cannot be applied can be
         * reported where it is; {@code offset} is -1 from a log that does not know offsets. The
         * default drops the offset.
         */
        default void record(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional, long offset) {
            record(key, value, producerId, transactional);
        }

        void marker(long producerId, boolean commit);
    }

    /**
     * Replays records and transaction markers in offset order. The default treats every record
     * as non-transactional (for logs that never hold transactional batches).
     */
    default void replayTransactional(int partition, TransactionalReplay replay) {
        replay(partition, (key, value) -> replay.record(key, value, -1L, false));
    }

    /** Appends a transactional batch of a producer (for transactional offset commits). */
    default void appendTransactional(int partition, MemoryRecords records, Consumer<ErrorCode> callback) {
        append(partition, records, callback);
    }
}
