package io.strata.common;

import org.slf4j.Logger;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Failures of background work (periodic tasks, scheduled retries, flushers), counted per task.
 * A periodic task on a {@link java.util.concurrent.ScheduledExecutorService} that lets an
 * exception escape is cancelled for good, silently; every periodic task therefore runs inside
 * {@link #guard}, which logs the failure with the task's context, counts it here and returns, so
 * the next run happens as scheduled. The broker shares one instance between its components and
 * exports the counts as {@code strata_server_background_errors_total{task}}.
 *
 * <p>Task names are a small fixed set of constants (one per kind of work, not per partition):
 * they become metric labels. Thread-safe.
 */
public final class BackgroundErrors {
    private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();

    /** Counts one failure of {@code task}; the caller has logged it. */
    public void record(String task) {
        counts.computeIfAbsent(task, name -> new LongAdder()).increment();
    }

    /** Failures of {@code task} so far. */
    public long count(String task) {
        LongAdder count = counts.get(task);
        return count == null ? 0 : count.sum();
    }

    /** Failures so far by task, in name order. */
    public Map<String, Long> counts() {
        Map<String, Long> snapshot = new TreeMap<>();
        counts.forEach((task, count) -> snapshot.put(task, count.sum()));
        return snapshot;
    }

    /**
     * {@code body} wrapped so that nothing escapes it: a {@link Throwable} thrown by one run is
     * logged as an error on {@code log} with {@code context} (which names what the task works
     * on, e.g. "__transaction_state-3"), counted under {@code task}, and swallowed, so a
     * scheduled executor keeps the task. Errors of the JVM itself (out of memory) are counted
     * and logged too: the next run may well succeed once memory is freed.
     */
    public Runnable guard(String task, Logger log, String context, Runnable body) {
        return () -> {
            try {
                body.run();
            } catch (Throwable e) {
                record(task);
                log.error("Background task {} on {} failed; it runs again at its next interval", task, context, e);
            }
        };
    }
}
