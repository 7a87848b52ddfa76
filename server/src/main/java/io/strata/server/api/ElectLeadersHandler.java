package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ElectLeadersRequestData;
import io.strata.protocol.message.ElectLeadersResponseData;
import io.strata.server.network.Request;

import java.util.concurrent.CompletionException;

/**
 * ElectLeaders (key 43, v0-2; KIP-460, {@code kafka-leader-election.sh}): preferred or unclean
 * leader elections, decided and committed by the active controller
 * ({@link io.strata.metadata.ControllerApi#electLeaders}, answers as
 * {@link io.strata.metadata.LeaderElections}). Served on both listeners, as Kafka 4 does: on a
 * broker listener through this node's way to the active controller (forwarded), on a controller
 * listener (KIP-919) by the local controller. v0 has no ElectionType (preferred) and no
 * top-level error. When the whole request fails (an unknown election type: INVALID_REQUEST; no
 * active controller in time: NOT_CONTROLLER) the top-level error (v1+) and every named partition
 * carry the error, as Kafka's ElectLeadersRequest.getErrorResponse. Thread-safe: no state.
 */
final class ElectLeadersHandler implements ApiHandler {
    private final BrokerContext context;

    ElectLeadersHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        ElectLeadersRequestData body = request.body(ElectLeadersRequestData.class);
        context.controller().electLeaders(body).whenComplete((response, failure) ->
            request.respond(failure == null ? response : errorResponse(body, errorOf(failure), failure)));
    }

    private static ErrorCode errorOf(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        return cause instanceof IllegalArgumentException ? ErrorCode.INVALID_REQUEST : ControllerErrors.of(failure);
    }

    static ElectLeadersResponseData errorResponse(ElectLeadersRequestData body, ErrorCode error, Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        ElectLeadersResponseData response = new ElectLeadersResponseData().setErrorCode(error.code());
        if (body.topicPartitions() == null) {
            return response;
        }
        for (ElectLeadersRequestData.TopicPartitions topic : body.topicPartitions()) {
            ElectLeadersResponseData.ReplicaElectionResult result = new ElectLeadersResponseData.ReplicaElectionResult().setTopic(topic.topic());
            for (int partition : topic.partitions()) {
                result.partitionResult().add(new ElectLeadersResponseData.PartitionResult().setPartitionId(partition)
                    .setErrorCode(error.code()).setErrorMessage(cause.getMessage()));
            }
            response.replicaElectionResults().add(result);
        }
        return response;
    }
}
