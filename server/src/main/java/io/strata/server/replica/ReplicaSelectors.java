package io.strata.server.replica;

import java.util.Map;
import java.util.function.Supplier;

/**
 * The {@code replica.selector.class} values this broker accepts. Kafka's class names map to our
 * own implementations (no Kafka class is loaded); null or empty means no selector: consumers
 * always fetch from the leader (followers still serve a consumer that comes to them).
 *
 * <p>Thread-safe (immutable).
 */
public final class ReplicaSelectors {
    /** Kafka's rack-aware selector, the one users configure. */
    public static final String KAFKA_RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector";

    private static final Map<String, Supplier<ReplicaSelector>> KNOWN = Map.of(
        KAFKA_RACK_AWARE, RackAwareReplicaSelector::new,
        RackAwareReplicaSelector.class.getName(), RackAwareReplicaSelector::new);

    private ReplicaSelectors() {
    }

    /**
     * The selector {@code className} names, or null for none.
     *
     * @throws IllegalArgumentException naming the class when it is not one of the accepted names
     */
    public static ReplicaSelector create(String className) {
        if (className == null || className.isBlank()) {
            return null;
        }
        Supplier<ReplicaSelector> factory = KNOWN.get(className.trim());
        if (factory == null) {
            throw new IllegalArgumentException("unknown replica selector class '" + className.trim() + "'; accepted: "
                + KAFKA_RACK_AWARE + " (or " + RackAwareReplicaSelector.class.getName() + "), or unset for none");
        }
        return factory.get();
    }
}
