package io.strata.storage;

import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;

import java.nio.charset.StandardCharsets;

/** Builds record batches for storage tests, as a producer would send them. */
final class TestRecords {
    private TestRecords() {
    }

    static MemoryRecords batch(long timestampMs, String... values) {
        return batch(CompressionType.NONE, timestampMs, values);
    }

    static MemoryRecords batch(CompressionType compression, long timestampMs, String... values) {
        RecordBatchBuilder builder = new RecordBatchBuilder(compression, TimestampType.CREATE_TIME, 0L);
        for (String value : values) {
            builder.append(timestampMs, ("k-" + value).getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    static MemoryRecords idempotentBatch(long producerId, short epoch, int baseSequence, long timestampMs, String... values) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .producerState(producerId, epoch, baseSequence, false);
        for (String value : values) {
            builder.append(timestampMs, null, value.getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    static MemoryRecords transactionalBatch(long producerId, short epoch, int baseSequence, long timestampMs, String... values) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L)
            .producerState(producerId, epoch, baseSequence, true);
        for (String value : values) {
            builder.append(timestampMs, null, value.getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    /** A fresh copy: appends rewrite batch headers in place, and tests reuse inputs. */
    static MemoryRecords copy(MemoryRecords records) {
        java.nio.ByteBuffer source = records.buffer();
        java.nio.ByteBuffer copy = java.nio.ByteBuffer.allocate(source.remaining());
        copy.put(source).flip();
        return MemoryRecords.readableRecords(copy);
    }
}
