package io.strata.tools;

import io.strata.common.Time;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.Locale;

/**
 * Throughput and latency of a perf run: a line every reporting interval about that interval,
 * and a total at the end with latency percentiles, in the layout of Kafka's
 * kafka-producer-perf-test so that the two can be read side by side.
 *
 * <p>Latencies are recorded in microseconds in an HdrHistogram with 3 significant digits (at
 * most 0.1% error) up to {@link #LATENCY_MAX_US}; longer latencies are clamped to it, so a
 * pathological run still reports instead of failing. Megabytes are MiB (1,048,576 bytes), as
 * Kafka's tools count them.
 *
 * <p>Not thread-safe.
 */
final class PerfStats {
    /** The longest latency the histogram tells apart: an hour. */
    static final long LATENCY_MAX_US = 3_600_000_000L;
    private static final double MIB = 1024.0 * 1024.0;

    private final Time time;
    private final PrintStream out;
    private final String verb;
    private final long reportingIntervalNs;
    private final Histogram total = new Histogram(LATENCY_MAX_US, 3);
    private final long startNs;
    private long records;
    private long bytes;
    private long windowStartNs;
    private long windowRecords;
    private long windowBytes;
    private long windowLatencySumUs;
    private long windowLatencyMaxUs;
    private long windowLatencyCount;

    /** @param verb how lines name what happened to the records: "sent", "received" */
    PerfStats(Time time, PrintStream out, String verb, long reportingIntervalMs) {
        if (reportingIntervalMs <= 0) {
            throw new IllegalArgumentException("reporting interval must be positive: reportingIntervalMs=" + reportingIntervalMs);
        }
        this.time = time;
        this.out = out;
        this.verb = verb;
        this.reportingIntervalNs = reportingIntervalMs * 1_000_000L;
        this.startNs = time.nanoseconds();
        this.windowStartNs = startNs;
    }

    /** Counts records and their bytes. */
    void records(long count, long recordBytes) {
        records += count;
        bytes += recordBytes;
        windowRecords += count;
        windowBytes += recordBytes;
    }

    /** Records one latency sample. */
    void latencyNs(long latencyNs) {
        long us = Math.min(LATENCY_MAX_US, Math.max(0, latencyNs / 1_000));
        total.recordValue(us);
        windowLatencySumUs += us;
        windowLatencyMaxUs = Math.max(windowLatencyMaxUs, us);
        windowLatencyCount++;
    }

    long records() {
        return records;
    }

    /** Prints the interval's line if the interval is over. */
    void maybeReport() {
        long nowNs = time.nanoseconds();
        if (nowNs - windowStartNs < reportingIntervalNs) {
            return;
        }
        double seconds = (nowNs - windowStartNs) / 1e9;
        double avgMs = windowLatencyCount == 0 ? 0 : windowLatencySumUs / 1000.0 / windowLatencyCount;
        out.printf(Locale.ROOT, "%d records %s, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.%n",
            windowRecords, verb, windowRecords / seconds, windowBytes / MIB / seconds, avgMs, windowLatencyMaxUs / 1000.0);
        out.flush();
        windowStartNs = nowNs;
        windowRecords = 0;
        windowBytes = 0;
        windowLatencySumUs = 0;
        windowLatencyMaxUs = 0;
        windowLatencyCount = 0;
    }

    /** Prints the whole run's line, with latency percentiles. */
    void printTotal() {
        double seconds = Math.max(1e-9, (time.nanoseconds() - startNs) / 1e9);
        out.printf(Locale.ROOT, "%d records %s, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
                + "%.0f ms 50th, %.0f ms 95th, %.0f ms 99th, %.0f ms 99.9th.%n",
            records, verb, records / seconds, bytes / MIB / seconds, total.getMean() / 1000.0, total.getMaxValue() / 1000.0,
            percentileMs(50), percentileMs(95), percentileMs(99), percentileMs(99.9));
        out.flush();
    }

    /** A latency percentile in milliseconds, or 0 without samples. */
    double percentileMs(double percentile) {
        return total.getTotalCount() == 0 ? 0 : total.getValueAtPercentile(percentile) / 1000.0;
    }

    long latencyCount() {
        return total.getTotalCount();
    }
}
