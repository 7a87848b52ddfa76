package io.strata.server.api;

import io.strata.protocol.message.ApiMessageType;
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
        var image = context.image();
        if (image.features().getOrDefault(Features.TRANSACTION_VERSION, (short) 0) < 2) {
            capTransactionsV2(response);
        }
        if (request.apiVersion() < 3) {
            request.respond(response); // features arrived with the flexible versions
            return;
        }
        for (Map.Entry<String, short[]> feature : context.features().supported().entrySet()) {
            response.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey()
                .setName(feature.getKey()).setMinVersion(feature.getValue()[0]).setMaxVersion(feature.getValue()[1]));
        }
        response.setFinalizedFeaturesEpoch(image.offset());
        for (Map.Entry<String, Short> level : image.features().entrySet()) {
            response.finalizedFeatures().add(new ApiVersionsResponseData.FinalizedFeatureKey()
                .setName(level.getKey()).setMinVersionLevel(level.getValue()).setMaxVersionLevel(level.getValue()));
        }
        request.respond(response);
    }

    /**
     * Without transaction.version 2 finalized (a cluster created before it was supported) the
     * versions that mean transactions v2 are not advertised, so that no client uses them
     * (FIELD-NOTES: advertise Produce v12 only together with the finalized feature).
     */
    private static void capTransactionsV2(ApiVersionsResponseData response) {
        for (ApiVersionsResponseData.ApiVersion api : response.apiKeys()) {
            if (api.apiKey() == ApiMessageType.PRODUCE.apiKey) {
                api.setMaxVersion((short) Math.min(api.maxVersion(), 11));
            } else if (api.apiKey() == ApiMessageType.END_TXN.apiKey || api.apiKey() == ApiMessageType.TXN_OFFSET_COMMIT.apiKey) {
                api.setMaxVersion((short) Math.min(api.maxVersion(), 4));
            }
        }
    }
}
