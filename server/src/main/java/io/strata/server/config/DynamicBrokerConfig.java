package io.strata.server.config;

import io.strata.common.config.ConfigDef;
import io.strata.common.config.ConfigException;
import io.strata.metadata.ConfigResource;
import io.strata.metadata.ConfigValues;
import io.strata.metadata.MetadataImage;
import io.strata.storage.LogConfig;
import io.strata.storage.cleaner.CleanerConfig;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Broker settings changed at runtime (AlterConfigs / IncrementalAlterConfigs on a BROKER
 * resource). They live in the metadata log as ConfigRecords of resource type BROKER, named by
 * a node id (that broker only) or {@value #CLUSTER_DEFAULT} (every broker). As in Kafka, a
 * broker key's effective value is, most specific first:
 * <pre>
 *   dynamic per-broker  &gt;  dynamic cluster default  &gt;  static (server.properties)  &gt;  built-in default
 * </pre>
 *
 * <p>Which keys are accepted, and what a change of each does, is {@link DynamicBrokerConfigTable}:
 * every key Kafka 4.4 can change dynamically, with Kafka's update mode and Strata's status. Only
 * its {@code LIVE} and {@code LOG_CLEANER} keys are accepted (the latter reach the cleaner through
 * {@link #cleanerConfig} and {@code LogCleaner.reconfigure}); a
 * key Kafka keeps static is refused with Kafka's own message, and a dynamic key whose subsystem
 * Strata lacks is refused with the reason, rather than stored and silently ignored. The topic
 * defaults ({@code log.retention.ms}, {@code message.max.bytes}, ...; never the
 * {@code .hours}/{@code .minutes} forms, which Kafka keeps static) reach the logs through
 * {@link #topicDefaults}, which the replica manager re-applies to every log when they change;
 * the other live keys are applied by {@code BrokerReconfiguration}. Security keys (TLS, SASL,
 * ACLs) are refused naming them, as {@link ListenerSecurity} refuses them at start-up.
 *
 * <p>Stateless; safe from any thread.
 */
public final class DynamicBrokerConfig {
    /** Resource name of the cluster-wide dynamic defaults. */
    public static final String CLUSTER_DEFAULT = "";

    /** Kafka's LogCleaner.RECONFIGURABLE_CONFIGS but message.max.bytes (already a topic-config synonym). */
    public static final Set<String> CLEANER_RECONFIGURABLE = DynamicBrokerConfigTable.keys(DynamicBrokerConfigTable.Status.LOG_CLEANER);

    /** Broker keys that may change at runtime: the table's live keys and the cleaner's. */
    public static final Set<String> RECONFIGURABLE = reconfigurable();

    private static final Map<String, String> STATIC_DEFAULTS = staticDefaults();

    private DynamicBrokerConfig() {
    }

    private static Set<String> reconfigurable() {
        Set<String> keys = new TreeSet<>(DynamicBrokerConfigTable.keys(DynamicBrokerConfigTable.Status.LIVE));
        keys.addAll(CLEANER_RECONFIGURABLE);
        return Collections.unmodifiableSet(keys);
    }

    private static Map<String, String> staticDefaults() {
        Map<String, String> defaults = new HashMap<>();
        for (ConfigDef.Key key : ServerConfig.DEFINITION.keys().values()) {
            if (key.hasDefault() && key.defaultValue() != null) {
                defaults.put(key.name(), ConfigValues.toString(key.defaultValue()));
            }
        }
        return Collections.unmodifiableMap(defaults);
    }

    /** Built-in defaults of the broker keys that have one, as strings (Kafka's "DEFAULT_CONFIG" source). */
    public static Map<String, String> builtInDefaults() {
        return STATIC_DEFAULTS;
    }

    /** Dynamic settings of this broker alone. */
    public static Map<String, String> perBroker(MetadataImage image, int nodeId) {
        return image.configs(ConfigResource.broker(Integer.toString(nodeId)));
    }

    /** Dynamic settings of every broker. */
    public static Map<String, String> clusterDefaults(MetadataImage image) {
        return image.configs(ConfigResource.broker(CLUSTER_DEFAULT));
    }

    /**
     * Topic-key defaults for the logs of this broker: those derived from the static settings,
     * overridden by the dynamic cluster defaults, overridden by this broker's dynamic settings.
     * Dynamic settings only ever hold primary synonyms, which win over the static hour and
     * minute forms, so overlaying the derived maps gives Kafka's precedence.
     */
    public static Map<String, String> topicDefaults(Map<String, String> staticTopicDefaults, MetadataImage image, int nodeId) {
        Map<String, String> clusterDefaults = clusterDefaults(image);
        Map<String, String> perBroker = perBroker(image, nodeId);
        if (clusterDefaults.isEmpty() && perBroker.isEmpty()) {
            return staticTopicDefaults;
        }
        Map<String, String> merged = new HashMap<>(staticTopicDefaults);
        merged.putAll(LogConfig.brokerDefaults(clusterDefaults));
        merged.putAll(LogConfig.brokerDefaults(perBroker));
        return merged;
    }

    /** Whether the dynamic settings that apply to this broker differ between two images. */
    public static boolean changed(MetadataImage previous, MetadataImage current, int nodeId) {
        return !clusterDefaults(previous).equals(clusterDefaults(current)) || !perBroker(previous, nodeId).equals(perBroker(current, nodeId));
    }

    /** The broker's properties as they apply now: static ones overlaid with the dynamic ones. */
    public static Map<String, String> effectiveProperties(ServerConfig config, MetadataImage image, int nodeId) {
        Map<String, String> merged = new LinkedHashMap<>(config.originals());
        merged.putAll(clusterDefaults(image));
        merged.putAll(perBroker(image, nodeId));
        return merged;
    }

    /**
     * Broker keys that are synonyms of {@code name}, most specific first, as Kafka lists them
     * in DescribeConfigs: the ms/minutes/hours families of retention and roll, and
     * {@code log.flush.interval.ms} (whose fallback is {@code log.flush.scheduler.interval.ms});
     * any other key is its own only synonym.
     */
    public static List<String> synonyms(String name) {
        if (!name.equals(ServerConfig.LOG_FLUSH_SCHEDULER_INTERVAL_MS)) {
            for (List<String> family : LogConfig.BROKER_SYNONYMS.values()) {
                if (family.size() > 1 && family.contains(name)) {
                    return family;
                }
            }
        }
        return List.of(name);
    }

    /**
     * Checks a proposed complete set of dynamic settings for one BROKER resource (this node's
     * id or {@value #CLUSTER_DEFAULT}), as Kafka's broker does before it forwards the change:
     * every key must be reconfigurable, per-broker-only keys must name a broker, every value must
     * parse and pass the key's validator, thread counts may at most halve or double (Kafka's
     * DynamicThreadPool rule), and the resulting configuration (topic defaults included) must be
     * valid.
     *
     * @throws ConfigException naming the offending keys or value; Kafka answers INVALID_REQUEST
     */
    public static void validate(ServerConfig config, MetadataImage image, int nodeId, String resourceName, Map<String, String> proposed) {
        Set<String> staticOnly = new LinkedHashSet<>();
        Map<String, String> unsupported = new LinkedHashMap<>();
        Set<String> perBrokerOnly = new LinkedHashSet<>();
        for (String name : proposed.keySet()) {
            DynamicBrokerConfigTable.Entry entry = DynamicBrokerConfigTable.entry(name);
            if (entry == null) {
                staticOnly.add(name);
            } else if (!RECONFIGURABLE.contains(name)) {
                unsupported.put(name, entry.detail());
            } else if (entry.mode() == DynamicBrokerConfigTable.UpdateMode.PER_BROKER && resourceName.equals(CLUSTER_DEFAULT)) {
                perBrokerOnly.add(name);
            }
        }
        // Kafka's checks and messages, in Kafka's order (DynamicBrokerConfig.validateConfigs).
        if (!staticOnly.isEmpty()) {
            throw new ConfigException("Cannot update these configs dynamically: Set(" + String.join(", ", staticOnly) + ")" + securityNote(staticOnly));
        }
        if (!unsupported.isEmpty()) {
            List<String> reasons = new ArrayList<>();
            unsupported.forEach((name, reason) -> reasons.add(name + ": " + reason));
            throw new ConfigException("Cannot update these configs dynamically on this broker: Set(" + String.join(", ", unsupported.keySet())
                + ") (" + String.join("; ", reasons) + ")" + securityNote(unsupported.keySet()));
        }
        if (!perBrokerOnly.isEmpty()) {
            throw new ConfigException("Cannot update these configs at default cluster level, broker id must be specified: Set("
                + String.join(", ", perBrokerOnly) + ")");
        }
        for (Map.Entry<String, String> entry : proposed.entrySet()) {
            ConfigDef.Key key = ServerConfig.DEFINITION.key(entry.getKey());
            Object value = ConfigDef.parse(key.name(), key.type(), entry.getValue());
            if (key.validator() != null && value != null) {
                key.validator().ensureValid(key.name(), value);
            }
        }
        Map<String, String> merged = new HashMap<>(config.originals());
        if (resourceName.equals(CLUSTER_DEFAULT)) {
            merged.putAll(proposed);
            merged.putAll(perBroker(image, nodeId));
        } else {
            merged.putAll(clusterDefaults(image));
            merged.putAll(proposed);
        }
        ServerConfig current = effectiveConfig(config, image, nodeId);
        ServerConfig next = ServerConfig.fromMap(merged);
        for (String threadPool : THREAD_POOL_KEYS) {
            if (proposed.containsKey(threadPool)) {
                validateThreadCount(threadPool, current.getInt(threadPool), next.getInt(threadPool));
            }
        }
        LogConfig.of(LogConfig.brokerDefaults(merged), Map.of());
        if (proposed.keySet().stream().anyMatch(CLEANER_RECONFIGURABLE::contains)) {
            try {
                current.cleanerConfig().validateReconfiguration(next.cleanerConfig());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(e.getMessage());
            }
        }
    }

    /** Thread-count keys that Kafka lets change by at most a factor of two at a time (its DynamicThreadPool). */
    private static final List<String> THREAD_POOL_KEYS = List.of(ServerConfig.NUM_IO_THREADS, ServerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR,
        ServerConfig.NUM_REPLICA_FETCHERS);

    private static void validateThreadCount(String name, int current, int proposed) {
        if (proposed == current) {
            return;
        }
        String problem = "Dynamic thread count update validation failed for " + name + "=" + proposed;
        if (proposed <= 0) {
            throw new ConfigException(problem + ", value should be at least 1");
        }
        if (proposed < current / 2) {
            throw new ConfigException(problem + ", value should be at least half the current value " + current);
        }
        if (proposed > current * 2) {
            throw new ConfigException(problem + ", value should not be greater than double the current value " + current);
        }
    }

    /** The broker configuration as it applies now: static settings overlaid with the dynamic ones, parsed and validated. */
    public static ServerConfig effectiveConfig(ServerConfig config, MetadataImage image, int nodeId) {
        if (clusterDefaults(image).isEmpty() && perBroker(image, nodeId).isEmpty()) {
            return config;
        }
        return ServerConfig.fromMap(effectiveProperties(config, image, nodeId));
    }

    /** The log cleaner's settings as they apply now: static log.cleaner.* overlaid with the dynamic ones. */
    public static CleanerConfig cleanerConfig(ServerConfig config, MetadataImage image, int nodeId) {
        Map<String, String> clusterDefaults = clusterDefaults(image);
        Map<String, String> perBroker = perBroker(image, nodeId);
        if (clusterDefaults.isEmpty() && perBroker.isEmpty()) {
            return config.cleanerConfig();
        }
        return ServerConfig.fromMap(effectiveProperties(config, image, nodeId)).cleanerConfig();
    }

    /** Keys whose values the broker reports as read-only in DescribeConfigs: all but the reconfigurable ones. */
    public static boolean isReadOnly(String name) {
        return !RECONFIGURABLE.contains(name);
    }

    /** Sorted broker keys to describe: every defined key and every key set statically or dynamically. */
    public static List<String> describedKeys(Map<String, String> effectiveProperties) {
        Set<String> names = new TreeSet<>(ServerConfig.DEFINITION.keys().keySet());
        names.addAll(effectiveProperties.keySet());
        return new ArrayList<>(names);
    }

    /** "; not implemented: k1, k2" for the security keys among {@code names}, else "". */
    private static String securityNote(java.util.Collection<String> names) {
        List<String> security = names.stream().filter(ListenerSecurity::isSecurityKey).toList();
        return security.isEmpty() ? "" : "; " + ListenerSecurity.DYNAMIC_NOT_IMPLEMENTED + ": " + String.join(", ", security);
    }
}
