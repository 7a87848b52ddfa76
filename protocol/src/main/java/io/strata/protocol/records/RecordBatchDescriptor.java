package io.strata.protocol.records;

import java.nio.ByteBuffer;

/**
 * Byte layouts of Kafka record batches: the magic-2 batch and record, control records, and the
 * legacy magic-0/1 message entries. Multi-byte integers are big-endian; "varint" and "varlong"
 * are zig-zag base-128 ({@link io.strata.protocol.ByteUtils}).
 *
 * <h2>Record batch, magic 2</h2>
 * <pre>
 *   0            8             12                     16      17       21
 *  +------------+-------------+----------------------+-------+--------+------------+
 *  | baseOffset | batchLength | partitionLeaderEpoch | magic | crc    | attributes |
 *  | i64        | i32         | i32                  | i8 =2 | u32    | i16        |
 *  +------------+-------------+----------------------+-------+--------+------------+
 *   23                27              35             43           51
 *  +-----------------+---------------+--------------+------------+---------------+
 *  | lastOffsetDelta | baseTimestamp | maxTimestamp | producerId | producerEpoch |
 *  | i32             | i64           | i64          | i64        | i16           |
 *  +-----------------+---------------+--------------+------------+---------------+
 *   53             57            61
 *  +--------------+-------------+------------------------------------------------+
 *  | baseSequence | recordCount | records (compressed as a whole if attributes   |
 *  | i32          | i32         | say so) ... up to 12 + batchLength             |
 *  +--------------+-------------+------------------------------------------------+
 *
 *  batchLength counts the bytes after itself: sizeInBytes = 12 + batchLength.
 *  crc = CRC32C over bytes 21 .. end (attributes through the last record).
 * </pre>
 * The header is {@value #RECORD_BATCH_OVERHEAD} bytes, so the smallest valid batchLength is
 * {@value #MIN_BATCH_LENGTH}. The CRC does <em>not</em> cover baseOffset, batchLength or
 * partitionLeaderEpoch: the broker rewrites those in place without recomputing it. It does
 * cover attributes and maxTimestamp, so rewriting the timestamp type or maxTimestamp needs a
 * new CRC.
 *
 * <h2>Batch attributes (i16)</h2>
 * <pre>
 *   bit  15 .. 7     6              5          4               3                2 .. 0
 *      | unused | deleteHorizon | control | transactional | timestampType | compression |
 *   compression: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd (5..7 invalid)
 *   timestampType: 0 CreateTime, 1 LogAppendTime (every record then reports maxTimestamp)
 *   deleteHorizon: baseTimestamp holds the compaction delete horizon (KIP-534)
 * </pre>
 *
 * <h2>Record (inside the records section)</h2>
 * <pre>
 *   length          varint   bytes of the body that follows (body is at least 6 bytes)
 *   attributes      i8       unused, written as 0
 *   timestampDelta  varlong  timestamp - baseTimestamp
 *   offsetDelta     varint   offset - baseOffset
 *   keyLength       varint   -1 for a null key
 *   key             bytes
 *   valueLength     varint   -1 for a null value
 *   value           bytes
 *   headerCount     varint
 *   headers         headerCount x { keyLength varint (&gt;= 0), key UTF-8,
 *                                   valueLength varint (-1 null), value bytes }
 * </pre>
 * The smallest record is therefore {@value #MIN_RECORD_BYTES} bytes and the smallest header
 * {@value #MIN_HEADER_BYTES}; readers use these to reject counts the bytes cannot hold before
 * allocating anything.
 *
 * <h2>Control records (control batches only)</h2>
 * <pre>
 *   key:   version i16 (0)  type i16 (0 abort, 1 commit, 2.. KRaft types)
 *   value: version i16 (0)  coordinatorEpoch i32        (end-transaction markers)
 * </pre>
 *
 * <h2>Legacy message entry, magic 0 and 1</h2>
 * <pre>
 *   offset      i64   0
 *   size        i32   8   bytes after this field
 *   crc         u32  12   CRC32 (not CRC32C) over magic..end
 *   magic       i8   16   0 or 1 (same position as the magic-2 magic byte)
 *   attributes  i8   17   bits 0-2 compression, bit 3 timestamp type (magic 1)
 *   timestamp   i64  18   magic 1 only
 *   keyLength   i32       -1 for null, then key bytes
 *   valueLength i32       -1 for null, then value bytes (for a compressed wrapper: the
 *                         compressed inner message set)
 * </pre>
 * Kafka 4 rejects these formats; Strata only recognises and validates them so it can answer
 * with Kafka's error instead of failing to parse.
 *
 * <p>Constants only; thread-safe.
 */
public final class RecordBatchDescriptor {
    public static final byte MAGIC_V0 = 0;
    public static final byte MAGIC_V1 = 1;
    public static final byte MAGIC_V2 = 2;

    // Shared by all magics: the log entry prefix.
    public static final int BASE_OFFSET_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    /** baseOffset + batchLength: the bytes that batchLength does not count. */
    public static final int LOG_OVERHEAD = 12;
    public static final int MAGIC_OFFSET = 16;

