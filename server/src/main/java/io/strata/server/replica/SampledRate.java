package io.strata.server.replica;

/**
 * A rate over a ring of {@code numSamples} time windows of {@code windowSizeMs} each, with the
 * semantics of Kafka's {@code Rate} over a {@code SampledStat} (what Kafka's quotas measure):
 *
 * <ul>
 *   <li>{@link #record} adds to the current window; a window that is {@code windowSizeMs} old is
 *       complete and the next record starts the next window (reusing the oldest slot).</li>
 *   <li>A window that started {@code numSamples * windowSizeMs} or more before now is obsolete
 *       and is emptied before measuring.</li>
 *   <li>{@link #ratePerSecond} = the sum of the live windows divided by the elapsed time since
 *       the oldest live window started, but never less than {@code numSamples - 1} full windows:
 *       so a first burst is spread over (almost) the whole horizon rather than reading as an
 *       infinite rate.</li>
 * </ul>
 *
 * <p>Worked example, 11 windows of 1 s: 5 MB recorded at t=0 reads 5 MB / 10 s = 500 KB/s at any
 * t up to 10 s; at t=11 s the window is obsolete and the rate is 0.
 *
 * <p>Memory is {@code numSamples} pairs of longs, fixed at construction. Not thread-safe: the
 * owner ({@link ReplicationQuotaManager}) guards it.
 */
final class SampledRate {
    private final int numSamples;
    private final long windowSizeMs;
    private final long[] windowStartMs;
    private final double[] values;
    private int current;

    SampledRate(int numSamples, long windowSizeMs, long nowMs) {
        if (numSamples < 1) {
            throw new IllegalArgumentException("numSamples must be at least 1: numSamples=" + numSamples);
        }
        if (windowSizeMs < 1) {
            throw new IllegalArgumentException("windowSizeMs must be at least 1: windowSizeMs=" + windowSizeMs);
        }
        this.numSamples = numSamples;
        this.windowSizeMs = windowSizeMs;
        this.windowStartMs = new long[numSamples];
        this.values = new double[numSamples];
        for (int i = 0; i < numSamples; i++) {
            windowStartMs[i] = nowMs;
        }
    }

    void record(double value, long nowMs) {
        if (nowMs - windowStartMs[current] >= windowSizeMs) {
            current = (current + 1) % numSamples;
            windowStartMs[current] = nowMs;
            values[current] = 0;
        }
        values[current] += value;
    }

    /** Units per second over the live windows (see the class comment). */
    double ratePerSecond(long nowMs) {
        purgeObsolete(nowMs);
        double total = 0;
        long oldestStartMs = windowStartMs[current];
        for (int i = 0; i < numSamples; i++) {
            total += values[i];
            oldestStartMs = Math.min(oldestStartMs, windowStartMs[i]);
        }
        long elapsedMs = nowMs - oldestStartMs;
        long fullWindows = elapsedMs / windowSizeMs;
        long minFullWindows = numSamples - 1;
        if (fullWindows < minFullWindows) {
            elapsedMs += (minFullWindows - fullWindows) * windowSizeMs;
        }
        return total / (Math.max(elapsedMs, 1) / 1000.0);
    }

    private void purgeObsolete(long nowMs) {
        long expireAgeMs = numSamples * windowSizeMs;
        for (int i = 0; i < numSamples; i++) {
            if (nowMs - windowStartMs[i] >= expireAgeMs) {
                windowStartMs[i] = nowMs;
                values[i] = 0;
            }
        }
    }
}
