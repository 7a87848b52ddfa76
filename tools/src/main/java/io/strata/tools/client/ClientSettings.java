package io.strata.tools.client;

/**
 * How the client identifies itself and how long it waits.
 *
 * @param clientId              the client id of every request header (shows in broker logs and quotas)
 * @param softwareVersion       sent in ApiVersions (KIP-511) with the software name {@value #SOFTWARE_NAME}
 * @param connectTimeoutMs      the most a TCP connect may take
 * @param requestTimeoutMs      the most a request may wait for its response
 */
public record ClientSettings(String clientId, String softwareVersion, int connectTimeoutMs, int requestTimeoutMs) {
    /** The client software name sent in ApiVersions; matches KIP-511's pattern [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?. */
    public static final String SOFTWARE_NAME = "strata-cli";

    public ClientSettings {
        if (connectTimeoutMs <= 0 || requestTimeoutMs <= 0) {
            throw new IllegalArgumentException("timeouts must be positive: connectTimeoutMs=" + connectTimeoutMs
                + ", requestTimeoutMs=" + requestTimeoutMs);
        }
        if (requestTimeoutMs <= ClientLimits.FETCH_MAX_WAIT_MS) {
            throw new IllegalArgumentException("request timeout must exceed the fetch wait of " + ClientLimits.FETCH_MAX_WAIT_MS
                + " ms: requestTimeoutMs=" + requestTimeoutMs);
        }
    }

    public static ClientSettings defaults(String softwareVersion) {
        return new ClientSettings(SOFTWARE_NAME, softwareVersion, ClientLimits.CONNECT_TIMEOUT_MS, ClientLimits.DEFAULT_REQUEST_TIMEOUT_MS);
    }

    public ClientSettings withRequestTimeoutMs(int timeoutMs) {
        return new ClientSettings(clientId, softwareVersion, connectTimeoutMs, timeoutMs);
    }
}
