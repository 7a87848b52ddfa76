package io.strata.server.api;

import io.strata.common.config.ConfigDef;
import io.strata.metadata.ConfigResource;
import io.strata.metadata.MetadataImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.IncrementalAlterConfigsRequestData;
import io.strata.protocol.message.IncrementalAlterConfigsResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * IncrementalAlterConfigs: per key, SET a value, DELETE the dynamic value (back to the broker
 * or built-in default), or APPEND to / SUBTRACT from a list-typed key. Validated and written as
 * {@link ConfigAlterations} describes; one answer per resource, in request order.
 *
 * <p>List editing, as Kafka's controller does it: the base is the key's dynamic value, else
 * its built-in default (not the broker's setting); APPEND adds each comma-separated item not
 * already present, SUBTRACT removes one occurrence of each; the result is stored comma-joined
 * (an empty list is the empty string, not a deletion). On a key that is not a list, APPEND and
 * SUBTRACT are INVALID_CONFIG for a topic and INVALID_REQUEST for a broker.
 */
final class IncrementalAlterConfigsHandler implements ApiHandler {
    private final ConfigAlterations alterations;

    IncrementalAlterConfigsHandler(BrokerContext context) {
        this.alterations = new ConfigAlterations(context);
    }

    @Override
    public void handle(Request request) {
        IncrementalAlterConfigsRequestData body = request.body(IncrementalAlterConfigsRequestData.class);
        List<ConfigResource> resources = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource resource : body.resources()) {
            resources.add(new ConfigResource(resource.resourceType(), resource.resourceName()));
        }
        alterations.apply(resources, body.validateOnly(),
            (image, i) -> alter(image, resources.get(i), body.resources().get(i).configs()), finalOutcomes -> {
            IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
            for (int i = 0; i < resources.size(); i++) {
                ConfigAlterations.Outcome outcome = finalOutcomes.get(i);
                response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setResourceType(resources.get(i).type()).setResourceName(resources.get(i).name())
                    .setErrorCode(outcome.error().code()).setErrorMessage(outcome.message()));
            }
            request.respond(response);
        });
    }

    private ConfigAlterations.Outcome alter(MetadataImage image, ConfigResource resource,
                                            List<IncrementalAlterConfigsRequestData.AlterableConfig> configs) {
        List<String> names = new ArrayList<>();
        List<String> missingValues = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig config : configs) {
            names.add(config.name());
            if (config.configOperation() != ConfigAlterations.OP_DELETE && config.value() == null) {
                missingValues.add(config.name());
            }
        }
        ConfigAlterations.Outcome problem = ConfigAlterations.checkEntries(names, missingValues);
        if (problem == null) {
            problem = alterations.checkResource(resource);
        }
        if (problem != null) {
            return problem;
        }
        Map<String, String> proposed = new HashMap<>(image.configs(resource));
        for (IncrementalAlterConfigsRequestData.AlterableConfig config : configs) {
            problem = apply(resource, config, proposed);
            if (problem != null) {
                return problem;
            }
        }
        return alterations.propose(image, resource, proposed, names);
    }

    /** Applies one operation to {@code proposed}; null on success, else the resource's answer. */
    private static ConfigAlterations.Outcome apply(ConfigResource resource, IncrementalAlterConfigsRequestData.AlterableConfig config,
                                                   Map<String, String> proposed) {
        String name = config.name();
        switch (config.configOperation()) {
            case ConfigAlterations.OP_SET:
                proposed.put(name, config.value());
                return null;
            case ConfigAlterations.OP_DELETE:
                proposed.remove(name);
                return null;
            case ConfigAlterations.OP_APPEND:
            case ConfigAlterations.OP_SUBTRACT:
                boolean append = config.configOperation() == ConfigAlterations.OP_APPEND;
                ConfigDef.Key key = ConfigAlterations.definition(resource, name);
                if (key == null || key.type() != ConfigDef.Type.LIST) {
                    return notAList(resource, name, append);
                }
                List<String> items = items(proposed.containsKey(name) ? proposed.get(name) : ConfigAlterations.builtInDefault(resource, name));
                for (String item : config.value().split(",")) {
                    if (!append) {
                        items.remove(item);
                    } else if (!items.contains(item)) {
                        items.add(item);
                    }
                }
                proposed.put(name, String.join(",", items));
                return null;
            default:
                return ConfigAlterations.Outcome.failure(ErrorCode.INVALID_REQUEST, "Unknown operations type " + config.configOperation());
        }
    }

    private static ConfigAlterations.Outcome notAList(ConfigResource resource, String name, boolean append) {
        if (resource.type() == ConfigResource.TOPIC) {
            return ConfigAlterations.Outcome.failure(ErrorCode.INVALID_CONFIG,
                "Can't " + (append ? "APPEND" : "SUBTRACT") + " to key " + name + " because its type is not LIST.");
        }
        return ConfigAlterations.Outcome.failure(ErrorCode.INVALID_REQUEST,
            "Config value " + (append ? "append" : "subtract") + " is not allowed for config key: " + name);
    }

    /** A list value's items, skipping empty ones. */
    private static List<String> items(String value) {
        List<String> items = new ArrayList<>();
        if (value == null) {
            return items;
        }
        for (String item : value.split(",")) {
            if (!item.isEmpty()) {
                items.add(item);
            }
        }
        return items;
    }
}
