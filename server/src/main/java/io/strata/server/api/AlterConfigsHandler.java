package io.strata.server.api;

import io.strata.metadata.ConfigResource;
import io.strata.metadata.MetadataImage;
import io.strata.protocol.message.AlterConfigsRequestData;
import io.strata.protocol.message.AlterConfigsResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * AlterConfigs, the legacy API (kafka-clients 4 no longer sends it; older clients and tools do):
 * the request gives a resource's complete dynamic configuration, so every dynamic key it does
 * not name is removed. Validated and written as {@link ConfigAlterations} describes; one answer
 * per resource, in request order.
 */
final class AlterConfigsHandler implements ApiHandler {
    private final ConfigAlterations alterations;

    AlterConfigsHandler(BrokerContext context) {
        this.alterations = new ConfigAlterations(context);
    }

    @Override
    public void handle(Request request) {
        AlterConfigsRequestData body = request.body(AlterConfigsRequestData.class);
        List<ConfigResource> resources = new ArrayList<>();
        for (AlterConfigsRequestData.AlterConfigsResource resource : body.resources()) {
            resources.add(new ConfigResource(resource.resourceType(), resource.resourceName()));
        }
        alterations.apply(resources, body.validateOnly(),
            (image, i) -> alter(image, resources.get(i), body.resources().get(i).configs()), finalOutcomes -> {
            AlterConfigsResponseData response = new AlterConfigsResponseData();
            for (int i = 0; i < resources.size(); i++) {
                ConfigAlterations.Outcome outcome = finalOutcomes.get(i);
                response.responses().add(new AlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setResourceType(resources.get(i).type()).setResourceName(resources.get(i).name())
                    .setErrorCode(outcome.error().code()).setErrorMessage(outcome.message()));
            }
            request.respond(response);
        });
    }

    private ConfigAlterations.Outcome alter(MetadataImage image, ConfigResource resource, List<AlterConfigsRequestData.AlterableConfig> configs) {
        List<String> names = new ArrayList<>();
        List<String> missingValues = new ArrayList<>();
        Map<String, String> proposed = new HashMap<>();
        for (AlterConfigsRequestData.AlterableConfig config : configs) {
            names.add(config.name());
            if (config.value() == null) {
                missingValues.add(config.name());
            }
            proposed.put(config.name(), config.value());
        }
        ConfigAlterations.Outcome problem = ConfigAlterations.checkEntries(names, missingValues);
        if (problem == null) {
            problem = alterations.checkResource(resource);
        }
        return problem != null ? problem : alterations.propose(image, resource, proposed, names);
    }
}
