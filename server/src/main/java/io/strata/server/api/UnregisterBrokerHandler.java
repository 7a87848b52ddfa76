package io.strata.server.api;

import io.strata.protocol.message.UnregisterBrokerRequestData;
import io.strata.protocol.message.UnregisterBrokerResponseData;
import io.strata.server.network.Request;

/**
 * UnregisterBroker (KIP-500's decommissioning, Admin {@code unregisterBroker}): the controller
 * removes the broker's registration (see {@link io.strata.metadata.ControllerApi#unregisterBroker}).
 * Served on both listeners, as Kafka 4 does: on a controller listener by the local controller,
 * on a broker listener through this node's way to the active controller. An id that is not
 * registered is BROKER_ID_NOT_REGISTERED; no active controller in time is NOT_CONTROLLER.
 *
 * <p>A broker that is still running when it is unregistered hears BROKER_ID_NOT_REGISTERED at
 * its next heartbeat and registers again (BrokerLifecycleManager), so an operator stops it first;
 * a stopped one registers again when it restarts.
 */
final class UnregisterBrokerHandler implements ApiHandler {
    private final BrokerContext context;

    UnregisterBrokerHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        int brokerId = request.body(UnregisterBrokerRequestData.class).brokerId();
        context.controller().unregisterBroker(brokerId).whenComplete((response, failure) -> request.respond(failure == null ? response
            : new UnregisterBrokerResponseData().setErrorCode(ControllerErrors.of(failure).code()).setErrorMessage(failure.getMessage())));
    }
}
