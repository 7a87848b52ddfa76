package io.strata.coordinator.group.consumer;

/**
 * Keyed one-shot timers of a coordinator shard. Tasks run on the shard's thread; scheduling a
 * key that is already scheduled replaces the earlier task. Not thread-safe: used only from the
 * shard's thread.
 */
public interface CoordinatorTimer {
    void schedule(String key, long delayMs, Runnable task);

    void cancel(String key);

    boolean isScheduled(String key);
}
