package io.strata.metadata;

import java.util.List;

/** Renders typed configuration values the way Kafka reports them (lists comma-separated). */
public final class ConfigValues {
    private ConfigValues() {
    }

    public static String toString(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof List<?> list) {
            return String.join(",", list.stream().map(String::valueOf).toList());
        }
        return String.valueOf(value);
    }
}
