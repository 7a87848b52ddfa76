package io.strata.server.replica.fetcher;

import io.strata.protocol.records.MemoryRecords;
import io.strata.storage.EpochOffset;
import io.strata.storage.TopicPartition;

import java.io.IOException;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

/**
 * The local replica a fetcher fills: one partition's follower log. The integrator implements it
 * over {@code Partition} / {@code UnifiedLog}; tests implement it in memory.
 *
 * <p>Contract the fetcher relies on:
 * <ul>
 *   <li>{@link #appendAsFollower} keeps the leader's offsets and partition leader epochs, assigns
 *       epoch-cache entries per batch and returns the new log end offset. It checks the batches
 *       before writing any, as {@code UnifiedLog.appendAsFollower} does: a CRC failure, offsets
 *       that do not grow or a leader epoch above {@code currentLeaderEpoch} is an
 *       {@code ErrorCodeException} CORRUPT_MESSAGE / INVALID_RECORD (the fetcher retries after a
 *       back-off); a first batch below the log end, a storage problem or a bug fails the partition.</li>
 *   <li>{@link #updateHighWatermark} sets the follower high watermark to
 *       {@code min(leaderHighWatermark, logEndOffset)}. The fetcher calls it only after any
 *       truncation of the same answer (KAFKA-14704).</li>
 *   <li>{@link #truncateTo} removes every offset at or above {@code offset} (and the epoch-cache
 *       entries starting there, KAFKA-10706, even when {@code offset >= logEndOffset()}); it may lower the
 *       high watermark. {@link #truncateFullyAndStartAt} empties the log and moves log start, log
 *       end and high watermark to {@code offset} (KAFKA-9491).</li>
 *   <li>{@link #maybeIncrementLogStartOffset} is only called with a value no greater than the
 *       local high watermark.</li>
 *   <li>I/O failures are {@link IOException}s, or {@code ErrorCodeException(KAFKA_STORAGE_ERROR)}.</li>
 * </ul>
 *
 * <p>Implementations are thread-safe: the fetcher thread writes while request handlers read.
 */
public interface FollowerLog {
    TopicPartition topicPartition();

    UUID topicId();

    long logStartOffset();

    long logEndOffset();

    long highWatermark();

    /** The leader epoch of the last entry of the epoch cache, or empty if the cache is empty. */
    OptionalInt latestEpoch();

    /**
     * The largest local epoch {@code <= epoch} and its exclusive end offset (storage's
     * {@code UnifiedLog.endOffsetForEpoch}), or empty if the log knows no such epoch.
     */
    Optional<EpochOffset> endOffsetForEpoch(int epoch);

    void truncateTo(long offset) throws IOException;

    void truncateFullyAndStartAt(long offset) throws IOException;

    /**
     * Appends the leader's batches unchanged, fetched while following leader epoch {@code currentLeaderEpoch}.
     *
     * @return the log end offset after the append
     */
    long appendAsFollower(MemoryRecords records, int currentLeaderEpoch) throws IOException;

    /** Follower high watermark = min(leader's, local log end); it never moves back within an epoch. */
    void updateHighWatermark(long leaderHighWatermark);

    void maybeIncrementLogStartOffset(long leaderLogStartOffset) throws IOException;
}
