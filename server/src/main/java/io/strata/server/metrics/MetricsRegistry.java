package io.strata.server.metrics;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The collectors of one broker. A scrape asks each in turn; a collector that throws loses its
 * families for that scrape (logged), never the whole scrape. Two families that would expose the
 * same sample name are a bug and fail the scrape.
 *
 * <p>Thread-safe.
 */
public final class MetricsRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsRegistry.class);

    private final List<MetricsCollector> collectors = new CopyOnWriteArrayList<>();

    public void register(MetricsCollector collector) {
        collectors.add(collector);
    }

    /** Every family of every collector, in registration order. */
    public List<MetricFamily> collect() {
        List<MetricFamily> families = new ArrayList<>();
        for (MetricsCollector collector : collectors) {
            List<MetricFamily> collected = new ArrayList<>();
            try {
                collector.collect(collected);
            } catch (RuntimeException e) {
                LOG.warn("Metrics collector {} failed; its metrics are missing from this scrape", collector, e);
                continue;
            }
            families.addAll(collected);
        }
        checkUniqueNames(families);
        return families;
    }

    private static void checkUniqueNames(List<MetricFamily> families) {
        Map<String, String> owners = new HashMap<>();
        for (MetricFamily family : families) {
            for (String sampleName : family.sampleNames()) {
                String previous = owners.put(sampleName, family.name());
                if (previous != null) {
                    throw new IllegalStateException("two metric families expose " + sampleName + ": " + previous + " and " + family.name());
                }
            }
        }
    }

    /** The whole scrape in {@code format}. */
    public String scrape(ExpositionFormat format) {
        return format.write(collect());
    }
}
