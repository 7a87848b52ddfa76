package io.strata.server.replica.fetcher;

import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.Records;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a follower does with one partition of a Fetch answer before {@link FollowerLog#appendAsFollower},
 * which checks the batches themselves (CRC, growing offsets, no leader epoch above the followed
 * one, nothing below its log end) before writing any, so none of that is done twice here:
 * <ul>
 *   <li>A truncated last batch (a Fetch answer may end mid-batch) is cut off; only complete batches
 *       are appended.</li>
 *   <li>Kafka's {@code Partition.appendRecordsToFollowerOrFutureReplica} rule: an empty log (log
 *       start = log end, e.g. just after {@code truncateFullyAndStartAt(leader log start)}) whose
 *       first fetched batch straddles its start is restarted at the batch's base offset. Any other
 *       first batch below the log end is refused by the log.</li>
 * </ul>
 *
 * <p>Stateless.
 */
final class FetchedRecords {
    private FetchedRecords() {
    }

    /**
     * The complete batches of {@code fetched} ({@link MemoryRecords#EMPTY} if none); may restart an
     * empty {@code log} as described above.
     */
    static MemoryRecords checked(Records fetched, FollowerLog log) throws IOException {
        if (fetched == null || fetched.sizeInBytes() == 0) {
            return MemoryRecords.EMPTY;
        }
        MemoryRecords records = completeBatches(MemoryRecords.of(fetched));
        long logEndOffset = log.logEndOffset();
        for (RecordBatch first : records.batches()) {
            long baseOffset = first instanceof DefaultRecordBatch batch ? batch.baseOffset() : first.lastOffset();
            if (baseOffset < logEndOffset && logEndOffset == log.logStartOffset() && first.lastOffset() >= logEndOffset) {
                log.truncateFullyAndStartAt(baseOffset);
            }
            break;
        }
        return records;
    }

    private static MemoryRecords completeBatches(MemoryRecords records) {
        int validBytes = records.validBytes();
        if (validBytes == records.sizeInBytes()) {
            return records;
        }
        ByteBuffer complete = records.buffer();
        complete.limit(validBytes);
        return MemoryRecords.readableRecords(complete);
    }
}
