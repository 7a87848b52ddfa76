package io.strata.tools.client;

/** What a consumer may read: everything below the high watermark, or only committed transactional data. */
public enum IsolationLevel {
    READ_UNCOMMITTED((byte) 0),
    READ_COMMITTED((byte) 1);

    private final byte id;

    IsolationLevel(byte id) {
        this.id = id;
    }

    /** The value of the IsolationLevel field of Fetch and ListOffsets. */
    public byte id() {
        return id;
    }
}
