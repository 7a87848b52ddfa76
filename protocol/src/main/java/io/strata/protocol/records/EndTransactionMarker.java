package io.strata.protocol.records;

import java.nio.ByteBuffer;

/**
 * The control record that ends a transaction on a partition: key (version, ABORT|COMMIT),
 * value (version i16, coordinatorEpoch i32). Written by the transaction coordinator through
 * WriteTxnMarkers; consumers in read_committed use it to drop aborted data. Immutable.
 */
public record EndTransactionMarker(ControlRecordType type, int coordinatorEpoch) {
    public EndTransactionMarker {
        if (type != ControlRecordType.ABORT && type != ControlRecordType.COMMIT) {
            throw new IllegalArgumentException("end transaction marker must be ABORT or COMMIT: type=" + type);
        }
    }

    /** The 6-byte value at the current version, positioned at 0. */
    public ByteBuffer serializeValue() {
        ByteBuffer value = ByteBuffer.allocate(RecordBatchDescriptor.END_TRANSACTION_MARKER_VALUE_BYTES);
        value.putShort(RecordBatchDescriptor.END_TRANSACTION_MARKER_VERSION).putInt(coordinatorEpoch);
        return value.flip();
    }

    /**
     * Reads the marker from a record of a control batch.
     *
     * @throws CorruptRecordException if the key is not ABORT/COMMIT or the value is malformed
     */
    public static EndTransactionMarker fromRecord(Record record) {
        ControlRecordType type = ControlRecordType.parseKey(record.key());
        if (type != ControlRecordType.ABORT && type != ControlRecordType.COMMIT) {
            throw new CorruptRecordException("control record is not an end transaction marker: type=" + type);
        }
        ByteBuffer value = record.value();
        if (value == null || value.remaining() < RecordBatchDescriptor.END_TRANSACTION_MARKER_VALUE_BYTES) {
            throw new CorruptRecordException("end transaction marker value is too short: valueBytes="
                + (value == null ? -1 : value.remaining()) + ", minimum=" + RecordBatchDescriptor.END_TRANSACTION_MARKER_VALUE_BYTES);
        }
        short version = value.getShort(value.position());
        if (version < 0) {
            throw new CorruptRecordException("end transaction marker has a negative version: version=" + version);
        }
        return new EndTransactionMarker(type, value.getInt(value.position() + Short.BYTES));
    }
}
