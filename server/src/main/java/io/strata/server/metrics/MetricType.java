package io.strata.server.metrics;

/** The metric types Strata exposes, as the Prometheus and OpenMetrics text formats name them. */
public enum MetricType {
    /** Monotonic count; its name ends in {@code _total}. */
    COUNTER("counter"),
    /** A value read at scrape time. */
    GAUGE("gauge"),
    /** Bucketed observations: {@code _bucket{le}}, {@code _sum}, {@code _count}. */
    HISTOGRAM("histogram"),
    /** Only {@code _count} and {@code _sum}, no quantiles (for totals the JVM keeps itself, e.g. GC time). */
    SUMMARY("summary");

    final String exposedName;

    MetricType(String exposedName) {
        this.exposedName = exposedName;
    }
}
