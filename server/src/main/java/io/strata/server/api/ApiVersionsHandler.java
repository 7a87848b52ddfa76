package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
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
        if (request.apiVersion() >= 5) {
            ErrorCode targetError = checkTarget(request.body(ApiVersionsRequestData.class));
            if (targetError != ErrorCode.NONE) {
                request.respond(response.setErrorCode(targetError.code()));
                return;
            }
        }
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
        // kraft.version is the quorum's (its KRaftVersionRecord), not a metadata record: finalized once it is 1 (KIP-853).
        short kraftVersion = context.quorum() == null ? 0 : context.quorum().kraftVersion();
        if (kraftVersion > 0 && !image.features().containsKey(Features.KRAFT_VERSION)) {
            response.finalizedFeatures().add(new ApiVersionsResponseData.FinalizedFeatureKey()
                .setName(Features.KRAFT_VERSION).setMinVersionLevel(kraftVersion).setMaxVersionLevel(kraftVersion));
        }
        request.respond(response);
    }

    /**
     * KIP-1242 (v5+): a client that names the cluster and node it means to reach learns at once
     * that it reached another one (stale bootstrap addresses, a reused IP) and rebootstraps. Both
     * or neither must be given, as Kafka 4.4 requires: one alone is INVALID_REQUEST. The error
     * response carries no API keys, as Kafka's.
     */
    private ErrorCode checkTarget(ApiVersionsRequestData body) {
        boolean clusterGiven = body.clusterId() != null;
        boolean nodeGiven = body.nodeId() >= 0;
        if (clusterGiven != nodeGiven) {
            return ErrorCode.INVALID_REQUEST;
        }
        if (clusterGiven && (!body.clusterId().equals(context.clusterId()) || body.nodeId() != context.nodeId())) {
            return ErrorCode.REBOOTSTRAP_REQUIRED;
        }
        return ErrorCode.NONE;
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
                // TxnOffsetCommit v6 (topic ids) is newer than v5 and so implies transactions v2 as well.
                api.setMaxVersion((short) Math.min(api.maxVersion(), 4));
            }
        }
    }
}
