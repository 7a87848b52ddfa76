package io.strata.server.api;

import io.strata.common.config.ConfigDef;
import io.strata.common.config.ConfigException;
import io.strata.metadata.ConfigResource;
import io.strata.metadata.ConfigValues;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicNames;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DescribeConfigsRequestData;
import io.strata.protocol.message.DescribeConfigsResponseData;
import io.strata.server.config.DynamicBrokerConfig;
import io.strata.server.config.ServerConfig;
import io.strata.server.network.Request;
import io.strata.storage.LogConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * DescribeConfigs for topics and brokers, entry by entry as Kafka's ConfigHelper builds them.
 *
 * <p><b>Topic</b> (type 2): every topic configuration with its effective value, never
 * read-only or sensitive. Its source and synonyms come from the chain: the topic's own
 * override (DYNAMIC_TOPIC_CONFIG), then the broker synonyms of the key from the dynamic
 * per-broker settings, the dynamic cluster defaults, the static properties and the built-in
 * broker defaults, in that order of sources. Kafka then drops leading synonyms until the
 * key's primary broker name, so {@code retention.ms} lists {@code log.retention.hours} only
 * when {@code log.retention.ms} is also set; with no synonym left the source is DEFAULT_CONFIG.
 * An unknown topic is UNKNOWN_TOPIC_OR_PARTITION, an illegal name INVALID_TOPIC_EXCEPTION.
 *
 * <p><b>Broker</b> (type 4): this node's id lists every broker key (defined or set) with its
 * current value, read-only unless it can change at runtime; keys the broker does not define
 * are reported sensitive, with no value. The empty name lists only the dynamic cluster
 * defaults. Any other name is INVALID_REQUEST.
 *
 * <p>Other resource types are INVALID_REQUEST. Synonyms only with {@code includeSynonyms},
 * documentation only with {@code includeDocumentation} (v3+); the config type is always set.
 */
final class DescribeConfigsHandler implements ApiHandler {
    static final byte SOURCE_DYNAMIC_TOPIC_CONFIG = 1;
    static final byte SOURCE_DYNAMIC_BROKER_CONFIG = 2;
    static final byte SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG = 3;
    static final byte SOURCE_STATIC_BROKER_CONFIG = 4;
    static final byte SOURCE_DEFAULT_CONFIG = 5;

    private final BrokerContext context;

    DescribeConfigsHandler(BrokerContext context) {
        this.context = context;
    }

    /** The broker settings each synonym source reads, from one image. */
    private record BrokerSources(Map<String, String> dynamicBroker, Map<String, String> dynamicDefault, Map<String, String> staticBroker,
                                 Map<String, String> builtInDefault) {
    }

    /** What the request asks to include in each entry. */
    private record Options(boolean synonyms, boolean documentation) {
    }

    @Override
    public void handle(Request request) {
        DescribeConfigsRequestData body = request.body(DescribeConfigsRequestData.class);
        MetadataImage image = context.image();
        BrokerSources sources = new BrokerSources(DynamicBrokerConfig.perBroker(image, context.nodeId()),
            DynamicBrokerConfig.clusterDefaults(image), context.config().originals(), DynamicBrokerConfig.builtInDefaults());
        Options options = new Options(body.includeSynonyms(), body.includeDocumentation());
        DescribeConfigsResponseData response = new DescribeConfigsResponseData();
        for (DescribeConfigsRequestData.DescribeConfigsResource resource : body.resources()) {
            DescribeConfigsResponseData.DescribeConfigsResult result = describe(image, sources, options, resource)
                .setResourceType(resource.resourceType()).setResourceName(resource.resourceName());
            response.results().add(result);
        }
        request.respond(response);
    }

    private DescribeConfigsResponseData.DescribeConfigsResult describe(MetadataImage image, BrokerSources sources, Options options,
                                                                       DescribeConfigsRequestData.DescribeConfigsResource resource) {
        return switch (resource.resourceType()) {
            case ConfigResource.TOPIC -> describeTopic(image, sources, options, resource);
            case ConfigResource.BROKER -> describeBroker(image, sources, options, resource);
            default -> failure(ErrorCode.INVALID_REQUEST, "Unsupported resource type: " + ConfigAlterations.typeName(resource.resourceType()));
        };
    }

