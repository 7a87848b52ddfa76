package io.strata.metadata;

import java.util.List;
import java.util.UUID;

/** A registered broker: id, epoch, advertised endpoints and rack. Immutable. */
public record BrokerRegistration(int id, long epoch, UUID incarnationId, List<Endpoint> endpoints, String rack, boolean fenced) {
    /** An advertised listener. */
    public record Endpoint(String listenerName, String host, int port, short securityProtocol) {
    }

    public BrokerRegistration {
        endpoints = List.copyOf(endpoints);
    }

    public Endpoint endpoint(String listenerName) {
        for (Endpoint endpoint : endpoints) {
            if (endpoint.listenerName().equals(listenerName)) {
                return endpoint;
            }
        }
        return null;
    }
}
