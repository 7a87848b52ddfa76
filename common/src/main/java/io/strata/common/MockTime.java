package io.strata.common;

import java.util.concurrent.atomic.AtomicLong;

/** A clock that only moves when told to; {@link #sleep} advances it. Thread-safe. */
public final class MockTime implements Time {
    private final AtomicLong wallClockMs;
    private final AtomicLong monotonicNs;

    public MockTime() {
        this(1_700_000_000_000L);
    }

    public MockTime(long startWallClockMs) {
        this.wallClockMs = new AtomicLong(startWallClockMs);
        this.monotonicNs = new AtomicLong(0);
    }

    @Override
    public long milliseconds() {
        return wallClockMs.get();
    }

    @Override
    public long nanoseconds() {
        return monotonicNs.get();
    }

    @Override
    public void sleep(long ms) {
        advance(ms);
    }

    public void advance(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("time cannot move backwards: ms=" + ms);
        }
        wallClockMs.addAndGet(ms);
        monotonicNs.addAndGet(ms * 1_000_000L);
    }
}
