package io.strata.storage;

import io.strata.common.config.ConfigDef;
import io.strata.common.config.ConfigException;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Validates {@code leader.replication.throttled.replicas} and {@code follower.replication.throttled.replicas}
 * as Kafka's {@code ThrottledReplicaListValidator}: either the literal {@code *} (every replica of
 * the topic) or a comma separated list of {@code partitionId:brokerId} pairs of non-negative
 * integers (an empty element is allowed, so the empty default passes). Refusals carry Kafka's text.
 *
 * <p>Stateless; safe from any thread.
 */
public final class ThrottledReplicaListValidator implements ConfigDef.Validator {
    public static final ThrottledReplicaListValidator INSTANCE = new ThrottledReplicaListValidator();
    /** The literal meaning "every replica of the topic". */
    public static final String ALL_REPLICAS = "*";

    private static final Pattern ENTRY = Pattern.compile("([0-9]+:[0-9]+)?");

    private ThrottledReplicaListValidator() {
    }

    @Override
    public void ensureValid(String name, Object value) {
        if (!(value instanceof List<?> list)) {
            throw new ConfigException(name, value, name + " must be a List but was "
                + (value == null ? "null" : value.getClass().getName()));
        }
        List<String> proposed = list.stream().map(element -> String.valueOf(element).trim()).toList();
        boolean allPairs = proposed.stream().allMatch(entry -> ENTRY.matcher(entry).matches());
        if (!allPairs && !String.join("", proposed).equals(ALL_REPLICAS)) {
            throw new ConfigException(name, value, name + " must be the literal '*' or a list of replicas in the following format:"
                + " [partitionId]:[brokerId],[partitionId]:[brokerId],...");
        }
    }
}
