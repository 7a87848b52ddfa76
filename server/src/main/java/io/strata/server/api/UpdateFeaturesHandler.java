package io.strata.server.api;

import io.strata.metadata.FeatureUpdates;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.UpdateFeaturesRequestData;
import io.strata.protocol.message.UpdateFeaturesResponseData;
import io.strata.server.network.Request;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * UpdateFeatures (KIP-584, upgrade types of KIP-778): changes finalized feature levels through
 * the controller, which writes FeatureLevelRecords to the metadata log (so the change survives a
 * restart, and ApiVersions' finalized features and epoch and the versions that depend on
 * transaction.version follow at once). v0 says downgrade with AllowDowngrade (a safe
 * downgrade, as Kafka reads it), v1+ with UpgradeType; ValidateOnly (v1+) writes nothing.
 *
 * <p>The answer has Kafka 4.4's shape: a refusal is a top-level error with no per-feature
 * results; on success v0-v1 list every feature with error NONE (and message "NONE", as Kafka
 * sends it), v2 has no results field at all.
 */
final class UpdateFeaturesHandler implements ApiHandler {
    private final BrokerContext context;

    UpdateFeaturesHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        UpdateFeaturesRequestData body = request.body(UpdateFeaturesRequestData.class);
        short version = request.apiVersion();
        Map<String, FeatureUpdates.Update> updates = new LinkedHashMap<>();
        for (UpdateFeaturesRequestData.FeatureUpdateKey key : body.featureUpdates()) {
            byte upgradeType = version == 0 ? (key.allowDowngrade() ? FeatureUpdates.SAFE_DOWNGRADE : FeatureUpdates.UPGRADE) : key.upgradeType();
            if (updates.put(key.feature(), new FeatureUpdates.Update(key.maxVersionLevel(), upgradeType)) != null) {
                request.respond(new UpdateFeaturesResponseData().setErrorCode(ErrorCode.INVALID_REQUEST.code())
                    .setErrorMessage("Duplicate feature update for " + key.feature()));
                return;
            }
        }
        boolean validateOnly = version >= 1 && body.validateOnly();
        context.controller().updateFeatures(updates, context.features().supported(), validateOnly).whenComplete((result, failure) -> {
            UpdateFeaturesResponseData response = new UpdateFeaturesResponseData();
            if (failure != null) {
                request.respond(response.setErrorCode(ControllerErrors.of(failure).code()).setErrorMessage(failure.getMessage()));
                return;
            }
            response.setErrorCode(result.error().code()).setErrorMessage(result.message());
            if (result.error() == ErrorCode.NONE) {
                for (String feature : updates.keySet()) {
                    response.results().add(new UpdateFeaturesResponseData.UpdatableFeatureResult().setFeature(feature)
                        .setErrorCode(ErrorCode.NONE.code()).setErrorMessage(ErrorCode.NONE.name()));
                }
            }
            request.respond(response);
        });
    }
}
