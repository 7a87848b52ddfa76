package io.strata.server.metrics;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One metric family as a scrape reports it: a name, a type, a help text, fixed label names,
 * and its samples. Collectors build these at scrape time (allocation there is fine); the
 * exposition formats write them.
 *
 * <p>Naming rules, checked here because a bad name is a bug: names and label names match
 * the Prometheus grammar (label names in snake_case); a counter's name ends in {@code _total}; no other type's does, and
 * no gauge ends in {@code _count}, {@code _sum} or {@code _bucket} (those belong to histograms).
 *
 * <p>Not thread-safe: built and read by one scrape.
 */
public final class MetricFamily {
    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    /** Label names in snake_case, as promtool's lint wants them. */
    private static final Pattern LABEL = Pattern.compile("[a-z_][a-z0-9_]*");

    private final String name;
    private final MetricType type;
    private final String help;
    private final String[] labelNames;
    private final List<Sample> samples = new ArrayList<>();

    /**
     * One line of the exposition.
     *
     * @param name        the sample's name: the family name, or it with {@code _bucket}, {@code _sum} or {@code _count}
     * @param labelNames  label names, including {@code le} for buckets
     * @param labelValues label values, parallel to {@code labelNames}
     * @param value       the value
     */
    public record Sample(String name, String[] labelNames, String[] labelValues, double value) {
        /** The value of label {@code label}, or null. */
        public String label(String label) {
            for (int i = 0; i < labelNames.length; i++) {
                if (labelNames[i].equals(label)) {
                    return labelValues[i];
                }
            }
            return null;
        }
    }

    public MetricFamily(String name, MetricType type, String help, String... labelNames) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid metric name: name=" + name);
        }
        boolean totalSuffix = name.endsWith("_total");
        if (type == MetricType.COUNTER != totalSuffix) {
            throw new IllegalArgumentException("a counter's name, and only a counter's, ends in _total: name=" + name + ", type=" + type);
        }
        if (type != MetricType.HISTOGRAM && type != MetricType.SUMMARY
            && (name.endsWith("_count") || name.endsWith("_sum") || name.endsWith("_bucket"))) {
            throw new IllegalArgumentException("only histograms and summaries have _count/_sum/_bucket samples: name=" + name);
        }
        for (String label : labelNames) {
            if (!LABEL.matcher(label).matches() || label.startsWith("__") || label.equals("le") || label.equals("quantile")) {
                throw new IllegalArgumentException("invalid label name: name=" + name + ", label=" + label);
            }
        }
        this.name = name;
        this.type = type;
        this.help = help;
        this.labelNames = labelNames.clone();
    }

    public static MetricFamily counter(String name, String help, String... labelNames) {
        return new MetricFamily(name, MetricType.COUNTER, help, labelNames);
    }

    public static MetricFamily gauge(String name, String help, String... labelNames) {
        return new MetricFamily(name, MetricType.GAUGE, help, labelNames);
    }

    public static MetricFamily histogram(String name, String help, String... labelNames) {
        return new MetricFamily(name, MetricType.HISTOGRAM, help, labelNames);
    }

    public static MetricFamily summary(String name, String help, String... labelNames) {
        return new MetricFamily(name, MetricType.SUMMARY, help, labelNames);
    }

    public String name() {
        return name;
    }

    public MetricType type() {
        return type;
    }

    public String help() {
        return help;
    }

    public List<Sample> samples() {
        return Collections.unmodifiableList(samples);
    }

    public boolean isEmpty() {
        return samples.isEmpty();
    }

    /** Adds a counter or gauge sample. */
    public MetricFamily add(double value, String... labelValues) {
        if (type != MetricType.COUNTER && type != MetricType.GAUGE) {
            throw new IllegalStateException("add() is for counters and gauges: name=" + name + ", type=" + type);
        }
        samples.add(new Sample(name, labelNames, checkedValues(labelValues), value));
        return this;
    }

    /**
     * Adds one labelled histogram: its buckets (cumulative), sum and count, with bounds and sum
     * divided by {@code unitDivisor} (e.g. 1e6 to show nanosecond observations in milliseconds).
     */
    public MetricFamily addHistogram(Histogram.Snapshot snapshot, double unitDivisor, String... labelValues) {
        if (type != MetricType.HISTOGRAM) {
            throw new IllegalStateException("addHistogram() is for histograms: name=" + name + ", type=" + type);
        }
        String[] values = checkedValues(labelValues);
        String[] bucketNames = Arrays.copyOf(labelNames, labelNames.length + 1);
        bucketNames[labelNames.length] = "le";
        long cumulative = 0;
        for (int i = 0; i < snapshot.counts().length; i++) {
            cumulative += snapshot.counts()[i];
            String[] bucketValues = Arrays.copyOf(values, values.length + 1);
            bucketValues[values.length] = i < snapshot.bounds().length
                ? ExpositionFormat.formatNumber(snapshot.bounds()[i] / unitDivisor) : "+Inf";
            samples.add(new Sample(name + "_bucket", bucketNames, bucketValues, cumulative));
        }
        samples.add(new Sample(name + "_count", labelNames, values, snapshot.count()));
        samples.add(new Sample(name + "_sum", labelNames, values, snapshot.sum() / unitDivisor));
        return this;
    }

    /** Adds a summary's count and sum (no quantiles). */
    public MetricFamily addSummary(long count, double sum, String... labelValues) {
        if (type != MetricType.SUMMARY) {
            throw new IllegalStateException("addSummary() is for summaries: name=" + name + ", type=" + type);
        }
        String[] values = checkedValues(labelValues);
        samples.add(new Sample(name + "_count", labelNames, values, count));
        samples.add(new Sample(name + "_sum", labelNames, values, sum));
        return this;
    }

    private String[] checkedValues(String[] labelValues) {
        if (labelValues.length != labelNames.length) {
            throw new IllegalArgumentException("metric " + name + " has labels " + Arrays.toString(labelNames) + " but got values "
                + Arrays.toString(labelValues));
        }
        for (int i = 0; i < labelValues.length; i++) {
            if (labelValues[i] == null) {
                throw new IllegalArgumentException("null value for label " + labelNames[i] + " of metric " + name);
            }
        }
        return labelValues.clone();
    }

    /** The names of the samples this family can produce (for name-clash checks). */
    List<String> sampleNames() {
        return switch (type) {
            case COUNTER -> List.of(name, name.substring(0, name.length() - "_total".length()));
            case GAUGE -> List.of(name);
            case HISTOGRAM -> List.of(name + "_bucket", name + "_count", name + "_sum");
            case SUMMARY -> List.of(name + "_count", name + "_sum", name);
        };
    }
}
