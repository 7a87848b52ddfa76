package io.strata.coordinator;

import io.strata.common.MockTime;
import io.strata.coordinator.group.consumer.CoordinatorTimer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Coordinator timers on a {@link MockTime}, for every shard of a coordinator: nothing fires until
 * the test calls {@link #advance}, which moves the clock to each due deadline in order and runs
 * the task on its shard's thread (as the real timer does), waiting for it before the next.
 * Tasks that a run schedules (a periodic pass rescheduling itself) fire within the same advance
 * if they fall due before its end. Thread-safe: shards schedule from their threads.
 */
public final class SteppedCoordinatorTimers implements Function<ScheduledExecutorService, CoordinatorTimer> {
    private record Entry(long deadlineMs, long sequence, Runnable task, ScheduledExecutorService executor) {
    }

    private final MockTime time;
    private final Map<String, Entry> timers = new HashMap<>();
    private long sequence;
    private int shards;

    public SteppedCoordinatorTimers(MockTime time) {
        this.time = time;
    }

    @Override
    public synchronized CoordinatorTimer apply(ScheduledExecutorService executor) {
        String prefix = "shard" + shards++ + "/";
        return new CoordinatorTimer() {
            @Override
            public void schedule(String key, long delayMs, Runnable task) {
                synchronized (SteppedCoordinatorTimers.this) {
                    timers.put(prefix + key, new Entry(time.milliseconds() + delayMs, sequence++, task, executor));
                }
            }

            @Override
            public void cancel(String key) {
                synchronized (SteppedCoordinatorTimers.this) {
                    timers.remove(prefix + key);
                }
            }

            @Override
            public void cancelAll() {
                synchronized (SteppedCoordinatorTimers.this) {
                    timers.keySet().removeIf(key -> key.startsWith(prefix));
                }
            }

            @Override
            public boolean isScheduled(String key) {
                synchronized (SteppedCoordinatorTimers.this) {
                    return timers.containsKey(prefix + key);
                }
            }
        };
    }

    /** How many timers are set (every shard). */
    public synchronized int scheduled() {
        return timers.size();
    }

    /** Moves the clock forward by {@code ms}, running every task that falls due, at its deadline, on its shard's thread. */
    public void advance(long ms) throws Exception {
        long endMs = time.milliseconds() + ms;
        while (true) {
            Entry next;
            synchronized (this) {
                Map.Entry<String, Entry> due = null;
                for (Map.Entry<String, Entry> entry : timers.entrySet()) {
                    Entry candidate = entry.getValue();
                    if (candidate.deadlineMs() <= endMs && (due == null || candidate.deadlineMs() < due.getValue().deadlineMs()
                        || candidate.deadlineMs() == due.getValue().deadlineMs() && candidate.sequence() < due.getValue().sequence())) {
                        due = entry;
                    }
                }
                if (due == null) {
                    break;
                }
                timers.remove(due.getKey());
                next = due.getValue();
            }
            time.advance(Math.max(0, next.deadlineMs() - time.milliseconds()));
            CompletableFuture<Void> ran = new CompletableFuture<>();
            next.executor().execute(() -> {
                try {
                    next.task().run();
                } finally {
                    ran.complete(null);
                }
            });
            ran.get(10, TimeUnit.SECONDS);
        }
        time.advance(Math.max(0, endMs - time.milliseconds()));
    }

    /** The tasks of one advance, for assertions: keys currently set. */
    public synchronized List<String> keys() {
        return new ArrayList<>(timers.keySet());
    }
}
