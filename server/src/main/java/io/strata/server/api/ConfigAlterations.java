package io.strata.server.api;

import io.strata.common.config.ConfigDef;
import io.strata.common.config.ConfigException;
import io.strata.metadata.ConfigResource;
import io.strata.metadata.ConfigValues;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.ControllerRefusedException;
import io.strata.metadata.ElrConfigRules;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicNames;
import io.strata.protocol.ErrorCode;
import io.strata.server.config.DynamicBrokerConfig;
import io.strata.server.config.ServerConfig;
import io.strata.storage.LogConfig;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * What AlterConfigs (the request replaces a resource's whole dynamic set) and
 * IncrementalAlterConfigs (the request edits it) share: each handler computes the complete
 * proposed dynamic set of every resource, and this class checks it the way Kafka's broker and
 * controller do, turns it into changes (a null value removes a key) and writes the changes of
 * every accepted resource in one metadata batch.
 *
 * <p>Checks, in Kafka's order and with its error codes:
 * <ol>
 *   <li>request shape: a resource named twice, a key named twice within a resource, or a null
 *       value where one is needed, is INVALID_REQUEST;</li>
 *   <li>resource: only TOPIC and BROKER are supported; a BROKER resource must be this node's
 *       id or "" (cluster default), else INVALID_REQUEST;</li>
 *   <li>topic: "" is INVALID_REQUEST, an illegal name INVALID_TOPIC_EXCEPTION, an unknown key or
 *       a bad value INVALID_CONFIG, and then a missing topic UNKNOWN_TOPIC_OR_PARTITION;</li>
 *   <li>broker: a key that cannot change at runtime or a bad value is INVALID_REQUEST (Kafka
 *       reports broker validation failures so, see KAFKA-13609);</li>
 *   <li>with ELR on, a broker-level min.insync.replicas or the removal of the cluster-level one
 *       is INVALID_CONFIG ({@link ElrConfigRules}; the controller checks again against its
 *       latest image).</li>
 * </ol>
 *
 * <p>Validation reads the image when the request is handled; two alterations of the same
 * resource racing each other are ordered by the controller, and the later one's view of the
 * current set may be stale.
 */
final class ConfigAlterations {
    static final byte OP_SET = 0;
    static final byte OP_DELETE = 1;
    static final byte OP_APPEND = 2;
    static final byte OP_SUBTRACT = 3;

    /** The answer for one resource: an error, or the changes to write (possibly none). */
    record Outcome(ErrorCode error, String message, List<ControllerApi.ConfigChange> changes) {
        static Outcome failure(ErrorCode error, String message) {
            return new Outcome(error, message, List.of());
        }

        static Outcome success(List<ControllerApi.ConfigChange> changes) {
            return new Outcome(ErrorCode.NONE, null, changes);
        }

        boolean failed() {
            return error != ErrorCode.NONE;
        }
    }

    private final BrokerContext context;

    ConfigAlterations(BrokerContext context) {
        this.context = context;
    }

    /**
     * Alters each resource of a request in order: a resource named more than once is INVALID_REQUEST
     * at every occurrence, every other one gets {@code alterOne}'s outcome (by its index in the
     * request) against one metadata image; then {@link #commit} the outcomes.
     */
    void apply(List<ConfigResource> resources, boolean validateOnly, BiFunction<MetadataImage, Integer, Outcome> alterOne,
               Consumer<List<Outcome>> respond) {
        Set<ConfigResource> duplicates = duplicateResources(resources);
        MetadataImage image = context.image();
        List<Outcome> outcomes = new ArrayList<>(resources.size());
        for (int i = 0; i < resources.size(); i++) {
            outcomes.add(duplicates.contains(resources.get(i)) ? duplicateResource() : alterOne.apply(image, i));
        }
        commit(outcomes, validateOnly, respond);
    }

    /** Resources named more than once in a request: Kafka answers every occurrence INVALID_REQUEST. */
    private static Set<ConfigResource> duplicateResources(List<ConfigResource> resources) {
        Set<ConfigResource> seen = new HashSet<>();
        Set<ConfigResource> duplicates = new HashSet<>();
        for (ConfigResource resource : resources) {
            if (!seen.add(resource)) {
                duplicates.add(resource);
            }
        }
        return duplicates;
    }

    private static Outcome duplicateResource() {
        return Outcome.failure(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.");
    }

    /** Checks one resource's entries before any state is read; null if they are well-formed. */
    static Outcome checkEntries(List<String> names, List<String> namesWithMissingValues) {
        if (new HashSet<>(names).size() != names.size()) {
            return Outcome.failure(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys");
        }
        if (!namesWithMissingValues.isEmpty()) {
            return Outcome.failure(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + String.join(", ", namesWithMissingValues));
        }
        return null;
    }

    /** The name Kafka gives a resource type in messages. */
    static String typeName(byte type) {
        return switch (type) {
            case ConfigResource.TOPIC -> "TOPIC";
            case ConfigResource.BROKER -> "BROKER";
            case ConfigResource.BROKER_LOGGER -> "BROKER_LOGGER";
            case ConfigResource.CLIENT_METRICS -> "CLIENT_METRICS";
            case ConfigResource.GROUP -> "GROUP";
            default -> "UNKNOWN";
        };
    }

    /** Checks that the resource is one this broker alters here; null if it is. */
    Outcome checkResource(ConfigResource resource) {
        if (resource.type() == ConfigResource.TOPIC) {
            return null;
        }
        if (resource.type() != ConfigResource.BROKER) {
            String type = typeName(resource.type());
            return Outcome.failure(ErrorCode.INVALID_REQUEST, type.equals("UNKNOWN") ? "Unknown resource type " + resource.type()
                : "Altering configurations of resource type " + type + " is not supported");
        }
        if (resource.name().equals(DynamicBrokerConfig.CLUSTER_DEFAULT)) {
            return null;
        }
        int id;
        try {
            id = Integer.parseInt(resource.name());
        } catch (NumberFormatException e) {
            return Outcome.failure(ErrorCode.INVALID_REQUEST, "Node id must be an integer, but it is: " + resource.name());
        }
        if (id != context.nodeId()) {
            return Outcome.failure(ErrorCode.INVALID_REQUEST, "Unexpected node id. Expected " + context.nodeId() + ", but received " + id);
        }
        return null;
    }

    /** The definition of {@code name} for the resource's type, or null if the type has no such key. */
    static ConfigDef.Key definition(ConfigResource resource, String name) {
        return resource.type() == ConfigResource.TOPIC ? LogConfig.DEFINITION.key(name) : ServerConfig.DEFINITION.key(name);
    }

    /** The built-in default of a key as a string, or null: the base that APPEND and SUBTRACT start from when the key is unset. */
    static String builtInDefault(ConfigResource resource, String name) {
        ConfigDef.Key key = definition(resource, name);
        return key == null || !key.hasDefault() ? null : ConfigValues.toString(key.defaultValue());
    }

    /** Validates the complete proposed dynamic set of a resource; on success, the changes from the current set. */
    Outcome propose(MetadataImage image, ConfigResource resource, Map<String, String> proposed) {
        return propose(image, resource, proposed, List.of());
    }

    /**
     * {@link #propose(MetadataImage, ConfigResource, Map)} for a request that named the keys
     * {@code named}: then KIP-966's refusals ({@link ElrConfigRules#refusal}, INVALID_CONFIG) apply
     * to every named or changed key, as Kafka's controller writes a record for every key a
     * request names on a broker resource, even one whose value does not change; such a key is
     * also written again (KAFKA-14136).
     */
    Outcome propose(MetadataImage image, ConfigResource resource, Map<String, String> proposed, Collection<String> named) {
        Outcome problem = resource.type() == ConfigResource.TOPIC ? validateTopic(image, resource.name(), proposed)
            : validateBroker(image, resource.name(), proposed);
        if (problem != null) {
            return problem;
        }
        Map<String, String> current = image.configs(resource);
        Set<String> keys = new TreeSet<>(current.keySet());
        keys.addAll(proposed.keySet());
        List<ControllerApi.ConfigChange> changes = new ArrayList<>();
        Set<String> touched = new TreeSet<>(named);
        boolean broker = resource.type() == ConfigResource.BROKER;
        for (String key : keys) {
            // KAFKA-14136: a broker resource gets a record for every key the request names, even an unchanged one, so
            // brokers reload it; with ELR on, an unchanged cluster-level min.insync.replicas so clears every ELR, as Kafka.
            if (!Objects.equals(current.get(key), proposed.get(key)) || (broker && named.contains(key))) {
                changes.add(new ControllerApi.ConfigChange(resource, key, proposed.get(key)));
                touched.add(key);
            }
        }
        if (broker) {
            for (String key : named) {
                if (!keys.contains(key)) {
                    // Named but neither set nor present: a DELETE of an absent key, still a record for a broker resource.
                    changes.add(new ControllerApi.ConfigChange(resource, key, null));
                }
            }
        }
        for (String key : touched) {
            ControllerRefusedException refused = ElrConfigRules.refusal(image, resource, key, proposed.get(key));
            if (refused != null) {
                return Outcome.failure(refused.error(), refused.getMessage());
            }
        }
        return Outcome.success(changes);
    }

    private static Outcome validateTopic(MetadataImage image, String name, Map<String, String> proposed) {
        if (name.isEmpty()) {
            return Outcome.failure(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.");
        }
        String invalidName = TopicNames.validate(name);
        if (invalidName != null) {
            return Outcome.failure(ErrorCode.INVALID_TOPIC_EXCEPTION, invalidName);
        }
        for (String key : proposed.keySet()) {
            if (LogConfig.DEFINITION.key(key) == null) {
                return Outcome.failure(ErrorCode.INVALID_CONFIG, "Unknown topic config name: " + key);
            }
        }
        try {
            LogConfig.validateOverrides(proposed);
        } catch (ConfigException e) {
            return Outcome.failure(ErrorCode.INVALID_CONFIG, e.getMessage());
        }
        if (image.topic(name) == null) {
            return Outcome.failure(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic '" + name + "' does not exist.");
        }
        return null;
    }

    private Outcome validateBroker(MetadataImage image, String name, Map<String, String> proposed) {
        try {
            DynamicBrokerConfig.validate(context.config(), image, context.nodeId(), name, proposed);
            return null;
        } catch (ConfigException e) {
            return Outcome.failure(ErrorCode.INVALID_REQUEST, e.getMessage());
        }
    }

    /**
     * Writes the changes of every successful outcome in one metadata batch, unless
     * {@code validateOnly}, then passes the final outcomes (in the same order) to
     * {@code respond}. If the write fails, the outcomes that were to be written become
     * UNKNOWN_SERVER_ERROR. By the time {@code respond} runs, the logs have the new configuration.
     */
    void commit(List<Outcome> outcomes, boolean validateOnly, Consumer<List<Outcome>> respond) {
        List<ControllerApi.ConfigChange> changes = new ArrayList<>();
        for (Outcome outcome : outcomes) {
            changes.addAll(outcome.changes());
        }
        if (validateOnly || changes.isEmpty()) {
            respond.accept(outcomes);
            return;
        }
        context.controller().alterConfigs(changes).whenComplete((ignored, failure) -> {
            if (failure == null) {
                respond.accept(outcomes);
                return;
            }
            List<Outcome> failed = new ArrayList<>();
            for (Outcome outcome : outcomes) {
                failed.add(outcome.changes().isEmpty() ? outcome : Outcome.failure(ControllerErrors.of(failure), ControllerErrors.message(failure)));
            }
            respond.accept(failed);
        });
    }
}
