package io.strata.storage;

/** Sentinels of the record format that the storage layer uses. */
final class RecordBatchConstants {
    static final long NO_TIMESTAMP = -1L;

    private RecordBatchConstants() {
    }
}
