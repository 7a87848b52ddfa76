package io.strata.metadata;

import java.util.List;
import java.util.UUID;

/**
 * A controller node as its RegisterControllerRecord announced it: id, the incarnation (one run of
 * the process) and the controller listeners it serves. Immutable. A later record for the same id
 * replaces the earlier one.
 */
public record ControllerRegistration(int id, UUID incarnationId, List<BrokerRegistration.Endpoint> endpoints) {
    public ControllerRegistration {
        endpoints = List.copyOf(endpoints);
    }
}
