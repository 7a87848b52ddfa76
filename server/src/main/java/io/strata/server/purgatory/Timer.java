package io.strata.server.purgatory;

/**
 * Runs {@link TimerTask}s after their delay. The clock only moves when
 * {@link #advanceClock(long)} is called, so the caller decides which thread expires
 * tasks (a reaper thread in production, the test thread under a mock clock).
 *
 * <p>Implementations are thread-safe.
 */
public interface Timer extends AutoCloseable {
    /** Schedules {@code task} to run {@link TimerTask#delayMs()} from now; runs it at once if that is already due. */
    void add(TimerTask task);

    /**
     * Runs every task that is due, first waiting up to {@code timeoutMs} for one to fall
     * due if none is yet.
     *
     * @return true if any bucket of tasks fell due
     */
    boolean advanceClock(long timeoutMs) throws InterruptedException;

    /** Number of tasks scheduled and not yet due or cancelled. */
    int size();

    /** Stops the task executor; tasks that fall due afterwards are dropped. */
    @Override
    void close();
}
