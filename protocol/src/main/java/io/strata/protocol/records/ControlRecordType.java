package io.strata.protocol.records;

import java.nio.ByteBuffer;

/**
 * The type in a control record's key (version i16, type i16). Transactions use ABORT and
 * COMMIT; the others appear in KRaft metadata logs. Unknown types parse as {@link #UNKNOWN},
 * as Kafka does, so a newer writer does not make old readers fail. Immutable and thread-safe.
 */
public enum ControlRecordType {
    ABORT((short) 0),
    COMMIT((short) 1),
    LEADER_CHANGE((short) 2),
    SNAPSHOT_HEADER((short) 3),
    SNAPSHOT_FOOTER((short) 4),
    KRAFT_VERSION((short) 5),
    KRAFT_VOTERS((short) 6),
    UNKNOWN((short) -1);

    private final short typeId;

    ControlRecordType(short typeId) {
        this.typeId = typeId;
    }

    public short typeId() {
        return typeId;
    }

    /** The 4-byte control record key for this type at the current key version, positioned at 0. */
    public ByteBuffer serializeKey() {
        if (this == UNKNOWN) {
            throw new IllegalStateException("cannot write a control record of type UNKNOWN");
        }
        ByteBuffer key = ByteBuffer.allocate(RecordBatchDescriptor.CONTROL_RECORD_KEY_BYTES);
        key.putShort(RecordBatchDescriptor.CONTROL_RECORD_KEY_VERSION).putShort(typeId);
        return key.flip();
    }

    public static ControlRecordType fromTypeId(short typeId) {
        for (ControlRecordType type : values()) {
            if (type.typeId == typeId && type != UNKNOWN) {
                return type;
            }
        }
        return UNKNOWN;
    }

    /**
     * Parses a control record key. Later key versions are read as version 0, whose fields
     * they must begin with (Kafka's rule).
     *
     * @throws CorruptRecordException if the key is null, shorter than 4 bytes or has a negative version
     */
    public static ControlRecordType parseKey(ByteBuffer key) {
        if (key == null) {
            throw new CorruptRecordException("control record has a null key");
        }
        if (key.remaining() < RecordBatchDescriptor.CONTROL_RECORD_KEY_BYTES) {
            throw new CorruptRecordException("control record key is too short: keyBytes=" + key.remaining()
                + ", minimum=" + RecordBatchDescriptor.CONTROL_RECORD_KEY_BYTES);
        }
        short version = key.getShort(key.position());
        if (version < 0) {
            throw new CorruptRecordException("control record key has a negative version: version=" + version);
        }
        return fromTypeId(key.getShort(key.position() + Short.BYTES));
    }
}
