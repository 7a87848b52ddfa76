package io.strata.server.replica;

import io.strata.storage.FutureLogCopier;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Moves partitions between data directories (AlterReplicaLogDirs, KIP-113; Kafka's
 * {@code ReplicaAlterLogDirsThread}): fills each future log of the {@link LogManager} from its
 * partition's current log in bounded chunks ({@link FutureLogCopier}), throttled by
 * {@code replica.alter.log.dirs.io.max.bytes.per.second}, and once it has caught up swaps it in
 * under the partition's write lock ({@link Partition#maybeReplaceLog}), where no leader or
 * follower append can interleave, so no acknowledged write is lost.
 *
 * <p>Every {@link #poll} first picks up the future logs it does not know yet: those a request just
 * created, and those left by a move a crash interrupted (the log manager loads them at start-up),
 * as soon as their partition is hosted here. A future log whose partition is not hosted (yet) waits.
 *
 * <h2>States of one move</h2>
 * <pre>
 *   from      event                                                       to
 *   (none)    a future log of a hosted partition is seen                   COPYING
 *   COPYING   poll: a chunk is copied (none while the throttle is over)    COPYING
 *   COPYING   the current log was truncated (a follower's new leader)      COPYING   future log restarted at the current log start
 *   COPYING   poll: caught up, and the swap under the write lock succeeds  DONE      the partition uses the moved log
 *   COPYING   abort (another target, partition removed) or its future log  ABORTED   future log deleted (abort) or already gone
 *             or partition or current log changed outside the mover
 *   DONE, ABORTED  any                                                     IllegalStateException
 * </pre>
 * A copy or swap that fails (an I/O error) leaves the move COPYING: the failure is logged with the
 * partition and both directories, counted in {@link #failures()}, and retried after
 * {@link #FAILURE_BACKOFF_MS}. A leadership change does not stop a move, as in Kafka: appends only
 * extend the current log, and a truncation restarts the copy (Kafka's future replica truncates
 * against its local leader instead).
 *
 * <p>Thread-safety: {@link #poll} runs on the mover's thread; {@link #abort} and the counters from
 * any thread. A move's step and an abort are serialised by this object's monitor, so an abort
 * never deletes a future log a copy is writing. Lock order: this monitor, then the partition's
 * lock, then the logs' locks.
 */
public final class LogDirMover {
    private static final Logger LOG = LoggerFactory.getLogger(LogDirMover.class);

    /** Most bytes one copy reads (Kafka's default replica.fetch.max.bytes): bounds a step's memory and time. */
    public static final int MAX_CHUNK_BYTES = 1 << 20;
    /**
     * Chunks copied under the partition's write lock to close the last gap before a swap: the mover
     * takes the lock only once it was caught up, so what remains is what producers appended since.
     * Past this the lock is released (appends wait meanwhile) and the swap is tried again.
     */
    static final int MAX_CHUNKS_UNDER_LOCK = 4;
    /** Wait before a move whose copy or swap failed is tried again. */
    public static final long FAILURE_BACKOFF_MS = 1_000L;
    /** Longest wait between polls while something is moving but throttled. */
    static final long THROTTLED_WAIT_MS = 50L;
    /** Longest wait between polls while nothing moves (a wake-up cuts it short). */
    static final long IDLE_WAIT_MS = 1_000L;

    /** The state of one move. */
    public enum State { COPYING, DONE, ABORTED }

    /** One partition being moved: its copier, the logs it was built for, and the current log's truncation count it copied after. */
    private static final class Move {
        final Partition partition;
        final UnifiedLog current;
        final UnifiedLog future;
        final FutureLogCopier copier;
        long truncationsSeen;
        long retryAtMs;
        State state = State.COPYING;

        Move(Partition partition, UnifiedLog current, UnifiedLog future) {
            this.partition = partition;
            this.current = current;
            this.future = future;
            this.copier = new FutureLogCopier(current, future, MAX_CHUNK_BYTES);
            this.truncationsSeen = current.truncationCount();
        }

        void transitionTo(State next) {
            if (state != State.COPYING || next == State.COPYING) {
                throw new IllegalStateException("Illegal move transition of " + partition.topicPartition() + ": from=" + state + ", to=" + next);
            }
            state = next;
        }
    }

    private final LogManager logManager;
    private final Function<TopicPartition, Partition> partitions;
    private final ReplicationQuotaManager quota;
    /** Guarded by this. */
    private final Map<TopicPartition, Move> moves = new LinkedHashMap<>();
    private final AtomicLong bytesCopied = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong aborted = new AtomicLong();
    private final AtomicLong copyRestarts = new AtomicLong();
    private volatile Runnable wakeup = () -> { };

    /**
     * @param partitions the hosted partition of a topic partition, or null (ReplicaManager::partition)
     * @param quota      the {@link ReplicationQuotaManager.Side#ALTER_LOG_DIRS} throttle; every copied byte counts
     */
    public LogDirMover(LogManager logManager, Function<TopicPartition, Partition> partitions, ReplicationQuotaManager quota) {
        this.logManager = Objects.requireNonNull(logManager, "logManager");
        this.partitions = Objects.requireNonNull(partitions, "partitions");
        this.quota = Objects.requireNonNull(quota, "quota");
    }

    /** Called when a move is added, so the runner polls at once. */
    public void setWakeup(Runnable wakeup) {
        this.wakeup = Objects.requireNonNull(wakeup, "wakeup");
    }

    /** Tells the runner that a future log was created (AlterReplicaLogDirs). */
    public void wakeup() {
        wakeup.run();
    }

    /**
     * Advances every move by one step: at most one chunk copied per partition, or its swap.
     *
     * @return when to poll next (now when there is more to copy)
     */
    public synchronized long poll(long nowMs) {
        discover();
        boolean more = false;
        boolean throttled = false;
        for (Move move : new ArrayList<>(moves.values())) {
            if (move.retryAtMs > nowMs) {
                continue;
            }
            if (quota.isQuotaExceeded()) {
                throttled = true;
                break;
            }
            try {
                more |= step(move);
            } catch (IOException | RuntimeException e) {
                failures.incrementAndGet();
                move.retryAtMs = nowMs + FAILURE_BACKOFF_MS;
                LOG.error("Moving {} from {} to {} failed; retrying in {} ms", move.partition.topicPartition(), move.current.dir().getParent(),
                    move.future.dir().getParent(), FAILURE_BACKOFF_MS, e);
            }
        }
        if (more) {
            return nowMs;
        }
        if (throttled) {
            return nowMs + THROTTLED_WAIT_MS;
        }
        long next = nowMs + IDLE_WAIT_MS;
        for (Move move : moves.values()) {
            next = Math.min(next, Math.max(nowMs, move.retryAtMs));
        }
        return next;
    }

    /** Starts a move for each future log of a hosted partition not yet moving. Caller holds the monitor. */
    private void discover() {
        for (UnifiedLog future : logManager.allFutureLogs()) {
            TopicPartition topicPartition = future.topicPartition();
            Move known = moves.get(topicPartition);
            if (known != null && known.future == future) {
                continue;
            }
            Partition partition = partitions.apply(topicPartition);
            if (partition == null) {
                continue; // not hosted (yet): a future log resumed at start-up waits for its partition
            }
            if (known != null) {
                finish(known, State.ABORTED); // its future log was replaced (aborted and requested again)
            }
            moves.put(topicPartition, new Move(partition, partition.log(), future));
            LOG.info("Moving {} from {} to {}", topicPartition, partition.log().dir().getParent(), future.dir().getParent());
        }
    }

    /** One step of a move. Caller holds the monitor. @return whether more is left to copy at once */
    private boolean step(Move move) throws IOException {
        TopicPartition topicPartition = move.partition.topicPartition();
        if (logManager.getFutureLog(topicPartition) != move.future || partitions.apply(topicPartition) != move.partition
            || move.partition.log() != move.current) {
            // Changed outside the mover (deleted, recreated, or replaced): the next discovery starts over from what is there now.
            finish(move, State.ABORTED);
            return false;
        }
        long truncations = move.current.truncationCount();
        if (truncations != move.truncationsSeen) {
            // The current log was truncated (a follower of a new leader): what was copied may differ from it now.
            move.future.truncateFullyAndStartAt(move.current.logStartOffset());
            move.truncationsSeen = truncations;
            copyRestarts.incrementAndGet();
            LOG.info("The log of {} was truncated while moving; copying it again from offset {}", topicPartition, move.current.logStartOffset());
        }
        int bytes = move.copier.copyOnce(chunkBytes());
        record(bytes);
        if (!move.copier.isCaughtUp()) {
            return true;
        }
        if (move.partition.maybeReplaceLog(current -> swapUnderLock(move, current))) {
            finish(move, State.DONE);
            return false;
        }
        return true;
    }

    /** Under the partition's write lock: closes the last gap and swaps, or answers null to try again later. */
    private UnifiedLog swapUnderLock(Move move, UnifiedLog current) throws IOException {
        if (current != move.current || current.truncationCount() != move.truncationsSeen) {
            return null;
        }
        for (int chunk = 0; chunk < MAX_CHUNKS_UNDER_LOCK && !move.copier.isCaughtUp(); chunk++) {
            record(move.copier.copyOnce(MAX_CHUNK_BYTES));
        }
        if (!move.copier.isCaughtUp()) {
            return null;
        }
        return logManager.replaceCurrentWithFutureLog(move.partition.topicPartition());
    }

    private void record(int bytes) {
        if (bytes > 0) {
            quota.record(bytes);
            bytesCopied.addAndGet(bytes);
        }
    }

    /** At most one second of the throttle's budget per chunk, so a low bound is not overshot by a whole chunk. */
    private int chunkBytes() {
        long bound = quota.upperBound();
        return (int) Math.max(1L, Math.min(MAX_CHUNK_BYTES, bound));
    }

    private void finish(Move move, State state) {
        move.transitionTo(state);
        moves.remove(move.partition.topicPartition(), move);
        if (state == State.DONE) {
            completed.incrementAndGet();
            LOG.info("Moved {} to {}", move.partition.topicPartition(), move.partition.log().dir().getParent());
        } else {
            aborted.incrementAndGet();
        }
    }

    /**
     * Stops the move of a partition and deletes its future log (another target directory, the
     * partition removed from this broker). Waits for a step in progress. Does nothing when there
     * is no future log.
     */
    public synchronized void abort(TopicPartition topicPartition) throws IOException {
        Move move = moves.get(topicPartition);
        if (move != null) {
            finish(move, State.ABORTED);
        }
        if (logManager.getFutureLog(topicPartition) != null) {
            logManager.abortAndDeleteFutureLog(topicPartition);
            LOG.info("Aborted the move of {}", topicPartition);
        }
    }

    /** The state of a partition's move: COPYING while one runs, else null. */
    public synchronized State state(TopicPartition topicPartition) {
        Move move = moves.get(topicPartition);
        return move == null ? null : move.state;
    }

    /** Partitions moving now. */
    public synchronized int moving() {
        return moves.size();
    }

    /** The largest offset lag (current log end minus future log end) among the moves running, 0 when none. */
    public synchronized long maxLag() {
        long max = 0;
        for (Move move : moves.values()) {
            max = Math.max(max, move.copier.offsetLag());
        }
        return max;
    }

    /** Bytes copied into future logs since start. */
    public long bytesCopied() {
        return bytesCopied.get();
    }

    /** Copies or swaps that failed (each was logged and retried). */
    public long failures() {
        return failures.get();
    }

    /** Moves that swapped their future log in. */
    public long completed() {
        return completed.get();
    }

    /** Moves stopped before the swap. */
    public long aborted() {
        return aborted.get();
    }

    /** Copies started over because the current log was truncated while moving. */
    public long copyRestarts() {
        return copyRestarts.get();
    }
}
