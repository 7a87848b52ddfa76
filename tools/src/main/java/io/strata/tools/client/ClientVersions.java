package io.strata.tools.client;

import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsResponseData;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * The API versions this client implements, and the versions one connection negotiated: per API
 * the highest version inside both the broker's advertised range and ours. The table below is
 * the one place that says what the CLI can speak; each floor is the first version with a field
 * the client relies on, each ceiling the newest stable version whose semantics it implements.
 *
 * <pre>
 *  API                      range   why
 *  ApiVersions              0-5     older brokers answer v0 with UNSUPPORTED_VERSION and their ranges
 *  Metadata                 4-13    v4 adds AllowAutoTopicCreation (consume must not create topics)
 *  Produce                  3-11    v3 is the first with record batches v2; v12 is used only with
 *                                   transactions v2, and v13 addresses topics by id (Kafka caps at 11 too)
 *  Fetch                    4-18    v4 adds the isolation level; v13+ addresses topics by id
 *  ListOffsets              2-11    v2 adds the isolation level
 *  CreateTopics             2-7     the schemas' whole range
 *  DeleteTopics             1-6     v6 names topics in a struct instead of a string array
 *  CreatePartitions         0-3     the schemas' whole range
 *  DescribeConfigs          1-4     v1 adds the config source, which tells overrides from defaults
 *  IncrementalAlterConfigs  0-1     the schemas' whole range
 *  InitProducerId           0-5     v6 (two-phase commit) is not stable in the schemas
 *  FindCoordinator          0-6     v4 batches keys (the client asks for one group at a time either way)
 *  OffsetCommit             2-9     the oldest the schemas define; v10 names topics by id
 *  OffsetFetch              2-9     v2 allows null topics (every committed offset); v10 names topics by id
 *  ListGroups               0-5     v4 adds the group state, v5 the group type (classic or consumer)
 *  DescribeGroups           0-6     the schemas' whole range (before v6 a missing group is described as Dead)
 *  DeleteGroups             0-3     the schemas' whole range
 *  ConsumerGroupDescribe    0-1     the schemas' whole range (KIP-848 groups; classic groups fall back to DescribeGroups)
 *  ConsumerGroupHeartbeat   1-1     v1 lets the member choose its member id (strata consume --group)
 * </pre>
 *
 * <p>Immutable.
 */
public final class ClientVersions {
    /** A version range, both ends inclusive. */
    public record Range(short min, short max) {
        public Range {
            if (min < 0 || max < min) {
                throw new IllegalArgumentException("invalid version range: min=" + min + " max=" + max);
            }
        }
    }

    private static final Map<ApiMessageType, Range> IMPLEMENTED = implemented();

    private final Map<ApiMessageType, Short> negotiated;
    private final Map<ApiMessageType, Range> advertised;

    private ClientVersions(Map<ApiMessageType, Short> negotiated, Map<ApiMessageType, Range> advertised) {
        this.negotiated = Collections.unmodifiableMap(negotiated);
        this.advertised = Collections.unmodifiableMap(advertised);
    }

