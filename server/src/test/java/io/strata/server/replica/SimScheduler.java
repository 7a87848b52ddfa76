package io.strata.server.replica;

import io.strata.common.MockTime;

import java.util.PriorityQueue;

/**
 * The simulation's event queue over a {@link MockTime}: events run in time order (ties in
 * scheduling order), and the clock jumps to each event's time before it runs. Not thread-safe:
 * everything runs on the test thread.
 */
final class SimScheduler {
    private record Event(long timeMs, long sequence, String name, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(Event other) {
            int byTime = Long.compare(timeMs, other.timeMs);
            return byTime != 0 ? byTime : Long.compare(sequence, other.sequence);
        }
    }

    /** Bound on queued events: a simulation that keeps more is a runaway (each node schedules a few at a time). */
    private static final int MAX_QUEUED_EVENTS = 100_000;

    final MockTime time = new MockTime(0L);
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private long sequence;
    private String lastEvent = "none";

    void schedule(long delayMs, String name, Runnable action) {
        if (delayMs < 0) {
            throw new IllegalArgumentException("negative delay: delayMs=" + delayMs + " for " + name);
        }
        if (queue.size() >= MAX_QUEUED_EVENTS) {
            throw new IllegalStateException("event queue full: size=" + queue.size() + ", adding " + name);
        }
        queue.add(new Event(time.milliseconds() + delayMs, sequence++, name, action));
    }

    long nowMs() {
        return time.milliseconds();
    }

    String lastEvent() {
        return lastEvent;
    }

    /** Runs the next event. @return false if there was none */
    boolean runOne() {
        Event event = queue.poll();
        if (event == null) {
            return false;
        }
        long now = time.milliseconds();
        if (event.timeMs() > now) {
            time.advance(event.timeMs() - now);
        }
        lastEvent = event.name() + " @" + event.timeMs();
        event.action().run();
        return true;
    }
}
