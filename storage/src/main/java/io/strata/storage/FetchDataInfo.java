package io.strata.storage;

import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Records;

import java.util.List;

/**
 * The result of a log read: where it started, the record bytes (a file slice on the fetch
 * path), whether the first batch did not fit, and for read_committed reads the aborted
 * transactions that overlap the returned range.
 */
public record FetchDataInfo(LogOffsetMetadata fetchOffsetMetadata, Records records, boolean firstEntryIncomplete,
                            List<AbortedTxn> abortedTransactions) {
    public static FetchDataInfo empty(LogOffsetMetadata offset) {
        return new FetchDataInfo(offset, MemoryRecords.EMPTY, false, null);
    }

    public FetchDataInfo withAbortedTransactions(List<AbortedTxn> aborted) {
        return new FetchDataInfo(fetchOffsetMetadata, records, firstEntryIncomplete, aborted);
    }
}
