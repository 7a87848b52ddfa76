package io.strata.metadata;

import java.util.List;
import java.util.UUID;

/**
 * A registered broker: id, epoch, advertised endpoints, rack, and its lifecycle state as the
 * controller last recorded it. Immutable.
 *
 * <p>{@code fenced}: the broker may not lead or join an ISR (RegisterBrokerRecord's Fenced, then
 * FenceBroker / UnfenceBroker / BrokerRegistrationChange records). {@code inControlledShutdown}:
 * the broker asked to shut down and is moving its leaderships away (set only by
 * BrokerRegistrationChangeRecord; a new registration starts with it false, as in KRaft).
 */
public record BrokerRegistration(int id, long epoch, UUID incarnationId, List<Endpoint> endpoints, String rack, boolean fenced,
                                 boolean inControlledShutdown) {
    /** An advertised listener. */
    public record Endpoint(String listenerName, String host, int port, short securityProtocol) {
    }

    public BrokerRegistration {
        endpoints = List.copyOf(endpoints);
    }

    /** A registration not in controlled shutdown (the state every new registration starts in). */
    public BrokerRegistration(int id, long epoch, UUID incarnationId, List<Endpoint> endpoints, String rack, boolean fenced) {
        this(id, epoch, incarnationId, endpoints, rack, fenced, false);
    }

    public Endpoint endpoint(String listenerName) {
        for (Endpoint endpoint : endpoints) {
            if (endpoint.listenerName().equals(listenerName)) {
                return endpoint;
            }
        }
        return null;
    }

    /** True if the broker may be given replicas or leadership: unfenced and not shutting down. */
    public boolean usable() {
        return !fenced && !inControlledShutdown;
    }

    public BrokerRegistration withFenced(boolean newFenced) {
        return new BrokerRegistration(id, epoch, incarnationId, endpoints, rack, newFenced, inControlledShutdown);
    }

    public BrokerRegistration withInControlledShutdown(boolean newInControlledShutdown) {
        return new BrokerRegistration(id, epoch, incarnationId, endpoints, rack, fenced, newInControlledShutdown);
    }
}
