package io.strata.tools;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Parses repeatable {@code key=value} options such as {@code --config} and {@code --header}. */
final class KeyValueOptions {
    private KeyValueOptions() {
    }

    /**
     * Splits each entry at its first '='; the value may be empty or contain '='. A later entry
     * for the same key replaces an earlier one.
     *
     * @throws CommandLine.ParameterException for an entry without '=' or with an empty key
     */
    static Map<String, String> parse(CommandSpec spec, String option, List<String> entries) {
        Map<String, String> pairs = new LinkedHashMap<>();
        for (String entry : entries) {
            int equals = entry.indexOf('=');
            if (equals <= 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), option + " needs key=value, got: '" + entry + "'");
            }
            pairs.put(entry.substring(0, equals), entry.substring(equals + 1));
        }
        return pairs;
    }
}
