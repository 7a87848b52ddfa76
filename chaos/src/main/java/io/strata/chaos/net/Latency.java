package io.strata.chaos.net;

import java.util.Random;

/**
 * A one-way added latency: {@code delayMs} plus a jitter drawn uniformly from
 * {@code [0, jitterMs]} for every chunk of bytes. Immutable and thread-safe; the randomness comes
 * from the {@link Random} the caller passes, so a seeded one gives a reproducible sequence.
 */
public record Latency(long delayMs, long jitterMs) {
    /** No added latency. */
    public static final Latency NONE = new Latency(0, 0);
    /** A sanity bound: a minute of latency is a partition, and belongs to {@link Nft}. */
    public static final long DELAY_MS_MAX = 60_000;

    public Latency {
        if (delayMs < 0 || jitterMs < 0 || delayMs + jitterMs > DELAY_MS_MAX) {
            throw new IllegalArgumentException("delay and jitter must be non-negative and their sum at most "
                + DELAY_MS_MAX + ": delayMs=" + delayMs + " jitterMs=" + jitterMs);
        }
    }

    /** The next chunk's added latency in nanoseconds, between {@code delayMs} and {@code delayMs + jitterMs}. */
    public long nextNanos(Random random) {
        long jitterNanos = jitterMs == 0 ? 0 : (long) (random.nextDouble() * (jitterMs * 1_000_000L + 1));
        return delayMs * 1_000_000L + jitterNanos;
    }
}
