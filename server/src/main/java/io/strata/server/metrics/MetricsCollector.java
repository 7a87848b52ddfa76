package io.strata.server.metrics;

import java.util.List;

/** Contributes metric families to a scrape. Runs on the scraping thread; must not block for long. */
@FunctionalInterface
public interface MetricsCollector {
    void collect(List<MetricFamily> out);
}
