package io.strata.server.metrics;

import java.util.List;

/**
 * The two text formats {@code /metrics} serves.
 *
 * <ul>
 *   <li>{@link #PROMETHEUS_TEXT}: Prometheus text format 0.0.4, the default. A counter's
 *       {@code # TYPE} line names it with its {@code _total} suffix.</li>
 *   <li>{@link #OPENMETRICS}: OpenMetrics 1.0.0, chosen when the scraper's {@code Accept}
 *       header asks for {@code application/openmetrics-text}. A counter's family name drops the
 *       {@code _total} suffix its samples carry, and the exposition ends with {@code # EOF}.</li>
 * </ul>
 *
 * <p>Both escape label values ({@code \\}, {@code \"}, newline); numbers are written as
 * integers when integral, else in Java's shortest decimal form with a lower-case exponent,
 * and {@code +Inf}, {@code -Inf}, {@code NaN}.
 */
public enum ExpositionFormat {
    PROMETHEUS_TEXT("text/plain; version=0.0.4; charset=utf-8"),
    OPENMETRICS("application/openmetrics-text; version=1.0.0; charset=utf-8");

    private final String contentType;

    ExpositionFormat(String contentType) {
        this.contentType = contentType;
    }

    public String contentType() {
        return contentType;
    }

    /** The format for an HTTP {@code Accept} header: OpenMetrics only when asked for. */
    public static ExpositionFormat forAcceptHeader(String accept) {
        return accept != null && accept.contains("application/openmetrics-text") ? OPENMETRICS : PROMETHEUS_TEXT;
    }

    /** Writes the families (empty ones are skipped) in this format. */
    public String write(List<MetricFamily> families) {
        StringBuilder out = new StringBuilder(64 * 1024);
        for (MetricFamily family : families) {
            if (family.isEmpty()) {
                continue;
            }
            String familyName = family.name();
            if (this == OPENMETRICS && family.type() == MetricType.COUNTER) {
                familyName = familyName.substring(0, familyName.length() - "_total".length());
            }
            out.append("# HELP ").append(familyName).append(' ');
            escapeHelp(family.help(), out);
            out.append('\n');
            out.append("# TYPE ").append(familyName).append(' ').append(family.type().exposedName).append('\n');
            for (MetricFamily.Sample sample : family.samples()) {
                writeSample(sample, out);
            }
        }
        if (this == OPENMETRICS) {
            out.append("# EOF\n");
        }
        return out.toString();
    }

    private static void writeSample(MetricFamily.Sample sample, StringBuilder out) {
        out.append(sample.name());
        String[] names = sample.labelNames();
        if (names.length > 0) {
            out.append('{');
            for (int i = 0; i < names.length; i++) {
                if (i > 0) {
                    out.append(',');
                }
                out.append(names[i]).append("=\"");
                escapeLabelValue(sample.labelValues()[i], out);
                out.append('"');
            }
            out.append('}');
        }
        out.append(' ').append(formatNumber(sample.value())).append('\n');
    }

    private void escapeHelp(String help, StringBuilder out) {
        for (int i = 0; i < help.length(); i++) {
            char c = help.charAt(i);
            if (c == '\\') {
                out.append("\\\\");
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '"' && this == OPENMETRICS) {
                out.append("\\\"");
            } else {
                out.append(c);
            }
        }
    }

    private static void escapeLabelValue(String value, StringBuilder out) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                default -> out.append(c);
            }
        }
    }

    /** A number as both formats accept it. */
    public static String formatNumber(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "+Inf" : "-Inf";
        }
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return Long.toString((long) value);
        }
        return Double.toString(value).replace('E', 'e');
    }
}
