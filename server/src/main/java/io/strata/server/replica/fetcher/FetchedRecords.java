package io.strata.server.replica.fetcher;

import io.strata.protocol.records.CorruptRecordException;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.Records;
import io.strata.storage.TopicPartition;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The checks a follower makes on the batches of one partition of a Fetch answer before they go
 * to {@link FollowerLog#appendAsFollower}:
 * <ul>
 *   <li>A truncated last batch (a Fetch answer may end mid-batch) is cut off; only complete batches
 *       are appended.</li>
 *   <li>Every batch's CRC holds; base offsets grow from batch to batch; no batch carries a
 *       partition leader epoch above the epoch this replica follows (Kafka 4's follower append
 *       check): else {@link CorruptRecordException}, and the partition retries after a back-off.</li>
 *   <li>The first batch does not start below the local log end. One exception, Kafka's
 *       {@code Partition.appendRecordsToFollowerOrFutureReplica} rule: an empty log (log start =
 *       log end, e.g. just after {@code truncateFullyAndStartAt(leader log start)}) whose first
 *       fetched batch straddles its start is restarted at the batch's base offset. Any other
 *       overlap is a bug or corruption: {@link IllegalStateException}, and the partition fails.
 *       A first batch above the log end is fine (the leader's log may be compacted).</li>
 * </ul>
 *
 * <p>Stateless.
 */
final class FetchedRecords {
    private FetchedRecords() {
    }

    /**
     * The complete, checked batches of {@code fetched} ({@link MemoryRecords#EMPTY} if none); may
     * restart an empty {@code log} as described above.
     */
    static MemoryRecords checked(TopicPartition topicPartition, Records fetched, FollowerLog log, int currentLeaderEpoch) throws IOException {
        if (fetched == null || fetched.sizeInBytes() == 0) {
            return MemoryRecords.EMPTY;
        }
        MemoryRecords records = completeBatches(MemoryRecords.of(fetched));
        long logEndOffset = log.logEndOffset();
        long previousLastOffset = -1;
        long restartAt = -1;
        boolean first = true;
        for (RecordBatch batch : records.batches()) {
            batch.ensureValid();
            long baseOffset = baseOffset(batch);
            if (first) {
                first = false;
                if (baseOffset < logEndOffset) {
                    if (logEndOffset != log.logStartOffset() || batch.lastOffset() < logEndOffset) {
                        throw new IllegalStateException("fetched batch of " + topicPartition + " starts below the log end offset: baseOffset="
                            + baseOffset + ", lastOffset=" + batch.lastOffset() + ", logEndOffset=" + logEndOffset + ", logStartOffset="
                            + log.logStartOffset());
                    }
                    restartAt = baseOffset;
                }
            } else if (baseOffset <= previousLastOffset) {
                throw new CorruptRecordException("fetched batches of " + topicPartition + " go back: baseOffset=" + baseOffset
                    + ", previous lastOffset=" + previousLastOffset);
            }
            if (batch instanceof DefaultRecordBatch defaultBatch && defaultBatch.partitionLeaderEpoch() > currentLeaderEpoch) {
                throw new CorruptRecordException("fetched batch of " + topicPartition + " has a leader epoch above the current one: "
                    + "partitionLeaderEpoch=" + defaultBatch.partitionLeaderEpoch() + ", currentLeaderEpoch=" + currentLeaderEpoch
                    + ", baseOffset=" + baseOffset);
            }
            previousLastOffset = batch.lastOffset();
        }
        if (restartAt >= 0) {
            log.truncateFullyAndStartAt(restartAt);
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

    /** A legacy (magic 0/1) wrapper only knows its last offset; using it never reports a false overlap. */
    private static long baseOffset(RecordBatch batch) {
        return batch instanceof DefaultRecordBatch defaultBatch ? defaultBatch.baseOffset() : batch.lastOffset();
    }
}
