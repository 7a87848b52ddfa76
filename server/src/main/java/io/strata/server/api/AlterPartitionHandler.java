package io.strata.server.api;

import io.strata.metadata.ControllerApi;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.server.network.Request;

/**
 * AlterPartition (key 56, v2-3) on a controller listener, as a Kafka controller serves it (the
 * schema's listeners are ["controller"]; a broker listener does not advertise it): partition
 * leaders send their ISR changes; the local controller validates and commits them
 * ({@link ControllerApi#alterPartition}). A controller that is not the active one, or loses
 * leadership before the change commits, answers a top-level NOT_CONTROLLER, which the leader's
 * sender retries at the active controller. Thread-safe: it keeps no state.
 */
final class AlterPartitionHandler implements ApiHandler {
    private final ControllerApi controller;

    AlterPartitionHandler(ControllerApi controller) {
        this.controller = controller;
    }

    @Override
    public void handle(Request request) {
        AlterPartitionRequestData body = request.body(AlterPartitionRequestData.class);
        controller.alterPartition(body, request.apiVersion()).whenComplete((response, failure) -> request.respond(failure == null ? response
            : new AlterPartitionResponseData().setErrorCode(ControllerErrors.of(failure).code())));
    }
}
