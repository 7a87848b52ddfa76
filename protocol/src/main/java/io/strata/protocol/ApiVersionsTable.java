package io.strata.protocol;

import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsResponseData;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * The one place that says which APIs and versions the broker advertises in ApiVersions.
 * Each API is added here when its handler lands, with exactly the versions the handler
 * implements, so clients never negotiate a version we cannot serve.
 *
 * <p>An advertised range may start below the schemas' lowest version: Kafka 4 advertises
 * Produce from v0 (librdkafka misbehaves otherwise, KAFKA-18659) and rejects v0-v2 when such
 * a request arrives. The table records that as {@code advertisedMin < schema lowest}.
 *
 * <p>Immutable; build one with {@link Builder}.
 */
public final class ApiVersionsTable {
    /** An advertised version range of one API. */
    public record Range(short min, short max) {
        public Range {
            if (min < 0 || max < min) {
                throw new IllegalArgumentException("invalid version range: min=" + min + " max=" + max);
            }
        }

        public boolean contains(short version) {
            return version >= min && version <= max;
        }
    }

    private final Map<ApiMessageType, Range> ranges;

    private ApiVersionsTable(Map<ApiMessageType, Range> ranges) {
        this.ranges = Collections.unmodifiableMap(new EnumMap<>(ranges));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The advertised range of {@code api}, or null if it is not advertised. */
    public Range range(ApiMessageType api) {
        return ranges.get(api);
    }

    public boolean isAdvertised(ApiMessageType api, short version) {
        Range range = ranges.get(api);
        return range != null && range.contains(version);
    }

    public Map<ApiMessageType, Range> ranges() {
        return ranges;
    }

    /** Adds the advertised ranges to the ApiKeys array of an ApiVersions response, in API key order. */
    public void addTo(ApiVersionsResponseData response) {
        for (Map.Entry<ApiMessageType, Range> entry : ranges.entrySet()) {
            response.apiKeys().add(new ApiVersionsResponseData.ApiVersion()
                .setApiKey(entry.getKey().apiKey)
                .setMinVersion(entry.getValue().min())
                .setMaxVersion(entry.getValue().max()));
        }
    }

    /**
     * The answer to an ApiVersions request of a version newer than we advertise: error
     * UNSUPPORTED_VERSION with our ranges, to be written in version 0 so any client can read
     * it and retry with a version both sides know.
     */
    public ApiVersionsResponseData unsupportedApiVersionsResponse() {
        ApiVersionsResponseData response = new ApiVersionsResponseData().setErrorCode(ErrorCode.UNSUPPORTED_VERSION.code());
        addTo(response);
        return response;
    }

    /** Collects advertised ranges, checking each against what the schemas define. */
    public static final class Builder {
        private final Map<ApiMessageType, Range> ranges = new EnumMap<>(ApiMessageType.class);

        /** Advertises {@code min..max}; {@code max} must be a version the schemas define. */
        public Builder add(ApiMessageType api, int min, int max) {
            if (max > api.highestSchemaVersion || max < api.lowestSchemaVersion) {
                throw new IllegalArgumentException(api.apiName + ": max version " + max + " is outside the schema versions "
                    + api.lowestSchemaVersion + "-" + api.highestSchemaVersion);
            }
            ranges.put(api, new Range((short) min, (short) max));
            return this;
        }

        public ApiVersionsTable build() {
            return new ApiVersionsTable(ranges);
        }
    }
}
