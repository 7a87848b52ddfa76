package io.strata.protocol.records;

/**
 * What a batch's timestamps mean. Magic-2 batches carry it in attribute bit 3; magic-0
 * entries have no timestamp ({@link #NO_TIMESTAMP_TYPE}). Immutable and thread-safe.
 */
public enum TimestampType {
    NO_TIMESTAMP_TYPE(-1, "NoTimestampType"),
    /** Set by the producer per record. */
    CREATE_TIME(0, "CreateTime"),
    /** Set by the broker on append; every record of the batch reports the batch's maxTimestamp. */
    LOG_APPEND_TIME(1, "LogAppendTime");

    private final int id;
    private final String displayName;

    TimestampType(int id, String displayName) {
        this.id = id;
        this.displayName = displayName;
    }

    public int id() {
        return id;
    }

    @Override
    public String toString() {
        return displayName;
    }
}
