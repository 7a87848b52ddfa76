package io.strata.storage.cleaner;

import io.strata.common.Time;
import io.strata.storage.TopicPartition;

/**
 * Holds the I/O of all cleaner threads together to {@code log.cleaner.io.max.bytes.per.second},
 * with Apache Kafka's Throttler semantics: callers report the bytes they read or wrote; once a
 * check period ({@value #CHECK_INTERVAL_MS} ms) has passed and something was observed, the rate
 * of that period is compared with the desired rate, and if it is higher the caller sleeps as long
 * as brings the period's rate down to the desired one. The period then starts again. The sleep
 * happens under the throttler's lock, so the other threads wait too: the bound holds for their
 * sum, not per thread. The default rate ({@link Double#MAX_VALUE}) never sleeps.
 *
 * <p>Worked example: desired 1 MB/s, a period of 300 ms in which 600 KB were read. 600 KB at
 * 1 MB/s take 600 ms, 300 ms of which have passed: the caller sleeps 300 ms.
 *
 * <p>A sleep is cut into slices of at most {@value #SLEEP_SLICE_MS} ms with the caller's
 * {@link Cleaner.AbortCheck} between them, so a throttled pass still stops promptly when it is
 * aborted or the cleaner is reconfigured or shut down (a low rate can otherwise mean minutes).
 *
 * <p>Thread-safe. Time is the injected {@link Time}.
 */
public final class Throttler {
    /** Kafka's check interval for the cleaner throttler. */
    public static final long CHECK_INTERVAL_MS = 300;
    /** The longest uninterrupted sleep, so an abort is seen within this long. */
    static final long SLEEP_SLICE_MS = 100;

    private final Time time;
    private volatile double desiredRatePerSec;
    /** Guarded by {@code this}. */
    private long periodStartNs;
    /** Guarded by {@code this}. */
    private double observedSoFar;

    public Throttler(double desiredRatePerSec, Time time) {
        checkRate(desiredRatePerSec);
        this.desiredRatePerSec = desiredRatePerSec;
        this.time = time;
        this.periodStartNs = time.nanoseconds();
    }

    /** A throttler that never sleeps. */
    public static Throttler unlimited(Time time) {
        return new Throttler(Double.MAX_VALUE, time);
    }

    private static void checkRate(double ratePerSec) {
        if (!(ratePerSec > 0)) {
            throw new IllegalArgumentException("log.cleaner.io.max.bytes.per.second must be positive: ratePerSec=" + ratePerSec);
        }
    }

    public double desiredRatePerSec() {
        return desiredRatePerSec;
    }

    /** Takes effect at the next check (dynamic reconfiguration of the broker setting). */
    public void updateDesiredRatePerSec(double ratePerSec) {
        checkRate(ratePerSec);
        this.desiredRatePerSec = ratePerSec;
    }

    /**
     * Records {@code observedBytes} and sleeps if the current period ran faster than desired.
     *
     * @param abortCheck checked between sleep slices; what it throws ends the sleep and propagates
     * @return the milliseconds slept (0 most of the time)
     */
    public synchronized long maybeThrottle(double observedBytes, Cleaner.AbortCheck abortCheck,
                                           TopicPartition topicPartition) throws InterruptedException {
        double desired = desiredRatePerSec;
        observedSoFar += observedBytes;
        long nowNs = time.nanoseconds();
        long elapsedNs = nowNs - periodStartNs;
        if (elapsedNs <= CHECK_INTERVAL_MS * 1_000_000L || observedSoFar <= 0) {
            return 0;
        }
        long sleptMs = 0;
        try {
            double ratePerSec = observedSoFar * 1e9 / elapsedNs;
            if (ratePerSec > desired) {
                long elapsedMs = elapsedNs / 1_000_000L;
                long sleepMs = Math.round(observedSoFar / (desired / 1000.0) - elapsedMs);
                while (sleptMs < sleepMs) {
                    long slice = Math.min(SLEEP_SLICE_MS, sleepMs - sleptMs);
                    time.sleep(slice);
                    sleptMs += slice;
                    abortCheck.check(topicPartition);
                }
            }
        } finally {
            periodStartNs = time.nanoseconds();
            observedSoFar = 0;
        }
        return sleptMs;
    }
}
