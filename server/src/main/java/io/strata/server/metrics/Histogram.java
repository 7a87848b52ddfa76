package io.strata.server.metrics;

import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * A histogram with fixed bucket bounds, cheap enough for the produce and fetch paths: an
 * observation is a binary search over at most {@value #MAX_BUCKETS} bounds and two
 * {@link LongAdder} increments, with no lock and no allocation (a {@code LongAdder} allocates
 * its cells once, the first time two threads contend on it, never per observation).
 *
 * <p>Layout: {@code bounds[i]} is the inclusive upper bound of bucket {@code i} ("le" in the
 * Prometheus exposition); one extra bucket past the last bound counts everything larger
 * (+Inf). Buckets hold non-cumulative counts; {@link Snapshot} turns them into the
 * cumulative counts the exposition formats want. Observations and bounds are in the
 * recording unit (nanoseconds for latencies); the exposition scales them to the metric's unit
 * (milliseconds for Kafka's {@code *TimeMs} names).
 *
 * <p>Example with bounds {1, 5, 10}: observing 0, 1, 3 and 12 leaves bucket counts
 * {2, 1, 0, 1}; the exposition shows le="1" 2, le="5" 3, le="10" 3, le="+Inf" 4, count 4.
 *
 * <p>Thread-safe. A snapshot taken while observations run is not atomic across buckets, but
 * its count is always the sum of its own buckets, so "+Inf bucket == count" holds in every
 * scrape.
 */
public final class Histogram {
    /** Bounds per histogram: enough for four decades at 1-2.5-5 steps. */
    static final int MAX_BUCKETS = 32;

    /** Kafka's latency metrics are in milliseconds; these are their bounds, in ms. */
    public static final double[] LATENCY_BOUNDS_MS = {
        0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000};

    /** Nanoseconds per millisecond, for recording nanosecond durations against millisecond bounds. */
    public static final double NANOS_PER_MS = 1_000_000.0;

    private final long[] bounds;
    private final LongAdder[] buckets;
    private final LongAdder sum = new LongAdder();

    /**
     * @param bounds inclusive upper bounds in the recording unit, strictly increasing, at most {@value #MAX_BUCKETS}
     */
    public Histogram(long[] bounds) {
        if (bounds.length == 0 || bounds.length > MAX_BUCKETS) {
            throw new IllegalArgumentException("a histogram needs 1 to " + MAX_BUCKETS + " bounds: bounds=" + Arrays.toString(bounds));
        }
        for (int i = 1; i < bounds.length; i++) {
            if (bounds[i] <= bounds[i - 1]) {
                throw new IllegalArgumentException("histogram bounds must increase strictly: bounds=" + Arrays.toString(bounds));
            }
        }
        this.bounds = bounds.clone();
        this.buckets = new LongAdder[bounds.length + 1];
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = new LongAdder();
        }
    }

    /** A histogram of nanosecond durations with the given millisecond bounds. */
    public static Histogram ofMillisBounds(double[] boundsMs) {
        long[] nanos = new long[boundsMs.length];
        for (int i = 0; i < boundsMs.length; i++) {
            nanos[i] = Math.round(boundsMs[i] * NANOS_PER_MS);
        }
        return new Histogram(nanos);
    }

    /** Latency histogram in nanoseconds, exposed in milliseconds with {@link #LATENCY_BOUNDS_MS}. */
    public static Histogram latency() {
        return ofMillisBounds(LATENCY_BOUNDS_MS);
    }

    /** Records one observation; negative values (a clock step) count as 0. */
    public void record(long value) {
        long observed = Math.max(0, value);
        buckets[bucketIndex(observed)].increment();
        sum.add(observed);
    }

    /** The first bucket whose bound is at least {@code value}: le semantics. */
    int bucketIndex(long value) {
        int low = 0;
        int high = bounds.length;
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (bounds[middle] < value) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        return low;
    }

    public Snapshot snapshot() {
        long[] counts = new long[buckets.length];
        long total = 0;
        for (int i = 0; i < buckets.length; i++) {
            counts[i] = buckets[i].sum();
            total += counts[i];
        }
        return new Snapshot(bounds.clone(), counts, total, sum.sum());
    }

    /**
     * A point-in-time copy.
     *
     * @param bounds the upper bounds (recording unit)
     * @param counts non-cumulative counts, one per bound plus the +Inf bucket
     * @param count  the sum of {@code counts}
     * @param sum    the sum of the observations (recording unit)
     */
    public record Snapshot(long[] bounds, long[] counts, long count, long sum) {
        /** Cumulative count up to and including bucket {@code index}. */
        public long cumulative(int index) {
            long total = 0;
            for (int i = 0; i <= index; i++) {
                total += counts[i];
            }
            return total;
        }
    }
}
