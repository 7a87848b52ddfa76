package io.strata.server.metrics;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A reader of the Prometheus text format (and the sample lines of OpenMetrics), for the
 * {@code strata metrics} command and tests that check values. It is lenient where a
 * validating parser would not be (tests check validity with promtool and the Prometheus
 * Python client's OpenMetrics parser); it throws {@link IllegalArgumentException} naming the
 * line for what it cannot read.
 */
public final class PrometheusText {
    private final List<Sample> samples;
    private final Map<String, String> types;

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public String label(String label) {
            return labels.get(label);
        }
    }

    private PrometheusText(List<Sample> samples, Map<String, String> types) {
        this.samples = samples;
        this.types = types;
    }

    public static PrometheusText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        Map<String, String> types = new LinkedHashMap<>();
        String[] lines = text.split("\n");
        for (int number = 0; number < lines.length; number++) {
            String line = lines[number].strip();
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("#")) {
                String[] parts = line.split("\\s+", 4);
                if (parts.length >= 4 && parts[1].equals("TYPE")) {
                    types.put(parts[2], parts[3]);
                }
                continue;
            }
            try {
                samples.add(parseSample(line));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("line " + (number + 1) + " is not a sample (" + e.getMessage() + "): " + line, e);
            }
        }
        return new PrometheusText(Collections.unmodifiableList(samples), Collections.unmodifiableMap(types));
    }

    private static Sample parseSample(String line) {
        int position = 0;
        while (position < line.length() && line.charAt(position) != '{' && !Character.isWhitespace(line.charAt(position))) {
            position++;
        }
        String name = line.substring(0, position);
        if (name.isEmpty()) {
            throw new IllegalArgumentException("no metric name");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        if (position < line.length() && line.charAt(position) == '{') {
            position = parseLabels(line, position + 1, labels);
        }
        String[] rest = line.substring(position).strip().split("\\s+");
        return new Sample(name, Collections.unmodifiableMap(labels), parseValue(rest[0]));
    }

    /** Parses {@code a="x",b="y"}, returning the position after the closing brace. */
    private static int parseLabels(String line, int position, Map<String, String> labels) {
        while (true) {
            while (position < line.length() && (line.charAt(position) == ',' || line.charAt(position) == ' ')) {
                position++;
            }
            if (position >= line.length()) {
                throw new IllegalArgumentException("unterminated labels");
            }
            if (line.charAt(position) == '}') {
                return position + 1;
            }
            int equals = line.indexOf('=', position);
            if (equals < 0 || equals + 1 >= line.length() || line.charAt(equals + 1) != '"') {
                throw new IllegalArgumentException("bad label at " + position);
            }
            String label = line.substring(position, equals).strip();
            StringBuilder value = new StringBuilder();
            position = equals + 2;
            while (true) {
                if (position >= line.length()) {
                    throw new IllegalArgumentException("unterminated label value");
                }
                char c = line.charAt(position++);
                if (c == '"') {
                    break;
                }
                if (c == '\\' && position < line.length()) {
                    char escaped = line.charAt(position++);
                    value.append(escaped == 'n' ? '\n' : escaped);
                } else {
                    value.append(c);
                }
            }
            labels.put(label, value.toString());
        }
    }

    private static double parseValue(String value) {
        return switch (value) {
            case "+Inf", "Inf", "inf", "+inf" -> Double.POSITIVE_INFINITY;
            case "-Inf", "-inf" -> Double.NEGATIVE_INFINITY;
            case "NaN", "nan" -> Double.NaN;
            default -> Double.parseDouble(value);
        };
    }

    public List<Sample> samples() {
        return samples;
    }

    /** {@code # TYPE} lines: family name to type. */
    public Map<String, String> types() {
        return types;
    }

    /** The samples named {@code name}. */
    public List<Sample> samples(String name) {
        return samples.stream().filter(sample -> sample.name().equals(name)).toList();
    }

    /** The samples named {@code name} whose labels satisfy {@code filter}. */
    public List<Sample> samples(String name, Predicate<Sample> filter) {
        return samples.stream().filter(sample -> sample.name().equals(name) && filter.test(sample)).toList();
    }

    /** The sum of the values of the samples named {@code name} with all of {@code labels} (pairs: name, value). */
    public double sum(String name, String... labels) {
        double total = 0;
        for (Sample sample : samples(name)) {
            if (matches(sample, labels)) {
                total += sample.value();
            }
        }
        return total;
    }

    /** Whether a sample named {@code name} exists. */
    public boolean has(String name) {
        return samples.stream().anyMatch(sample -> sample.name().equals(name));
    }

    private static boolean matches(Sample sample, String[] labels) {
        if (labels.length % 2 != 0) {
            throw new IllegalArgumentException("labels come in name, value pairs");
        }
        for (int i = 0; i < labels.length; i += 2) {
            if (!labels[i + 1].equals(sample.label(labels[i]))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Estimates a quantile from cumulative histogram buckets ({@code name_bucket} samples with
     * {@code le}) as Prometheus's histogram_quantile does: linear interpolation inside the
     * bucket holding the rank. NaN without observations.
     *
     * @param buckets bucket bound to cumulative count, any order
     */
    public static double quantile(double quantile, Map<Double, Double> buckets) {
        List<Map.Entry<Double, Double>> sorted = new ArrayList<>(buckets.entrySet());
        sorted.sort(Map.Entry.comparingByKey());
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        double total = sorted.get(sorted.size() - 1).getValue();
        if (total <= 0) {
            return Double.NaN;
        }
        double rank = quantile * total;
        double previousBound = 0;
        double previousCount = 0;
        for (Map.Entry<Double, Double> bucket : sorted) {
            if (bucket.getValue() >= rank) {
                if (Double.isInfinite(bucket.getKey())) {
                    return previousBound; // in the +Inf bucket: the largest finite bound, as Prometheus answers
                }
                double inBucket = bucket.getValue() - previousCount;
                double fraction = inBucket == 0 ? 1 : (rank - previousCount) / inBucket;
                return previousBound + (bucket.getKey() - previousBound) * fraction;
            }
            previousBound = bucket.getKey();
            previousCount = bucket.getValue();
        }
        return previousBound;
    }
}
