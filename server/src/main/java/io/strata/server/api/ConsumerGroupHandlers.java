package io.strata.server.api;

import io.strata.coordinator.group.GroupCoordinator;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ConsumerGroupDescribeRequestData;
import io.strata.protocol.message.ConsumerGroupDescribeResponseData;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The consumer group protocol APIs (KIP-848): ConsumerGroupHeartbeat and ConsumerGroupDescribe,
 * thin adapters to the {@link GroupCoordinator}. As in Kafka, they answer UNSUPPORTED_VERSION
 * unless {@code group.version} ≥ 1 is finalized and {@code group.coordinator.rebalance.protocols}
 * includes "consumer"; kafka-clients then tells the user to use {@code group.protocol=classic}.
 */
final class ConsumerGroupHandlers {
    private static final String DISABLED = "The consumer group protocol is not enabled on this cluster (group.version < 1 "
        + "or group.coordinator.rebalance.protocols lacks consumer).";

    private final BrokerContext context;

    ConsumerGroupHandlers(BrokerContext context) {
        this.context = context;
    }

    void register(Map<ApiMessageType, ApiHandler> handlers) {
        handlers.put(ApiMessageType.CONSUMER_GROUP_HEARTBEAT, this::heartbeat);
        handlers.put(ApiMessageType.CONSUMER_GROUP_DESCRIBE, this::describe);
    }

    private boolean enabled() {
        return context.config().consumerGroupProtocolEnabled()
            && context.image().features().getOrDefault(Features.GROUP_VERSION, (short) 0) >= 1;
    }

    private void heartbeat(Request request) {
        ConsumerGroupHeartbeatRequestData body = request.body(ConsumerGroupHeartbeatRequestData.class);
        if (!enabled()) {
            request.respond(new ConsumerGroupHeartbeatResponseData().setErrorCode(ErrorCode.UNSUPPORTED_VERSION.code()).setErrorMessage(DISABLED));
            return;
        }
        String clientId = request.header().clientId() == null ? "" : request.header().clientId();
        String host = request.clientAddress() == null ? "" : "/" + request.clientAddress().getAddress().getHostAddress();
        context.groupCoordinator().consumerGroupHeartbeat(body, request.apiVersion(), clientId, host).whenComplete((response, failure) ->
            request.respond(failure != null ? new ConsumerGroupHeartbeatResponseData().setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()) : response));
    }

    private void describe(Request request) {
        ConsumerGroupDescribeRequestData body = request.body(ConsumerGroupDescribeRequestData.class);
        List<CompletableFuture<ConsumerGroupDescribeResponseData.DescribedGroup>> described = new ArrayList<>();
        for (String groupId : body.groupIds()) {
            if (!enabled()) {
                described.add(CompletableFuture.completedFuture(failed(groupId, ErrorCode.UNSUPPORTED_VERSION)));
            } else if (groupId == null || groupId.isEmpty()) {
                described.add(CompletableFuture.completedFuture(failed(groupId, ErrorCode.INVALID_GROUP_ID)));
            } else {
                described.add(context.groupCoordinator().consumerGroupDescribe(groupId));
            }
        }
        CompletableFuture.allOf(described.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
            ConsumerGroupDescribeResponseData response = new ConsumerGroupDescribeResponseData();
            for (int i = 0; i < described.size(); i++) {
                ConsumerGroupDescribeResponseData.DescribedGroup group = described.get(i).isCompletedExceptionally()
                    ? failed(body.groupIds().get(i), ErrorCode.UNKNOWN_SERVER_ERROR) : described.get(i).join();
                group.setAuthorizedOperations(body.includeAuthorizedOperations() ? AuthorizedOperations.GROUP : AuthorizedOperations.OMITTED);
                response.groups().add(group);
            }
            request.respond(response);
        });
    }

    private static ConsumerGroupDescribeResponseData.DescribedGroup failed(String groupId, ErrorCode error) {
        return new ConsumerGroupDescribeResponseData.DescribedGroup().setGroupId(groupId == null ? "" : groupId).setErrorCode(error.code());
    }
}
