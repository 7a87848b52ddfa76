package io.strata.chaos.nemesis;

/** A {@link ScheduleClock} that advances only when slept on. Not thread-safe. */
final class FakeClock implements ScheduleClock {
    private long nanos;

    @Override
    public long nanoTime() {
        return nanos;
    }

    @Override
    public long wallMs() {
        return 1_764_640_000_000L + nanos / 1_000_000;
    }

    @Override
    public void sleepNanos(long sleep) {
        if (sleep < 0) {
            throw new IllegalArgumentException("sleep must be >= 0: sleep=" + sleep);
        }
        nanos += sleep;
    }
}
