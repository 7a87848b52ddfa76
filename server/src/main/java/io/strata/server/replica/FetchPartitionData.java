package io.strata.server.replica;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Records;
import io.strata.storage.AbortedTxn;
import io.strata.storage.EpochOffset;

import java.util.List;

/**
 * The answer for one partition of a fetch. {@code records} is a file slice on the normal path.
 * {@code divergingEpoch} is set (and {@code records} empty) when the fetcher's last fetched epoch
 * ends earlier on this leader than its fetch offset or is not this leader's (KIP-320); null otherwise.
 */
public record FetchPartitionData(ErrorCode error, long highWatermark, long lastStableOffset, long logStartOffset, Records records,
                                 List<AbortedTxn> abortedTransactions, String errorMessage, EpochOffset divergingEpoch) {
    public FetchPartitionData(ErrorCode error, long highWatermark, long lastStableOffset, long logStartOffset, Records records,
                              List<AbortedTxn> abortedTransactions, String errorMessage) {
        this(error, highWatermark, lastStableOffset, logStartOffset, records, abortedTransactions, errorMessage, null);
    }

    public static FetchPartitionData error(ErrorCode error, String message) {
        return new FetchPartitionData(error, -1L, -1L, -1L, MemoryRecords.EMPTY, null, message);
    }
}
