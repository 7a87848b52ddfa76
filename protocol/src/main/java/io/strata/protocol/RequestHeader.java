package io.strata.protocol;

import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.RequestHeaderData;

/**
 * A parsed request header together with what the rest of the pipeline needs to know about it.
 *
 * @param api           the API, never null (unknown keys are rejected while parsing)
 * @param apiVersion    the version the client asked for; may be outside what the schemas define
 * @param correlationId echoed in the response
 * @param clientId      may be null
 * @param headerVersion 1, or 2 for flexible request versions (with a tagged-field section)
 */
public record RequestHeader(ApiMessageType api, short apiVersion, int correlationId, String clientId, short headerVersion) {

    public short apiKey() {
        return api.apiKey;
    }

    /** The response header version: 0 or 1, and always 0 for ApiVersions. */
    public short responseHeaderVersion() {
        return api.responseHeaderVersion(apiVersion);
    }

    static RequestHeader of(ApiMessageType api, RequestHeaderData data, short headerVersion) {
        return new RequestHeader(api, data.requestApiVersion(), data.correlationId(), data.clientId(), headerVersion);
    }
}
