package io.strata.server.api;

import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.server.network.Request;

import java.util.Map;

/** ApiVersions: the advertised API ranges and the supported and finalized features. */
final class ApiVersionsHandler implements ApiHandler {
    private final BrokerContext context;

    ApiVersionsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        ApiVersionsResponseData response = new ApiVersionsResponseData();
        context.apiVersions().addTo(response);
        if (request.apiVersion() < 3) {
            request.respond(response); // features arrived with the flexible versions
            return;
        }
        for (Map.Entry<String, short[]> feature : context.features().supported().entrySet()) {
            response.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey()
                .setName(feature.getKey()).setMinVersion(feature.getValue()[0]).setMaxVersion(feature.getValue()[1]));
        }
        var image = context.image();
        response.setFinalizedFeaturesEpoch(image.offset());
        for (Map.Entry<String, Short> level : image.features().entrySet()) {
            response.finalizedFeatures().add(new ApiVersionsResponseData.FinalizedFeatureKey()
                .setName(level.getKey()).setMinVersionLevel(level.getValue()).setMaxVersionLevel(level.getValue()));
        }
        request.respond(response);
    }
}
