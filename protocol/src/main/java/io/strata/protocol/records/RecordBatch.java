package io.strata.protocol.records;

import java.nio.ByteBuffer;

/**
 * One entry of a record set, as found by {@link MemoryRecords#batches()}: either a magic-2
 * {@link DefaultRecordBatch} or a legacy magic-0/1 {@link LegacyRecordBatch}. Every format
 * keeps its magic byte at offset {@value RecordBatchDescriptor#MAGIC_OFFSET}, so callers check
 * {@link #magic()} (or pattern-match the type) before anything format-specific; Kafka 4
 * brokers refuse magic below 2 with an error code rather than a parse failure.
 *
 * <p>Implementations are views over a slice of the record set's buffer (no copies).
 */
public sealed interface RecordBatch permits DefaultRecordBatch, LegacyRecordBatch {
    byte magic();

    /** Offset of the last record (for a legacy compressed wrapper, the wrapper's offset is the last inner offset). */
    long lastOffset();

    /** Bytes of this entry including the 12-byte offset and length prefix. */
    int sizeInBytes();

    CompressionType compressionType();

    /** Whether the stored checksum matches the bytes (CRC32C for magic 2, CRC32 for legacy). */
    boolean isValid();

    /** @throws CorruptRecordException if {@link #isValid()} is false */
    void ensureValid();

    /** The entry's bytes as a read-only buffer positioned at 0. */
    ByteBuffer buffer();

    /**
     * Reads the magic byte of the batch starting at the position of {@code records} without
     * parsing anything else.
     *
     * @throws CorruptRecordException if fewer than 17 bytes remain
     */
    static byte peekMagic(ByteBuffer records) {
        return RecordBatchDescriptor.magicAt(records, records.position());
    }
}
