package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionReassignmentsRequestData;
import io.strata.protocol.message.AlterPartitionReassignmentsResponseData;
import io.strata.protocol.message.ListPartitionReassignmentsRequestData;
import io.strata.protocol.message.ListPartitionReassignmentsResponseData;
import io.strata.server.network.Request;

/**
 * AlterPartitionReassignments (key 45, v0-1) and ListPartitionReassignments (key 46, v0)
 * (KIP-455, {@code kafka-reassign-partitions.sh}): decided by the active controller
 * ({@link io.strata.metadata.ControllerApi#alterPartitionReassignments},
 * {@link io.strata.metadata.ControllerApi#listPartitionReassignments}, answers as
 * {@link io.strata.metadata.PartitionReassignments}). Served on both listeners, as Kafka 4 does:
 * on a broker listener through this node's way to the active controller (forwarded: no active
 * controller in time is REQUEST_TIMED_OUT, as Kafka's ForwardingManager answers a forwarding
 * timeout), on a controller listener (KIP-919) by the local controller (not active:
 * NOT_CONTROLLER; the request's TimeoutMs passed before the controller took it: REQUEST_TIMED_OUT).
 *
 * <p>When the whole request fails the answer has the shape of Kafka's getErrorResponse for these
 * requests: Alter carries the error at the top level and on every requested partition; List at the
 * top level with every requested topic and partition echoed (no replicas). The message follows
 * Kafka's ApiError: none for UNKNOWN_SERVER_ERROR (nothing internal leaks), else the failure's own.
 * Thread-safe: no state.
 */
final class PartitionReassignmentsHandler {
    private PartitionReassignmentsHandler() {
    }

    /** The handler of AlterPartitionReassignments. */
    static ApiHandler alter(BrokerContext context) {
        return request -> {
            AlterPartitionReassignmentsRequestData body = request.body(AlterPartitionReassignmentsRequestData.class);
            context.controller().alterPartitionReassignments(body).whenComplete((response, failure) ->
                request.respond(failure == null ? response : alterFailed(body, ControllerErrors.of(failure), messageOf(failure))));
        };
    }

    /** The handler of ListPartitionReassignments. */
    static ApiHandler list(BrokerContext context) {
        return request -> {
            ListPartitionReassignmentsRequestData body = request.body(ListPartitionReassignmentsRequestData.class);
            context.controller().listPartitionReassignments(body).whenComplete((response, failure) ->
                request.respond(failure == null ? response : listFailed(body, ControllerErrors.of(failure), messageOf(failure))));
        };
    }

    /** Kafka's AlterPartitionReassignmentsRequest.getErrorResponse: {@code error} at the top and on every requested partition. */
    static AlterPartitionReassignmentsResponseData alterFailed(AlterPartitionReassignmentsRequestData body, ErrorCode error, String message) {
        String shown = shownMessage(error, message);
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData()
            .setAllowReplicationFactorChange(body.allowReplicationFactorChange()).setErrorCode(error.code()).setErrorMessage(shown);
        for (AlterPartitionReassignmentsRequestData.ReassignableTopic topic : body.topics()) {
            AlterPartitionReassignmentsResponseData.ReassignableTopicResponse topicResponse =
                new AlterPartitionReassignmentsResponseData.ReassignableTopicResponse().setName(topic.name());
            for (AlterPartitionReassignmentsRequestData.ReassignablePartition partition : topic.partitions()) {
                topicResponse.partitions().add(new AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse()
                    .setPartitionIndex(partition.partitionIndex()).setErrorCode(error.code()).setErrorMessage(shown));
            }
            response.responses().add(topicResponse);
        }
        return response;
    }

    /** Kafka's ListPartitionReassignmentsRequest.getErrorResponse: {@code error} at the top, the requested partitions echoed. */
    static ListPartitionReassignmentsResponseData listFailed(ListPartitionReassignmentsRequestData body, ErrorCode error, String message) {
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsResponseData().setErrorCode(error.code())
            .setErrorMessage(shownMessage(error, message));
        if (body.topics() != null) {
            for (ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics topic : body.topics()) {
                ListPartitionReassignmentsResponseData.OngoingTopicReassignment echoed =
                    new ListPartitionReassignmentsResponseData.OngoingTopicReassignment().setName(topic.name());
                for (int partitionIndex : topic.partitionIndexes()) {
                    echoed.partitions().add(new ListPartitionReassignmentsResponseData.OngoingPartitionReassignment().setPartitionIndex(partitionIndex));
                }
                response.topics().add(echoed);
            }
        }
        return response;
    }

    private static String shownMessage(ErrorCode error, String message) {
        return error == ErrorCode.UNKNOWN_SERVER_ERROR ? null : message;
    }

    private static String messageOf(Throwable failure) {
        return ControllerErrors.message(failure);
    }
}
