package io.strata.coordinator.group.consumer;

/**
 * Keyed one-shot timers of a coordinator shard. Tasks run on the shard's thread; scheduling a
 * key that is already scheduled replaces the earlier task. Not thread-safe: used only from the
 * shard's thread.
 *
 * <p>Every coordinator timer goes through this interface (member sessions, rebalance timeouts,
 * offset expiration, transaction timeouts and transactional id expiration), so a test replaces
 * it with a timer on a mock clock and steps the coordinator deterministically.
 */
public interface CoordinatorTimer {
    void schedule(String key, long delayMs, Runnable task);

    void cancel(String key);

    boolean isScheduled(String key);

    /** Cancels every scheduled task (the shard stops being coordinated here). */
    void cancelAll();

    /**
     * Runs {@code task} every {@code intervalMs} (fixed delay: the next run is scheduled when one
     * ends) until {@link #cancel} of the key. The next run is scheduled even if {@code task}
     * throws; the task must still report its own failures (see
     * {@link io.strata.common.BackgroundErrors#guard}), because the exception then goes on to
     * the executor, whose handling is not this timer's.
     */
    default void schedulePeriodic(String key, long intervalMs, Runnable task) {
        schedule(key, intervalMs, () -> {
            try {
                task.run();
            } finally {
                if (!isScheduled(key)) {
                    schedulePeriodic(key, intervalMs, task);
                }
            }
        });
    }
}
