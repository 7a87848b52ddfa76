package io.strata.common;

import org.slf4j.Logger;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * Single-threaded schedulers for background work that report what their tasks throw.
 *
 * <p>A {@link ScheduledThreadPoolExecutor} wraps every task, even one given to {@code execute},
 * in a future: an exception ends up in that future, which nobody reads, so it vanishes, and a
 * periodic task that throws is cancelled for good. The executors made here look at each task's
 * future after it ran and log and count (under {@code task}) any failure, as a safety net under
 * the explicit {@link BackgroundErrors#guard} that every periodic task has.
 */
public final class BackgroundExecutors {
    private BackgroundExecutors() {
    }

    /**
     * A one-thread scheduler whose daemon thread is named {@code threadName}; removes cancelled
     * tasks at once (coordinator timers are cancelled and replaced all the time).
     */
    public static ScheduledThreadPoolExecutor singleThreadScheduler(String threadName, String task, BackgroundErrors errors, Logger log) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, threadName);
            thread.setDaemon(true);
            return thread;
        }) {
            @Override
            protected void afterExecute(Runnable runnable, Throwable thrown) {
                super.afterExecute(runnable, thrown);
                Throwable failure = thrown != null ? thrown : failureOf(runnable);
                if (failure != null) {
                    errors.record(task);
                    log.error("A task on {} failed", threadName, failure);
                }
            }
        };
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /** The exception a finished task's future holds, or null (still periodic, cancelled, or succeeded). */
    private static Throwable failureOf(Runnable runnable) {
        if (!(runnable instanceof Future<?> future) || !future.isDone() || future.isCancelled()) {
            return null;
        }
        try {
            future.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (CancellationException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
