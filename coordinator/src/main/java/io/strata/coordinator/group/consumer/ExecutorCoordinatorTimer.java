package io.strata.coordinator.group.consumer;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link CoordinatorTimer} on a shard's single-threaded executor. Because tasks, scheduling and
 * cancellation all run on that one thread, a cancelled task never runs: cancellation happens
 * either before the task starts or not at all; the token check covers a task already queued
 * when it was replaced.
 */
public final class ExecutorCoordinatorTimer implements CoordinatorTimer {
    private final ScheduledExecutorService executor;
    private final Map<String, ScheduledFuture<?>> timers = new HashMap<>();

    public ExecutorCoordinatorTimer(ScheduledExecutorService executor) {
        this.executor = executor;
    }

    @Override
    public void schedule(String key, long delayMs, Runnable task) {
        cancel(key);
        Object[] self = new Object[1];
        ScheduledFuture<?> future = executor.schedule(() -> {
            if (timers.get(key) == self[0]) {
                timers.remove(key);
                task.run();
            }
        }, delayMs, TimeUnit.MILLISECONDS);
        self[0] = future;
        timers.put(key, future);
    }

    @Override
    public void cancel(String key) {
        ScheduledFuture<?> future = timers.remove(key);
        if (future != null) {
            future.cancel(false);
        }
    }

    @Override
    public void cancelAll() {
        for (ScheduledFuture<?> future : timers.values()) {
            future.cancel(false);
        }
        timers.clear();
    }

    @Override
    public boolean isScheduled(String key) {
        return timers.containsKey(key);
    }
}
