package io.strata.storage.cleaner;

/**
 * Broker-wide settings of the log cleaner, with Apache Kafka's names and defaults. The per-topic
 * knobs (min.cleanable.dirty.ratio, delete.retention.ms, min/max.compaction.lag.ms, segment
 * sizes) live in {@link io.strata.storage.LogConfig}.
 *
 * @param enabled                {@code log.cleaner.enable}: without it compacted topics are never compacted
 * @param numThreads             {@code log.cleaner.threads}
 * @param dedupeBufferBytes      {@code log.cleaner.dedupe.buffer.size}: heap for the key → offset maps of all threads together
 * @param dedupeBufferLoadFactor {@code log.cleaner.io.buffer.load.factor}: how full a map may get before a clean stops mapping
 * @param ioBufferBytes          {@code log.cleaner.io.buffer.size}: write buffering of all threads together
 * @param backoffMs              {@code log.cleaner.backoff.ms}: the longest pause of an idle cleaner thread (a compacted log
 *                               that rolls a segment wakes it at once)
 * @param maxIoBytesPerSecond    {@code log.cleaner.io.max.bytes.per.second}: read plus written bytes per second of all threads
 *                               together ({@link Throttler})
 *
 * <p>Immutable.
 */
public record CleanerConfig(boolean enabled, int numThreads, long dedupeBufferBytes, double dedupeBufferLoadFactor, int ioBufferBytes,
                            long backoffMs, double maxIoBytesPerSecond) {
    public static final boolean DEFAULT_ENABLED = true;
    public static final int DEFAULT_THREADS = 1;
    public static final long DEFAULT_DEDUPE_BUFFER_BYTES = 128L * 1024 * 1024;
    public static final double DEFAULT_LOAD_FACTOR = 0.9;
    public static final int DEFAULT_IO_BUFFER_BYTES = 512 * 1024;
    public static final long DEFAULT_BACKOFF_MS = 15_000L;
    /** Kafka's default: no throttling. */
    public static final double DEFAULT_MAX_IO_BYTES_PER_SECOND = Double.MAX_VALUE;
    /**
     * The dedupe maps are heap buffers (as in Kafka) allocated when a thread first cleans. All of
     * them together take at most this fraction of the heap, so that Kafka's 128 MiB default cannot
     * starve a small broker (or a test JVM running several brokers) of heap for requests.
     */
    public static final int MAX_HEAP_FRACTION_DIVISOR = 8;
    /** Each thread's write buffer is at least this large, whatever the configured total. */
    public static final int MIN_IO_BUFFER_BYTES_PER_THREAD = 4096;

    public CleanerConfig {
        if (numThreads < 1) {
            throw new IllegalArgumentException("log.cleaner.threads must be at least 1: numThreads=" + numThreads);
        }
        if (dedupeBufferBytes < (long) OffsetMap.MIN_MEMORY_BYTES * numThreads) {
            throw new IllegalArgumentException("log.cleaner.dedupe.buffer.size must give every thread at least " + OffsetMap.MIN_MEMORY_BYTES
                + " bytes: dedupeBufferBytes=" + dedupeBufferBytes + ", numThreads=" + numThreads);
        }
        if (!(dedupeBufferLoadFactor > 0 && dedupeBufferLoadFactor <= 1)) {
            throw new IllegalArgumentException("log.cleaner.io.buffer.load.factor must be in (0, 1]: loadFactor=" + dedupeBufferLoadFactor);
        }
        if (ioBufferBytes < 0) {
            throw new IllegalArgumentException("log.cleaner.io.buffer.size must not be negative: ioBufferBytes=" + ioBufferBytes);
        }
        if (backoffMs < 0) {
            throw new IllegalArgumentException("log.cleaner.backoff.ms must not be negative: backoffMs=" + backoffMs);
        }
        if (!(maxIoBytesPerSecond > 0)) {
            throw new IllegalArgumentException("log.cleaner.io.max.bytes.per.second must be positive: maxIoBytesPerSecond="
                + maxIoBytesPerSecond);
        }
    }

    /** Without throttling (Kafka's default log.cleaner.io.max.bytes.per.second). */
    public CleanerConfig(boolean enabled, int numThreads, long dedupeBufferBytes, double dedupeBufferLoadFactor, int ioBufferBytes,
                         long backoffMs) {
        this(enabled, numThreads, dedupeBufferBytes, dedupeBufferLoadFactor, ioBufferBytes, backoffMs, DEFAULT_MAX_IO_BYTES_PER_SECOND);
    }

    /**
     * Kafka's check of a dynamic change (LogCleaner.validateReconfiguration): the thread count
     * may at most double or halve in one step, and log.cleaner.enable cannot change at runtime.
     *
     * @throws IllegalArgumentException naming both values
     */
    public void validateReconfiguration(CleanerConfig newConfig) {
        if (newConfig.numThreads < numThreads / 2) {
            throw new IllegalArgumentException("Log cleaner threads cannot be reduced to less than half the current value " + numThreads
                + ": log.cleaner.threads=" + newConfig.numThreads);
        }
        if (newConfig.numThreads > numThreads * 2) {
            throw new IllegalArgumentException("Log cleaner threads cannot be increased to more than double the current value " + numThreads
                + ": log.cleaner.threads=" + newConfig.numThreads);
        }
        if (newConfig.enabled != enabled) {
            throw new IllegalArgumentException("log.cleaner.enable cannot change at runtime: " + enabled + " -> " + newConfig.enabled);
        }
    }

    /** Kafka's defaults. */
    public static CleanerConfig defaults() {
        return new CleanerConfig(DEFAULT_ENABLED, DEFAULT_THREADS, DEFAULT_DEDUPE_BUFFER_BYTES, DEFAULT_LOAD_FACTOR, DEFAULT_IO_BUFFER_BYTES,
            DEFAULT_BACKOFF_MS);
    }

    /** A disabled cleaner: compacted topics keep every record. */
    public static CleanerConfig disabled() {
        return new CleanerConfig(false, DEFAULT_THREADS, DEFAULT_DEDUPE_BUFFER_BYTES, DEFAULT_LOAD_FACTOR, DEFAULT_IO_BUFFER_BYTES,
            DEFAULT_BACKOFF_MS);
    }

    /**
     * One thread's share of the dedupe memory: the configured total, capped at
     * 1/{@value #MAX_HEAP_FRACTION_DIVISOR} of {@code maxHeapBytes}, split evenly, and at most
     * {@link Integer#MAX_VALUE} (one buffer).
     */
    public int dedupeBufferBytesPerThread(long maxHeapBytes) {
        long total = Math.min(dedupeBufferBytes, maxHeapBytes / MAX_HEAP_FRACTION_DIVISOR);
        long perThread = Math.min(Integer.MAX_VALUE, total / numThreads);
        return (int) Math.max(OffsetMap.MIN_MEMORY_BYTES, perThread);
    }

    /** One thread's write buffer: its even share of log.cleaner.io.buffer.size, as Kafka splits it. */
    public int ioBufferBytesPerThread() {
        return Math.max(MIN_IO_BUFFER_BYTES_PER_THREAD, ioBufferBytes / numThreads / 2);
    }
}
