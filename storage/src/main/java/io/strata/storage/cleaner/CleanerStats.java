package io.strata.storage.cleaner;

/**
 * Counters of one cleaning pass, for the log line the cleaner writes after each pass and for
 * tests.
 *
 * <p>Not thread-safe: owned by the pass.
 */
public final class CleanerStats {
    private long mapBatchesRead;
    private long mapBytesRead;
    private long mapRecordsRead;
    private long batchesRead;
    private long bytesRead;
    private long recordsRead;
    private long batchesWritten;
    private long bytesWritten;
    private long recordsWritten;
    private long invalidRecords;
    private int segmentGroups;

    void mapBatchRead(int sizeInBytes, int records) {
        mapBatchesRead++;
        mapBytesRead += sizeInBytes;
        mapRecordsRead += records;
    }

    void batchRead(int sizeInBytes, int records) {
        batchesRead++;
        bytesRead += sizeInBytes;
        recordsRead += records;
    }

    void batchWritten(int sizeInBytes, int records) {
        batchesWritten++;
        bytesWritten += sizeInBytes;
        recordsWritten += records;
    }

    void invalidRecord() {
        invalidRecords++;
    }

    void segmentGroupCleaned() {
        segmentGroups++;
    }

    public long mapBytesRead() {
        return mapBytesRead;
    }

    public long mapRecordsRead() {
        return mapRecordsRead;
    }

    public long bytesRead() {
        return bytesRead;
    }

    public long recordsRead() {
        return recordsRead;
    }

    public long bytesWritten() {
        return bytesWritten;
    }

    public long recordsWritten() {
        return recordsWritten;
    }

    public long invalidRecords() {
        return invalidRecords;
    }

    public int segmentGroups() {
        return segmentGroups;
    }

    @Override
    public String toString() {
        return "CleanerStats(mapped " + mapRecordsRead + " records in " + mapBatchesRead + " batches (" + mapBytesRead + " bytes); read "
            + recordsRead + " records in " + batchesRead + " batches (" + bytesRead + " bytes); wrote " + recordsWritten + " records in "
            + batchesWritten + " batches (" + bytesWritten + " bytes) to " + segmentGroups + " segment(s); " + invalidRecords
            + " record(s) without a key dropped)";
    }
}
