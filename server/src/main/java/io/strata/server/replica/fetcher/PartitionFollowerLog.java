package io.strata.server.replica.fetcher;

import io.strata.protocol.records.MemoryRecords;
import io.strata.server.replica.Partition;
import io.strata.storage.EpochOffset;
import io.strata.storage.TopicPartition;

import java.io.IOException;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * A hosted {@link Partition}'s log as its fetcher fills it while this node follows. Appends keep
 * the leader's offsets and epochs and refuse batches of a leader epoch newer than the one this
 * node follows (KAFKA-18723); with {@code strata.fsync=on-ack} an append is flushed before the
 * fetcher's next Fetch reports the new log end, so a follower counted in the high watermark holds
 * the data on disk, as the leader does. The follower's high watermark only moves forward here
 * (truncation lowers it); every move is reported to {@code onHighWatermark} (delayed consumer
 * fetches on this replica). The bytes of every append are reported to {@code onAppendedBytes}
 * (Kafka's ReplicationBytesInPerSec), and also to {@code onReassignmentBytes} while this node is
 * an adding replica of a running reassignment (Kafka's ReassignmentBytesInPerSec).
 *
 * <p>The log is the partition's current one at each call (a move between data directories
 * replaces it); changes run under the partition's read lock ({@link Partition#changeFollowerLog}),
 * so a swap of the log never interleaves with them.
 *
 * <p>Thread-safe: the log serialises its own changes.
 */
final class PartitionFollowerLog implements FollowerLog {
    private final Partition partition;
    private final Consumer<TopicPartition> onHighWatermark;
    private final LongConsumer onAppendedBytes;
    private final LongConsumer onReassignmentBytes;

    PartitionFollowerLog(Partition partition, Consumer<TopicPartition> onHighWatermark, LongConsumer onAppendedBytes) {
        this(partition, onHighWatermark, onAppendedBytes, bytes -> { });
    }

    PartitionFollowerLog(Partition partition, Consumer<TopicPartition> onHighWatermark, LongConsumer onAppendedBytes,
                         LongConsumer onReassignmentBytes) {
        this.partition = partition;
        this.onHighWatermark = onHighWatermark;
        this.onAppendedBytes = onAppendedBytes;
        this.onReassignmentBytes = onReassignmentBytes;
    }

    @Override
    public TopicPartition topicPartition() {
        return partition.topicPartition();
    }

    @Override
    public UUID topicId() {
        return partition.topicId();
    }

    @Override
    public long logStartOffset() {
        return partition.log().logStartOffset();
    }

    @Override
    public long logEndOffset() {
        return partition.log().logEndOffset();
    }

    @Override
    public long highWatermark() {
        return partition.log().highWatermark();
    }

    @Override
    public OptionalInt latestEpoch() {
        return partition.log().latestEpoch();
    }

    @Override
    public Optional<EpochOffset> endOffsetForEpoch(int epoch) {
        return partition.log().endOffsetForEpoch(epoch);
    }

    @Override
    public void truncateTo(long offset) throws IOException {
        partition.changeFollowerLog(log -> {
            log.truncateTo(offset);
            return null;
        });
    }

    @Override
    public void truncateFullyAndStartAt(long offset) throws IOException {
        partition.changeFollowerLog(log -> {
            log.truncateFullyAndStartAt(offset);
            return null;
        });
    }

    @Override
    public long appendAsFollower(MemoryRecords records, int currentLeaderEpoch) throws IOException {
        long end = partition.changeFollowerLog(log -> {
            log.appendAsFollower(records, currentLeaderEpoch);
            long appendedEnd = log.logEndOffset();
            if (log.fsyncOnAck()) {
                log.flush(appendedEnd);
            }
            return appendedEnd;
        });
        onAppendedBytes.accept(records.sizeInBytes());
        if (partition.isAddingLocalReplica()) {
            onReassignmentBytes.accept(records.sizeInBytes());
        }
        return end;
    }

    @Override
    public void updateHighWatermark(long leaderHighWatermark) {
        boolean moved;
        try {
            moved = partition.changeFollowerLog(log -> {
                long target = Math.min(leaderHighWatermark, log.logEndOffset());
                if (target > log.highWatermark()) {
                    log.updateHighWatermark(target);
                    return true;
                }
                return false;
            });
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("moving the high watermark of " + partition.topicPartition() + " failed", e);
        }
        if (moved) {
            onHighWatermark.accept(partition.topicPartition());
        }
    }

    @Override
    public void maybeIncrementLogStartOffset(long leaderLogStartOffset) throws IOException {
        partition.changeFollowerLog(log -> log.maybeIncrementLogStartOffset(leaderLogStartOffset));
    }

    @Override
    public String toString() {
        return "PartitionFollowerLog(" + partition.topicPartition() + ")";
    }
}