    private static DescribeConfigsResponseData.DescribeConfigsResult failure(ErrorCode error, String message) {
        return new DescribeConfigsResponseData.DescribeConfigsResult().setErrorCode(error.code()).setErrorMessage(message);
    }

    private static boolean requested(DescribeConfigsRequestData.DescribeConfigsResource resource, String name) {
        List<String> keys = resource.configurationKeys();
        return keys == null || keys.isEmpty() || keys.contains(name);
    }

    // ---------------------------------------------------------------- topics

    private DescribeConfigsResponseData.DescribeConfigsResult describeTopic(MetadataImage image, BrokerSources sources, Options options,
                                                                            DescribeConfigsRequestData.DescribeConfigsResource resource) {
        String topic = resource.resourceName();
        String invalid = TopicNames.validate(topic);
        if (invalid != null) {
            return failure(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid);
        }
        if (image.topic(topic) == null) {
            return failure(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
        }
        Map<String, String> overrides = image.configs(ConfigResource.topic(topic));
        LogConfig effective = context.replicaManager().logConfig(image, topic);
        DescribeConfigsResponseData.DescribeConfigsResult result = new DescribeConfigsResponseData.DescribeConfigsResult()
            .setErrorCode(ErrorCode.NONE.code()).setErrorMessage(null);
        for (ConfigDef.Key key : LogConfig.DEFINITION.keys().values()) {
            if (requested(resource, key.name())) {
                result.configs().add(topicEntry(key, ConfigValues.toString(effective.value(key.name())), overrides, sources, options));
            }
        }
        return result;
    }

    private static DescribeConfigsResponseData.DescribeConfigsResourceResult topicEntry(ConfigDef.Key key, String value,
                                                                                        Map<String, String> overrides,
                                                                                        BrokerSources sources, Options options) {
        List<DescribeConfigsResponseData.DescribeConfigsSynonym> synonyms = new ArrayList<>();
        if (overrides.containsKey(key.name())) {
            synonyms.add(synonym(key.name(), value, SOURCE_DYNAMIC_TOPIC_CONFIG));
        }
        List<String> brokerNames = LogConfig.BROKER_SYNONYMS.get(key.name());
        if (brokerNames != null) {
            String primary = brokerNames.get(0);
            synonyms.addAll(brokerSynonyms(primary, DynamicBrokerConfig.synonyms(primary), sources));
        }
        return entry(key.name(), value, false, false, synonyms, options)
            .setConfigType(configType(key.type())).setDocumentation(options.documentation() ? key.documentation() : null);
    }

    // ---------------------------------------------------------------- brokers

    private DescribeConfigsResponseData.DescribeConfigsResult describeBroker(MetadataImage image, BrokerSources sources, Options options,
                                                                             DescribeConfigsRequestData.DescribeConfigsResource resource) {
        String name = resource.resourceName();
        DescribeConfigsResponseData.DescribeConfigsResult result = new DescribeConfigsResponseData.DescribeConfigsResult()
            .setErrorCode(ErrorCode.NONE.code()).setErrorMessage(null);
        if (name == null || name.isEmpty()) {
            for (String key : new TreeSet<>(sources.dynamicDefault().keySet())) {
                if (requested(resource, key)) {
                    result.configs().add(brokerEntry(key, sources.dynamicDefault().get(key), false, sources, options));
                }
            }
            return result;
        }
        int id;
        try {
            id = Integer.parseInt(name);
        } catch (NumberFormatException e) {
            return failure(ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: " + name);
        }
        if (id != context.nodeId()) {
            return failure(ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected " + context.nodeId() + " or empty string, but received " + name);
        }
        Map<String, String> properties = DynamicBrokerConfig.effectiveProperties(context.config(), image, context.nodeId());
        Map<String, Object> values = currentValues(properties);
        for (String key : DynamicBrokerConfig.describedKeys(properties)) {
            if (requested(resource, key)) {
                String value = ServerConfig.DEFINITION.key(key) == null ? null : ConfigValues.toString(values.get(key));
                result.configs().add(brokerEntry(key, value, true, sources, options));
            }
        }
        return result;
    }

    /** Typed values of every defined broker key under the current static and dynamic settings. */
    private Map<String, Object> currentValues(Map<String, String> properties) {
        try {
            return ServerConfig.DEFINITION.parse(properties).values();
        } catch (ConfigException e) {
            // Dynamic settings were validated when written; should one no longer parse, show the static values.
            return ServerConfig.DEFINITION.parse(context.config().originals()).values();
        }
    }

    /**
     * One broker key. For the cluster-default resource ({@code perBroker} false) only dynamic
     * cluster-default synonyms are listed. Keys the broker does not define have no known type,
     * and Kafka reports such keys as sensitive to be safe.
     */
    private static DescribeConfigsResponseData.DescribeConfigsResourceResult brokerEntry(String name, String value, boolean perBroker,
                                                                                         BrokerSources sources, Options options) {
        ConfigDef.Key key = ServerConfig.DEFINITION.key(name);
        boolean sensitive = key == null || key.type() == ConfigDef.Type.PASSWORD;
        List<DescribeConfigsResponseData.DescribeConfigsSynonym> synonyms = new ArrayList<>();
        for (DescribeConfigsResponseData.DescribeConfigsSynonym synonym : brokerSynonyms(name, DynamicBrokerConfig.synonyms(name), sources)) {
            if (perBroker || synonym.source() == SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG) {
                synonyms.add(sensitive ? synonym.setValue(null) : synonym);
            }
        }
        return entry(name, sensitive ? null : value, DynamicBrokerConfig.isReadOnly(name), sensitive, synonyms, options)
            .setConfigType(key == null ? 0 : configType(key.type()))
            .setDocumentation(options.documentation() && key != null ? key.documentation() : null);
    }

    // ---------------------------------------------------------------- shared

    /**
     * The broker synonyms of {@code name} that are set somewhere, grouped by source (dynamic
     * per-broker, dynamic default, static, built-in default), each group in synonym order;
     * leading entries are dropped until one named {@code name}.
     */
    private static List<DescribeConfigsResponseData.DescribeConfigsSynonym> brokerSynonyms(String name, List<String> names, BrokerSources sources) {
        List<DescribeConfigsResponseData.DescribeConfigsSynonym> found = new ArrayList<>();
        addSynonyms(found, names, sources.dynamicBroker(), SOURCE_DYNAMIC_BROKER_CONFIG);
        addSynonyms(found, names, sources.dynamicDefault(), SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG);
        addSynonyms(found, names, sources.staticBroker(), SOURCE_STATIC_BROKER_CONFIG);
        addSynonyms(found, names, sources.builtInDefault(), SOURCE_DEFAULT_CONFIG);
        int first = 0;
        while (first < found.size() && !found.get(first).name().equals(name)) {
            first++;
        }
        return new ArrayList<>(found.subList(first, found.size()));
    }

    private static void addSynonyms(List<DescribeConfigsResponseData.DescribeConfigsSynonym> found, List<String> names, Map<String, String> source,
                                    byte sourceId) {
        for (String name : names) {
            String value = source.get(name);
            if (value != null) {
                found.add(synonym(name, value, sourceId));
            }
        }
    }

    private static DescribeConfigsResponseData.DescribeConfigsSynonym synonym(String name, String value, byte source) {
        return new DescribeConfigsResponseData.DescribeConfigsSynonym().setName(name).setValue(value).setSource(source);
    }

    /** An entry whose source is its first synonym's (DEFAULT_CONFIG if none); synonyms listed only when asked for. */
    private static DescribeConfigsResponseData.DescribeConfigsResourceResult entry(String name, String value, boolean readOnly, boolean sensitive,
                                                                                   List<DescribeConfigsResponseData.DescribeConfigsSynonym> synonyms,
                                                                                   Options options) {
        byte source = synonyms.isEmpty() ? SOURCE_DEFAULT_CONFIG : synonyms.get(0).source();
        return new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(name).setValue(value).setReadOnly(readOnly)
            .setConfigSource(source).setIsSensitive(sensitive).setSynonyms(options.synonyms() ? synonyms : new ArrayList<>());
    }

    /** Kafka's DescribeConfigs config type ids: UNKNOWN 0, BOOLEAN 1, STRING 2, INT 3, SHORT 4, LONG 5, DOUBLE 6, LIST 7, CLASS 8, PASSWORD 9. */
    static byte configType(ConfigDef.Type type) {
        return switch (type) {
            case BOOLEAN -> 1;
            case STRING -> 2;
            case INT -> 3;
            case SHORT -> 4;
            case LONG -> 5;
            case DOUBLE -> 6;
            case LIST -> 7;
            case PASSWORD -> 9;
        };
    }
}
