package io.strata.tools.client;

import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsResponseData;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClientVersionsTest {
    private static ApiVersionsResponseData advertising(Object... keyMinMax) {
        ApiVersionsResponseData response = new ApiVersionsResponseData();
        for (int i = 0; i < keyMinMax.length; i += 3) {
            ApiMessageType api = (ApiMessageType) keyMinMax[i];
            response.apiKeys().add(new ApiVersionsResponseData.ApiVersion()
                .setApiKey(api.apiKey).setMinVersion(((Integer) keyMinMax[i + 1]).shortValue()).setMaxVersion(((Integer) keyMinMax[i + 2]).shortValue()));
        }
        return response;
    }

    @Test
    void negotiatesTheHighestVersionBothSidesSupport() {
        ClientVersions versions = ClientVersions.negotiate(advertising(
            ApiMessageType.FETCH, 4, 17,
            ApiMessageType.PRODUCE, 0, 13,
            ApiMessageType.METADATA, 0, 9));

        assertThat(versions.version(ApiMessageType.FETCH)).isEqualTo((short) 17);
        assertThat(versions.version(ApiMessageType.PRODUCE)).isEqualTo((short) 11);
        assertThat(versions.version(ApiMessageType.METADATA)).isEqualTo((short) 9);
    }

    @Test
    void anApiTheBrokerDoesNotAdvertiseIsReportedByName() {
        ClientVersions versions = ClientVersions.negotiate(advertising(ApiMessageType.METADATA, 0, 13));

        assertThat(versions.supports(ApiMessageType.DELETE_TOPICS)).isFalse();
        assertThatThrownBy(() -> versions.version(ApiMessageType.DELETE_TOPICS))
            .isInstanceOf(UnsupportedApiException.class)
            .hasMessage("the broker does not support DeleteTopics");
    }

    @Test
    void rangesThatDoNotOverlapAreUnsupportedWithBothRangesInTheMessage() {
        ClientVersions versions = ClientVersions.negotiate(advertising(ApiMessageType.METADATA, 0, 3));

        assertThatThrownBy(() -> versions.version(ApiMessageType.METADATA))
            .isInstanceOf(UnsupportedApiException.class)
            .hasMessage("the broker does not support Metadata (broker versions 0-3, client versions 4-13)");
    }

    @Test
    void unknownApiKeysAndBrokenRangesAreIgnored() {
        ApiVersionsResponseData response = advertising(ApiMessageType.FETCH, 4, 17);
        response.apiKeys().add(new ApiVersionsResponseData.ApiVersion().setApiKey((short) 999).setMinVersion((short) 0).setMaxVersion((short) 1));
        response.apiKeys().add(new ApiVersionsResponseData.ApiVersion()
            .setApiKey(ApiMessageType.LIST_OFFSETS.apiKey).setMinVersion((short) 5).setMaxVersion((short) 2));

        ClientVersions versions = ClientVersions.negotiate(response);

        assertThat(versions.supports(ApiMessageType.FETCH)).isTrue();
        assertThat(versions.supports(ApiMessageType.LIST_OFFSETS)).isFalse();
    }

    @Test
    void implementedRangesAreStableSchemaVersions() {
        for (Map.Entry<ApiMessageType, ClientVersions.Range> entry : ClientVersions.implementedRanges().entrySet()) {
            ApiMessageType api = entry.getKey();
            int highestStable = api.highestSchemaVersion - (api.latestVersionUnstable ? 1 : 0);
            assertThat(entry.getValue().min()).as(api.apiName).isGreaterThanOrEqualTo(api.lowestSchemaVersion);
            assertThat(entry.getValue().max()).as(api.apiName).isLessThanOrEqualTo((short) highestStable);
        }
    }
}
