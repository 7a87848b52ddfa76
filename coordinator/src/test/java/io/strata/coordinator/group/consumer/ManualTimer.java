package io.strata.coordinator.group.consumer;

import io.strata.common.MockTime;

import java.util.HashMap;
import java.util.Map;

/** A {@link CoordinatorTimer} driven by a {@link MockTime}: tasks run only inside {@link #advance}, in deadline order. */
final class ManualTimer implements CoordinatorTimer {
    private record Entry(long deadlineMs, long sequence, Runnable task) {
    }

    private final MockTime time;
    private final Map<String, Entry> timers = new HashMap<>();
    private long sequence;

    ManualTimer(MockTime time) {
        this.time = time;
    }

    @Override
    public void schedule(String key, long delayMs, Runnable task) {
        timers.put(key, new Entry(time.milliseconds() + delayMs, sequence++, task));
    }

    @Override
    public void cancel(String key) {
        timers.remove(key);
    }

    @Override
    public void cancelAll() {
        timers.clear();
    }

    @Override
    public boolean isScheduled(String key) {
        return timers.containsKey(key);
    }

    /** Moves the clock forward by {@code ms}, running every task that falls due (at its deadline). */
    void advance(long ms) {
        long end = time.milliseconds() + ms;
        while (true) {
            Map.Entry<String, Entry> next = null;
            for (Map.Entry<String, Entry> entry : timers.entrySet()) {
                Entry candidate = entry.getValue();
                if (candidate.deadlineMs() <= end && (next == null || candidate.deadlineMs() < next.getValue().deadlineMs()
                    || candidate.deadlineMs() == next.getValue().deadlineMs() && candidate.sequence() < next.getValue().sequence())) {
                    next = entry;
                }
            }
            if (next == null) {
                break;
            }
            timers.remove(next.getKey());
            time.advance(Math.max(0, next.getValue().deadlineMs() - time.milliseconds()));
            next.getValue().task().run();
        }
        time.advance(end - time.milliseconds());
    }
}
