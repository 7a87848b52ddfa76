package io.strata.server.replica;

/**
 * What a consumer's Fetch (v11+, KIP-392) says about the client, for the {@link ReplicaSelector}.
 * A fetch carries it only from v11; its presence is what lets a follower serve the fetch.
 *
 * @param rackId       the client's {@code client.rack} (Fetch RackId), "" when not set; never null
 * @param clientId     the request header's client id, or null
 * @param listenerName the listener the request arrived on: the preferred replica must be reachable on it
 */
public record ClientMetadata(String rackId, String clientId, String listenerName) {
    public ClientMetadata {
        rackId = rackId == null ? "" : rackId;
    }
}
