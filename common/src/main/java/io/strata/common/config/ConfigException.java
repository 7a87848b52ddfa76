package io.strata.common.config;

/** A configuration value that is missing, malformed or out of range. The message names the key and the value. */
public class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String name, Object value, String problem) {
        super("Invalid value " + value + " for configuration " + name + ": " + problem);
    }
}