    // Magic 2.
    public static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
    public static final int CRC_OFFSET = 17;
    public static final int ATTRIBUTES_OFFSET = 21;
    public static final int LAST_OFFSET_DELTA_OFFSET = 23;
    public static final int BASE_TIMESTAMP_OFFSET = 27;
    public static final int MAX_TIMESTAMP_OFFSET = 35;
    public static final int PRODUCER_ID_OFFSET = 43;
    public static final int PRODUCER_EPOCH_OFFSET = 51;
    public static final int BASE_SEQUENCE_OFFSET = 53;
    public static final int RECORDS_COUNT_OFFSET = 57;
    public static final int RECORDS_OFFSET = 61;
    public static final int RECORD_BATCH_OVERHEAD = RECORDS_OFFSET;
    public static final int MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;

    public static final int COMPRESSION_CODEC_MASK = 0x07;
    public static final int TIMESTAMP_TYPE_MASK = 0x08;
    public static final int TRANSACTIONAL_FLAG_MASK = 0x10;
    public static final int CONTROL_FLAG_MASK = 0x20;
    public static final int DELETE_HORIZON_FLAG_MASK = 0x40;

    /** length(1) + attributes(1) + timestampDelta(1) + offsetDelta(1) + keyLength(1) + valueLength(1) + headerCount(1). */
    public static final int MIN_RECORD_BYTES = 7;
    /** The record body after its length varint. */
    public static final int MIN_RECORD_BODY_BYTES = MIN_RECORD_BYTES - 1;
    /** keyLength(1) + valueLength(1). */
    public static final int MIN_HEADER_BYTES = 2;

    public static final long NO_TIMESTAMP = -1L;
    public static final long NO_PRODUCER_ID = -1L;
    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;
    public static final int NO_PARTITION_LEADER_EPOCH = -1;

    public static final short CONTROL_RECORD_KEY_VERSION = 0;
    public static final int CONTROL_RECORD_KEY_BYTES = 4;
    public static final short END_TRANSACTION_MARKER_VERSION = 0;
    public static final int END_TRANSACTION_MARKER_VALUE_BYTES = 6;

    // Legacy magic 0 and 1.
    public static final int LEGACY_CRC_OFFSET = 12;
    public static final int LEGACY_ATTRIBUTES_OFFSET = 17;
    public static final int LEGACY_TIMESTAMP_OFFSET = 18;
    public static final int LEGACY_KEY_LENGTH_OFFSET_V0 = 18;
    public static final int LEGACY_KEY_LENGTH_OFFSET_V1 = 26;
    /** crc(4) + magic(1) + attributes(1) + keyLength(4) + valueLength(4): the smallest legacy size field. */
    public static final int LEGACY_RECORD_OVERHEAD_V0 = 14;
    /** As v0 plus timestamp(8). */
    public static final int LEGACY_RECORD_OVERHEAD_V1 = 22;
    public static final int LEGACY_COMPRESSION_CODEC_MASK = 0x07;
    public static final int LEGACY_TIMESTAMP_TYPE_MASK = 0x08;

    static {
        // The layout is a chain of fixed-width fields; check the chain once at class load.
        assert CRC_OFFSET == MAGIC_OFFSET + 1;
        assert ATTRIBUTES_OFFSET == CRC_OFFSET + Integer.BYTES;
        assert LAST_OFFSET_DELTA_OFFSET == ATTRIBUTES_OFFSET + Short.BYTES;
        assert BASE_TIMESTAMP_OFFSET == LAST_OFFSET_DELTA_OFFSET + Integer.BYTES;
        assert MAX_TIMESTAMP_OFFSET == BASE_TIMESTAMP_OFFSET + Long.BYTES;
        assert PRODUCER_ID_OFFSET == MAX_TIMESTAMP_OFFSET + Long.BYTES;
        assert PRODUCER_EPOCH_OFFSET == PRODUCER_ID_OFFSET + Long.BYTES;
        assert BASE_SEQUENCE_OFFSET == PRODUCER_EPOCH_OFFSET + Short.BYTES;
        assert RECORDS_COUNT_OFFSET == BASE_SEQUENCE_OFFSET + Integer.BYTES;
        assert RECORDS_OFFSET == RECORDS_COUNT_OFFSET + Integer.BYTES;
        assert LEGACY_KEY_LENGTH_OFFSET_V1 == LEGACY_TIMESTAMP_OFFSET + Long.BYTES;
        assert LEGACY_RECORD_OVERHEAD_V0 < MIN_BATCH_LENGTH;
    }

    private RecordBatchDescriptor() {
    }

    /**
     * The magic byte of the batch or legacy entry starting at {@code batchStart}, read at the
     * same offset ({@value #MAGIC_OFFSET}) for every format.
     *
     * @throws CorruptRecordException if the buffer ends before the magic byte
     */
    public static byte magicAt(ByteBuffer buffer, int batchStart) {
        if (batchStart < 0 || buffer.limit() - batchStart <= MAGIC_OFFSET) {
            throw new CorruptRecordException("buffer ends before the magic byte: batchStart=" + batchStart
                + ", limit=" + buffer.limit());
        }
        return buffer.get(batchStart + MAGIC_OFFSET);
    }
}
