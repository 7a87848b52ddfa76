package io.strata.common;

/**
 * The clock and sleep that every time-dependent component takes, so tests can drive time.
 * {@link #SYSTEM} is the only place that reads the system clock.
 */
public interface Time {
    Time SYSTEM = new Time() {
        @Override
        public long milliseconds() {
            return System.currentTimeMillis();
        }

        @Override
        public long nanoseconds() {
            return System.nanoTime();
        }

        @Override
        public void sleep(long ms) throws InterruptedException {
            Thread.sleep(ms);
        }
    };

    /** Wall-clock milliseconds since the epoch (timestamps, retention). */
    long milliseconds();

    /** A monotonic clock for measuring intervals. */
    long nanoseconds();

    void sleep(long ms) throws InterruptedException;

    /** Monotonic milliseconds, for deadlines and timers. */
    default long hiResClockMs() {
        return nanoseconds() / 1_000_000L;
    }
}
