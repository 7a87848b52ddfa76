package io.strata.server.purgatory;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Parks {@link DelayedOperation}s until they complete or expire. Each operation is
 * watched under one or more keys (a partition, a group); whoever changes the state
 * behind a key calls {@link #checkAndComplete(Object)} to retry that key's operations.
 * Every watched operation is also on a {@link Timer}, which completes it as expired when
 * its delay runs out.
 *
 * <p>Watch lists live in {@value #SHARD_COUNT} shards, each a concurrent map from key to
 * list guarded by its own monitor, so watching operations on different partitions
 * rarely contends. A completed operation stays on the lists of its other keys until
 * one of them is checked or a purge runs: a purge runs from {@link #advanceClock(long)}
 * once the estimated number of such completed-but-watched operations exceeds
 * {@code purgeIntervalRequests}.
 *
 * <p>An "expiration reaper" thread, when enabled, calls {@code advanceClock(}{@value
 * #REAPER_POLL_MS}{@code )} in a loop; tests disable it and call
 * {@link #advanceClock(long)} themselves after moving a mock clock. The purgatory does
 * not cap its own size: each operation stands for a request, and requests are already
 * bounded by the request channel and per-connection in-flight limits.
 *
 * <p>Thread-safe. Lock order: an operation's lock, then a shard's monitor (taken inside
 * {@link DelayedOperation#safeTryCompleteOrElse}); a shard's monitor is never held while
 * taking an operation's lock.
 *
 * @param <T> the kind of operation this purgatory holds
 */
public final class DelayedOperationPurgatory<T extends DelayedOperation> {
    private static final Logger LOG = LoggerFactory.getLogger(DelayedOperationPurgatory.class);

    /** Watch-list shards: enough that concurrent handler threads rarely share one. */
    static final int SHARD_COUNT = 512;
    /** How long the reaper waits for a bucket to fall due; bounds its shutdown latency. */
    static final long REAPER_POLL_MS = 200;

    private final String purgatoryName;
    private final Timer timer;
    private final int purgeIntervalRequests;
    private final List<WatcherShard> shards;
    /** Operations watched since the last purge; minus {@link #numDelayed()}, the completed ones still watched. */
    private final AtomicInteger estimatedTotalOperations = new AtomicInteger();
    private final LongAdder expirationCount = new LongAdder();
    private final ExpirationReaper reaper;
    /** Where the reaper counts its failures; set once at start-up, before operations arrive. */
    private volatile BackgroundErrors backgroundErrors = new BackgroundErrors();

    /** A purgatory with its own {@link SystemTimer} and a running reaper thread. */
    public DelayedOperationPurgatory(String purgatoryName, Time time, int purgeIntervalRequests) {
        this(purgatoryName, new SystemTimer(purgatoryName, time), purgeIntervalRequests, true);
    }

    /** The purgatory owns {@code timer} from now on and closes it in {@link #shutdown()}. */
    public DelayedOperationPurgatory(
        String purgatoryName, Timer timer, int purgeIntervalRequests, boolean reaperEnabled) {
        if (purgeIntervalRequests < 0) {
            throw new IllegalArgumentException("purge interval must not be negative: purgatory=" + purgatoryName
                + ", purgeIntervalRequests=" + purgeIntervalRequests);
        }
        this.purgatoryName = purgatoryName;
        this.timer = timer;
        this.purgeIntervalRequests = purgeIntervalRequests;
        List<WatcherShard> newShards = new ArrayList<>(SHARD_COUNT);
        for (int shard = 0; shard < SHARD_COUNT; shard++) {
            newShards.add(new WatcherShard());
        }
        this.shards = List.copyOf(newShards);
        this.reaper = reaperEnabled ? new ExpirationReaper() : null;
        if (reaper != null) {
            reaper.start();
        }
    }

    /** Background task name (metric label) of the reapers' failures. */
    public static final String REAPER_TASK = "purgatory-expiration-reaper";

    /** Where the expiration reaper counts the failures it survives (a fresh counter unless set). */
    public void setBackgroundErrors(BackgroundErrors errors) {
        this.backgroundErrors = errors;
    }

    /**
     * Completes {@code operation} now if it can; otherwise watches it under every key in
     * {@code watchKeys}, tries once more (a completion could have slipped in before it
     * was watched), and if still pending puts it on the timer.
     *
     * @return true if this call completed the operation
     */
    public boolean tryCompleteElseWatch(T operation, List<?> watchKeys) {
        if (watchKeys.isEmpty()) {
            throw new IllegalArgumentException("an operation needs at least one watch key: purgatory=" + purgatoryName);
        }
        operation.countExpirationsIn(expirationCount);
        if (operation.safeTryCompleteOrElse(() -> watchAll(operation, watchKeys))) {
            return true;
        }
        if (!operation.isCompleted()) {
            timer.add(operation);
            if (operation.isCompleted()) {
                // Completed between the check and the add: its forceComplete found no timer entry to cancel.
                operation.cancel();
            }
        }
        return false;
    }

    private void watchAll(T operation, List<?> watchKeys) {
        for (Object key : watchKeys) {
            shardFor(key).watch(key, operation);
        }
        estimatedTotalOperations.incrementAndGet();
    }

    /**
     * Tries to complete every operation watched under {@code key}, dropping completed ones
     * from that key's list.
     *
     * @return how many operations this call completed
     */
    public int checkAndComplete(Object key) {
        Watchers watchers = shardFor(key).watchers(key);
        return watchers == null ? 0 : watchers.tryCompleteWatched();
    }

    /**
     * Stops watching {@code key} and takes its operations off the timer without completing
     * them (for example when a partition moves away and the caller answers them itself).
     *
     * @return the operations that were watched under {@code key}
     */
    public List<T> cancelForKey(Object key) {
        Watchers watchers = shardFor(key).removeKey(key);
        return watchers == null ? List.of() : watchers.cancelAll();
    }

    /**
     * Runs due expirations (waiting up to {@code timeoutMs} for one) and purges completed
     * operations from the watch lists if enough have piled up.
     */
    public void advanceClock(long timeoutMs) throws InterruptedException {
        timer.advanceClock(timeoutMs);
        maybePurge();
    }

    private void maybePurge() {
        int delayed = numDelayed();
        if (estimatedTotalOperations.get() - delayed <= purgeIntervalRequests) {
            return;
        }
        estimatedTotalOperations.set(delayed);
        int purged = 0;
        for (WatcherShard shard : shards) {
            purged += shard.purgeCompleted();
        }
        LOG.debug("Purged {} completed operations from the watch lists of purgatory {}", purged, purgatoryName);
    }

    /** Entries on all watch lists, counting an operation once per key; O(entries). */
    public int watched() {
        int count = 0;
        for (WatcherShard shard : shards) {
            count += shard.countWatched();
        }
        return count;
    }

    /** Operations on the timer: watched, not yet completed or expired. */
    public int numDelayed() {
        return timer.size();
    }

    /** Operations completed by their timer since this purgatory was created. */
    public long numExpired() {
        return expirationCount.sum();
    }

    public String purgatoryName() {
        return purgatoryName;
    }

    /** Stops the reaper (if any) and closes the timer; pending operations are left as they are. */
    public void shutdown() {
        if (reaper != null) {
            reaper.stopAndJoin();
        }
        timer.close();
    }

    private WatcherShard shardFor(Object key) {
        int hash = key.hashCode();
        return shards.get(Math.floorMod(hash ^ (hash >>> 16), SHARD_COUNT));
    }

    /** One shard of the watch lists; its monitor makes "remove an empty list" atomic with "append to it". */
    private final class WatcherShard {
        private final ConcurrentHashMap<Object, Watchers> watchersByKey = new ConcurrentHashMap<>();

        synchronized void watch(Object key, T operation) {
            watchersByKey.computeIfAbsent(key, Watchers::new).watch(operation);
        }

        Watchers watchers(Object key) {
            return watchersByKey.get(key);
        }

        synchronized Watchers removeKey(Object key) {
            return watchersByKey.remove(key);
        }

        synchronized void removeIfEmpty(Watchers watchers) {
            if (watchers.isEmpty()) {
                watchersByKey.remove(watchers.key, watchers);
            }
        }

        int purgeCompleted() {
            int purged = 0;
            for (Watchers watchers : watchersByKey.values()) {
                purged += watchers.purgeCompleted();
            }
            return purged;
        }

        int countWatched() {
            int count = 0;
            for (Watchers watchers : watchersByKey.values()) {
                count += watchers.size();
            }
            return count;
        }
    }

    /** The operations watched under one key, in watch order. Lock-free appends and removals. */
    private final class Watchers {
        private final Object key;
        private final ConcurrentLinkedQueue<T> operations = new ConcurrentLinkedQueue<>();

        Watchers(Object key) {
            this.key = key;
        }

        void watch(T operation) {
            operations.add(operation);
        }

        boolean isEmpty() {
            return operations.isEmpty();
        }

        int size() {
            return operations.size();
        }

        int tryCompleteWatched() {
            int completed = 0;
            for (Iterator<T> iterator = operations.iterator(); iterator.hasNext(); ) {
                T operation = iterator.next();
                if (operation.isCompleted()) {
                    iterator.remove();
                } else if (operation.safeTryComplete()) {
                    iterator.remove();
                    completed++;
                }
            }
            shardFor(key).removeIfEmpty(this);
            return completed;
        }

        int purgeCompleted() {
            int purged = 0;
            for (Iterator<T> iterator = operations.iterator(); iterator.hasNext(); ) {
                if (iterator.next().isCompleted()) {
                    iterator.remove();
                    purged++;
                }
            }
            shardFor(key).removeIfEmpty(this);
            return purged;
        }

        List<T> cancelAll() {
            List<T> cancelled = new ArrayList<>();
            for (T operation = operations.poll(); operation != null; operation = operations.poll()) {
                operation.cancel();
                cancelled.add(operation);
            }
            return cancelled;
        }
    }

    /** The thin thread that drives expiry in production. */
    private final class ExpirationReaper extends Thread {
        private volatile boolean running = true;

        ExpirationReaper() {
            super("ExpirationReaper-" + purgatoryName);
            setDaemon(true);
        }

        @Override
        public void run() {
            while (running) {
                try {
                    advanceClock(REAPER_POLL_MS);
                } catch (InterruptedException e) {
                    // Shutdown interrupts a wait; the loop condition decides whether to stop.
                } catch (Throwable e) {
                    // Anything else, errors included, must not end the thread: parked operations would never expire.
                    backgroundErrors.record(REAPER_TASK);
                    LOG.error("Expiration reaper of purgatory {} failed to advance the clock; it goes on", purgatoryName, e);
                }
            }
        }

        void stopAndJoin() {
            running = false;
            interrupt();
            try {
                join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
