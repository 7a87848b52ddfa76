package io.strata.common.config;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A set of configuration keys with Kafka's names, types and defaults, and the parser that
 * turns string properties into typed values. Parsing reports every unknown key (Kafka only
 * logs them) and rejects malformed or out-of-range values with the key and value named.
 *
 * <p>Immutable once built; safe to share.
 */
public final class ConfigDef {
    /** Value types, as in Kafka's config documentation. */
    public enum Type { BOOLEAN, INT, SHORT, LONG, DOUBLE, STRING, LIST, PASSWORD }

    /** Marker for keys that must be set. */
    public static final Object NO_DEFAULT = new Object() {
        @Override
        public String toString() {
            return "<required>";
        }
    };

    /** Checks a parsed value; throws {@link ConfigException} with a precise reason. */
    @FunctionalInterface
    public interface Validator {
        void ensureValid(String name, Object value);
    }

    /** One key. {@code defaultValue} is already parsed (or null, or NO_DEFAULT). */
    public record Key(String name, Type type, Object defaultValue, Validator validator, String documentation) {
        public boolean hasDefault() {
            return defaultValue != NO_DEFAULT;
        }
    }

    private final Map<String, Key> keys = new LinkedHashMap<>();

    public ConfigDef define(String name, Type type, Object defaultValue, Validator validator, String documentation) {
        if (keys.containsKey(name)) {
            throw new IllegalArgumentException("configuration " + name + " is defined twice");
        }
        Object parsedDefault = defaultValue == NO_DEFAULT || defaultValue == null ? defaultValue : parse(name, type, defaultValue);
        if (validator != null && parsedDefault != NO_DEFAULT && parsedDefault != null) {
            validator.ensureValid(name, parsedDefault);
        }
        keys.put(name, new Key(name, type, parsedDefault, validator, documentation));
        return this;
    }

    public ConfigDef define(String name, Type type, Object defaultValue, String documentation) {
        return define(name, type, defaultValue, null, documentation);
    }

    public Map<String, Key> keys() {
        return Collections.unmodifiableMap(keys);
    }

    public Key key(String name) {
        return keys.get(name);
    }

    /** The result of parsing: typed values for every defined key, and the keys nobody defined. */
    public record Parsed(Map<String, Object> values, List<String> unknownKeys, Map<String, String> originals) {
    }

    public Parsed parse(Map<String, String> properties) {
        Map<String, Object> values = new LinkedHashMap<>();
        List<String> unknown = new ArrayList<>();
        for (String name : properties.keySet()) {
            if (!keys.containsKey(name)) {
                unknown.add(name);
            }
        }
        for (Key key : keys.values()) {
            String raw = properties.get(key.name);
            Object value;
            if (raw != null) {
                value = parse(key.name, key.type, raw);
            } else if (key.hasDefault()) {
                value = key.defaultValue;
            } else {
                throw new ConfigException("Missing required configuration " + key.name + " which has no default value");
            }
            if (key.validator != null && value != null) {
                key.validator.ensureValid(key.name, value);
            }
            values.put(key.name, value);
        }
        Collections.sort(unknown);
        return new Parsed(Collections.unmodifiableMap(values), Collections.unmodifiableList(unknown), Map.copyOf(properties));
    }

    public static Object parse(String name, Type type, Object value) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String text)) {
            return checkInstance(name, type, value);
        }
        String trimmed = text.trim();
        try {
            switch (type) {
                case BOOLEAN:
                    if (trimmed.equalsIgnoreCase("true")) {
                        return true;
                    }
                    if (trimmed.equalsIgnoreCase("false")) {
                        return false;
                    }
                    throw new ConfigException(name, text, "expected true or false");
                case INT: return Integer.parseInt(trimmed);
                case SHORT: return Short.parseShort(trimmed);
                case LONG: return Long.parseLong(trimmed);
                case DOUBLE: return Double.parseDouble(trimmed);
                case STRING:
                case PASSWORD:
                    return trimmed;
                case LIST:
                    if (trimmed.isEmpty()) {
                        return List.of();
                    }
                    return Arrays.stream(trimmed.split("\\s*,\\s*", -1)).map(String::trim).toList();
                default:
                    throw new IllegalStateException("unknown type " + type);
            }
        } catch (NumberFormatException e) {
            throw new ConfigException(name, text, "not a valid " + type.name().toLowerCase(Locale.ROOT));
        }
    }

    private static Object checkInstance(String name, Type type, Object value) {
        boolean ok = switch (type) {
            case BOOLEAN -> value instanceof Boolean;
            case INT -> value instanceof Integer;
            case SHORT -> value instanceof Short;
            case LONG -> value instanceof Long || value instanceof Integer;
            case DOUBLE -> value instanceof Double;
            case STRING, PASSWORD -> value instanceof String;
            case LIST -> value instanceof List;
        };
        if (!ok) {
            throw new ConfigException(name, value, "expected a " + type.name().toLowerCase(Locale.ROOT));
        }
        return type == Type.LONG && value instanceof Integer i ? (Object) i.longValue() : value;
    }

    // ---------------------------------------------------------------- validators

    public static Validator atLeast(long min) {
        return (name, value) -> {
            if (((Number) value).doubleValue() < min) {
                throw new ConfigException(name, value, "must be at least " + min);
            }
        };
    }

    public static Validator between(double min, double max) {
        return (name, value) -> {
            double number = ((Number) value).doubleValue();
            if (number < min || number > max) {
                throw new ConfigException(name, value, "must be between " + min + " and " + max);
            }
        };
    }

    public static Validator oneOf(String... allowed) {
        List<String> options = List.of(allowed);
        return (name, value) -> {
            List<?> items = value instanceof List<?> list ? list : List.of(value);
            for (Object item : items) {
                if (!options.contains(String.valueOf(item))) {
                    throw new ConfigException(name, value, "must be one of " + options);
                }
            }
        };
    }
}