    private static Map<ApiMessageType, Range> implemented() {
        Map<ApiMessageType, Range> ranges = new EnumMap<>(ApiMessageType.class);
        ranges.put(ApiMessageType.API_VERSIONS, new Range((short) 0, (short) 5));
        ranges.put(ApiMessageType.METADATA, new Range((short) 4, (short) 13));
        ranges.put(ApiMessageType.PRODUCE, new Range((short) 3, (short) 11));
        ranges.put(ApiMessageType.FETCH, new Range((short) 4, (short) 18));
        ranges.put(ApiMessageType.LIST_OFFSETS, new Range((short) 2, (short) 11));
        ranges.put(ApiMessageType.CREATE_TOPICS, new Range((short) 2, (short) 7));
        ranges.put(ApiMessageType.DELETE_TOPICS, new Range((short) 1, (short) 6));
        ranges.put(ApiMessageType.CREATE_PARTITIONS, new Range((short) 0, (short) 3));
        ranges.put(ApiMessageType.DESCRIBE_CONFIGS, new Range((short) 1, (short) 4));
        ranges.put(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, new Range((short) 0, (short) 1));
        ranges.put(ApiMessageType.INIT_PRODUCER_ID, new Range((short) 0, (short) 5));
        ranges.put(ApiMessageType.FIND_COORDINATOR, new Range((short) 0, (short) 6));
        ranges.put(ApiMessageType.OFFSET_COMMIT, new Range((short) 2, (short) 9));
        ranges.put(ApiMessageType.OFFSET_FETCH, new Range((short) 2, (short) 9));
        ranges.put(ApiMessageType.LIST_GROUPS, new Range((short) 0, (short) 5));
        ranges.put(ApiMessageType.DESCRIBE_GROUPS, new Range((short) 0, (short) 6));
        ranges.put(ApiMessageType.DELETE_GROUPS, new Range((short) 0, (short) 3));
        ranges.put(ApiMessageType.CONSUMER_GROUP_DESCRIBE, new Range((short) 0, (short) 1));
        ranges.put(ApiMessageType.CONSUMER_GROUP_HEARTBEAT, new Range((short) 1, (short) 1));
        for (Map.Entry<ApiMessageType, Range> entry : ranges.entrySet()) {
            ApiMessageType api = entry.getKey();
            Range range = entry.getValue();
            int highestStable = api.highestSchemaVersion - (api.latestVersionUnstable ? 1 : 0);
            if (range.min() < api.lowestSchemaVersion || range.max() > highestStable) {
                throw new IllegalStateException(api.apiName + ": implemented range " + range.min() + "-" + range.max()
                    + " is outside the stable schema versions " + api.lowestSchemaVersion + "-" + highestStable);
            }
        }
        return Collections.unmodifiableMap(ranges);
    }

    /** The versions of {@code api} this client implements, or null if it does not use the API. */
    public static Range implemented(ApiMessageType api) {
        return IMPLEMENTED.get(api);
    }

    /** Every API the client implements, with its range. */
    public static Map<ApiMessageType, Range> implementedRanges() {
        return IMPLEMENTED;
    }

    /** Intersects the broker's advertised ranges with ours. */
    public static ClientVersions negotiate(ApiVersionsResponseData response) {
        Map<ApiMessageType, Short> negotiated = new EnumMap<>(ApiMessageType.class);
        Map<ApiMessageType, Range> advertised = new EnumMap<>(ApiMessageType.class);
        for (ApiVersionsResponseData.ApiVersion version : response.apiKeys()) {
            ApiMessageType api = ApiMessageType.fromApiKey(version.apiKey());
            if (api == null || version.minVersion() < 0 || version.maxVersion() < version.minVersion()) {
                continue; // an API newer than our schemas, or a nonsensical range: neither is usable
            }
            advertised.put(api, new Range(version.minVersion(), version.maxVersion()));
            Range ours = IMPLEMENTED.get(api);
            if (ours == null) {
                continue;
            }
            short highest = (short) Math.min(ours.max(), version.maxVersion());
            if (highest >= Math.max(ours.min(), version.minVersion())) {
                negotiated.put(api, highest);
            }
        }
        return new ClientVersions(negotiated, advertised);
    }

    /** Whether the broker advertises {@code api} at all, whether or not the client implements it. */
    public boolean advertises(ApiMessageType api) {
        return advertised.containsKey(api);
    }

    /** Whether some version of {@code api} is usable on this connection. */
    public boolean supports(ApiMessageType api) {
        return negotiated.containsKey(api);
    }

    /**
     * The version to send {@code api} at.
     *
     * @throws UnsupportedApiException if the broker does not advertise the API or no version overlaps ours
     */
    public short version(ApiMessageType api) {
        Short version = negotiated.get(api);
        if (version != null) {
            return version;
        }
        Range broker = advertised.get(api);
        Range ours = IMPLEMENTED.get(api);
        if (ours == null) {
            throw new IllegalArgumentException("the client does not implement " + api.apiName);
        }
        String detail = broker == null ? "" : "broker versions " + broker.min() + "-" + broker.max()
            + ", client versions " + ours.min() + "-" + ours.max();
        throw new UnsupportedApiException(api, detail);
    }
}
