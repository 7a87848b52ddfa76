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
}
