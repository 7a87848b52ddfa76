package io.strata.coordinator.group.consumer;

import io.strata.protocol.ErrorCode;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** How the consumer groups of a shard reach their {@code __consumer_offsets} partition. */
public interface GroupRecordLog {
    /** Appends key/value pairs (null value: tombstone) as one batch; {@code done} runs on the shard's thread. */
    void append(List<byte[][]> records, Consumer<ErrorCode> done);

    /** Replays the partition (key, value or null) in offset order, on the calling (shard) thread. */
    void replay(BiConsumer<ByteBuffer, ByteBuffer> records);
}
