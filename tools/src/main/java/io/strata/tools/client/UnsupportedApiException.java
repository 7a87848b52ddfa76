package io.strata.tools.client;

import io.strata.protocol.message.ApiMessageType;

/**
 * The broker does not advertise an API, or advertises no version of it that this client
 * implements. Raised before anything is sent, so nothing has changed on the broker.
 */
public final class UnsupportedApiException extends ClientException {
    private static final long serialVersionUID = 1L;

    private final ApiMessageType api;

    public UnsupportedApiException(ApiMessageType api, String detail) {
        super("the broker does not support " + api.apiName + (detail.isEmpty() ? "" : " (" + detail + ")"));
        this.api = api;
    }

    public ApiMessageType api() {
        return api;
    }
}
