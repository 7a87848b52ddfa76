package io.strata.server.api;

import io.strata.protocol.message.AlterPartitionReassignmentsRequestData;
import io.strata.protocol.message.AlterPartitionReassignmentsResponseData;
import io.strata.protocol.message.ListPartitionReassignmentsRequestData;
import io.strata.protocol.message.ListPartitionReassignmentsResponseData;
import io.strata.server.network.Request;

import java.util.concurrent.CompletionException;

/**
 * AlterPartitionReassignments (key 45, v0-1) and ListPartitionReassignments (key 46, v0)
 * (KIP-455, {@code kafka-reassign-partitions.sh}): decided by the active controller
 * ({@link io.strata.metadata.ControllerApi#alterPartitionReassignments},
 * {@link io.strata.metadata.ControllerApi#listPartitionReassignments}, answers as
 * {@link io.strata.metadata.PartitionReassignments}). Served on both listeners, as Kafka 4 does:
 * on a broker listener through this node's way to the active controller (forwarded), on a
 * controller listener (KIP-919) by the local controller. When the whole request fails (no active
 * controller in time: NOT_CONTROLLER) the answer carries only the top-level error and its message,
 * as Kafka's getErrorResponse for these requests. Thread-safe: no state.
 */
final class PartitionReassignmentsHandler {
    private PartitionReassignmentsHandler() {
    }

    /** The handler of AlterPartitionReassignments. */
    static ApiHandler alter(BrokerContext context) {
        return request -> {
            AlterPartitionReassignmentsRequestData body = request.body(AlterPartitionReassignmentsRequestData.class);
            context.controller().alterPartitionReassignments(body).whenComplete((response, failure) ->
                request.respond(failure == null ? response : new AlterPartitionReassignmentsResponseData()
                    .setAllowReplicationFactorChange(body.allowReplicationFactorChange())
                    .setErrorCode(ControllerErrors.of(failure).code()).setErrorMessage(messageOf(failure))));
        };
    }

    /** The handler of ListPartitionReassignments. */
    static ApiHandler list(BrokerContext context) {
        return request -> {
            ListPartitionReassignmentsRequestData body = request.body(ListPartitionReassignmentsRequestData.class);
            context.controller().listPartitionReassignments(body).whenComplete((response, failure) ->
                request.respond(failure == null ? response : new ListPartitionReassignmentsResponseData()
                    .setErrorCode(ControllerErrors.of(failure).code()).setErrorMessage(messageOf(failure))));
        };
    }

    private static String messageOf(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        return cause.getMessage();
    }
}
