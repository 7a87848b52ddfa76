package io.strata.server.replica;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Records;
import io.strata.storage.AbortedTxn;

import java.util.List;

/** The answer for one partition of a fetch. {@code records} is a file slice on the normal path. */
public record FetchPartitionData(ErrorCode error, long highWatermark, long lastStableOffset, long logStartOffset, Records records,
                                 List<AbortedTxn> abortedTransactions, String errorMessage) {
    public static FetchPartitionData error(ErrorCode error, String message) {
        return new FetchPartitionData(error, -1L, -1L, -1L, MemoryRecords.EMPTY, null, message);
    }
}
