package io.strata.server.replica;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.records.MemoryRecords;
import io.strata.storage.ErrorCodeException;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.LogAppendInfo;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.io.IOException;
import java.util.UUID;

/**
 * A partition this broker hosts (it is one of the image's replicas), with its log and its
 * leadership state as the last image named it. Only the leader ({@link #leaderId()} equal to
 * the node id; {@link ReplicaManager#leaderPartitionOrThrow} checks it) appends, reads for
 * clients and answers offsets; a follower's log waits for replication. While this node leads
 * alone the ISR is itself, so the high watermark follows the log end as soon as a write is
 * durable by the configured policy; replication changes only how the high watermark advances,
 * not this class's contract.
 *
 * <p>Thread-safety: appends serialise on the log's lock; reads are concurrent.
 */
public final class Partition {
    private final TopicPartition topicPartition;
    private final UUID topicId;
    private final UnifiedLog log;
    private volatile int leaderEpoch;
    private volatile int leaderId;

    Partition(TopicPartition topicPartition, UUID topicId, UnifiedLog log, int leaderId, int leaderEpoch) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.log = log;
        this.leaderId = leaderId;
        this.leaderEpoch = leaderEpoch;
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public UUID topicId() {
        return topicId;
    }

    public UnifiedLog log() {
        return log;
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public int leaderId() {
        return leaderId;
    }

    void updateLeadership(int leaderId, int leaderEpoch) {
        this.leaderId = leaderId;
        this.leaderEpoch = leaderEpoch;
    }

    /**
     * Appends as leader and advances the high watermark (ISR = this node). With
     * {@code strata.fsync=on-ack} the high watermark stays: the caller hands the partition to the
     * {@link LogFlusher}, which moves it once an fsync covers the append, so the data becomes
     * visible and acknowledged only then, and the handler thread does not wait for the disk.
     */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, UnifiedLog.AppendOrigin origin) throws IOException {
        LogAppendInfo info = log.appendAsLeader(records, leaderEpoch, origin);
        if (!info.duplicate() && !log.fsyncOnAck()) {
            log.maybeIncrementHighWatermark(log.logEndOffsetMetadata());
        }
        return info;
    }

    /** Offsets below this were covered by an fsync-on-ack that failed (-1: none failed). */
    private volatile long failedFlushEndOffset = -1;

    /** The flusher's fsync up to (not including) {@code endOffset} failed. */
    void recordFlushFailure(long endOffset) {
        failedFlushEndOffset = Math.max(failedFlushEndOffset, endOffset);
    }

    /** Whether a failed fsync-on-ack covered {@code offset} and no successful one has since. */
    boolean flushFailedFor(long offset) {
        return offset < failedFlushEndOffset && log.recoveryPoint() <= offset;
    }

    /** Appends a transaction marker written by the transaction coordinator and advances the high watermark. */
    public void appendMarkerToLeader(MemoryRecords marker, io.strata.storage.MarkerCheck check) throws IOException {
        log.appendMarker(marker, leaderEpoch, check);
        if (log.fsyncOnAck()) {
            log.flush(log.logEndOffset());
        }
        log.maybeIncrementHighWatermark(log.logEndOffsetMetadata());
    }

    /** Checks the leader epoch a client believes in against ours (KIP-320). */
    public void checkLeaderEpoch(int currentLeaderEpoch) {
        if (currentLeaderEpoch < 0) {
            return;
        }
        if (currentLeaderEpoch < leaderEpoch) {
            throw new ErrorCodeException(ErrorCode.FENCED_LEADER_EPOCH, "leader epoch " + currentLeaderEpoch + " of the request is older than "
                + leaderEpoch + " for " + topicPartition);
        }
        if (currentLeaderEpoch > leaderEpoch) {
            throw new ErrorCodeException(ErrorCode.UNKNOWN_LEADER_EPOCH, "leader epoch " + currentLeaderEpoch + " of the request is newer than "
                + leaderEpoch + " for " + topicPartition);
        }
    }

    public FetchDataInfo read(long fetchOffset, int maxBytes, FetchIsolation isolation, boolean minOneMessage) {
        return log.read(fetchOffset, maxBytes, isolation, minOneMessage);
    }

    @Override
    public String toString() {
        return "Partition(" + topicPartition + ", leaderEpoch=" + leaderEpoch + ")";
    }
}
