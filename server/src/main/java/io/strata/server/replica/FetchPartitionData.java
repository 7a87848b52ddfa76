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
 * {@code preferredReadReplica} is the broker a consumer should fetch from instead (KIP-392, records
 * empty), or {@link #NO_PREFERRED_READ_REPLICA}.
 */
public record FetchPartitionData(ErrorCode error, long highWatermark, long lastStableOffset, long logStartOffset, Records records,
                                 List<AbortedTxn> abortedTransactions, String errorMessage, EpochOffset divergingEpoch,
                                 int preferredReadReplica) {
    /** No preferred read replica (the response field's -1). */
    public static final int NO_PREFERRED_READ_REPLICA = -1;

    public FetchPartitionData(ErrorCode error, long highWatermark, long lastStableOffset, long logStartOffset, Records records,
                              List<AbortedTxn> abortedTransactions, String errorMessage, EpochOffset divergingEpoch) {
        this(error, highWatermark, lastStableOffset, logStartOffset, records, abortedTransactions, errorMessage, divergingEpoch,
            NO_PREFERRED_READ_REPLICA);
    }

    /**
     * The leader's answer naming another replica to read from (KIP-392): no records, the leader's
     * offsets, so the consumer's lag stays known while it moves.
     */
    public static FetchPartitionData preferredReadReplica(long highWatermark, long lastStableOffset, long logStartOffset, int replica) {
        return new FetchPartitionData(ErrorCode.NONE, highWatermark, lastStableOffset, logStartOffset, MemoryRecords.EMPTY, null, null, null,
            replica);
    }

    public boolean hasPreferredReadReplica() {
        return preferredReadReplica != NO_PREFERRED_READ_REPLICA;
    }

    public FetchPartitionData(ErrorCode error, long highWatermark, long lastStableOffset, long logStartOffset, Records records,
                              List<AbortedTxn> abortedTransactions, String errorMessage) {
        this(error, highWatermark, lastStableOffset, logStartOffset, records, abortedTransactions, errorMessage, null);
    }

    public static FetchPartitionData error(ErrorCode error, String message) {
        return new FetchPartitionData(error, -1L, -1L, -1L, MemoryRecords.EMPTY, null, message);
    }
}
