package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataLog;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DescribeQuorumRequestData;
import io.strata.protocol.message.DescribeQuorumResponseData;
import io.strata.server.network.Request;

/**
 * DescribeQuorum (KIP-595, v1 timestamps, v2 directory ids and nodes of KIP-853): the metadata
 * quorum as its leader, the controller, sees it. Strata's quorum is one voter, this node (see
 * {@link io.strata.metadata.Controller#describeQuorum()}); it has no observers. v2's nodes list
 * the voter's listeners: Strata serves the quorum on the broker listeners, so those are the ones
 * registered for this node. A request for anything but {@code __cluster_metadata-0} gets
 * UNKNOWN_TOPIC_OR_PARTITION on each partition asked for, with Kafka's message.
 */
final class DescribeQuorumHandler implements ApiHandler {
    private final BrokerContext context;

    DescribeQuorumHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        DescribeQuorumRequestData body = request.body(DescribeQuorumRequestData.class);
        boolean metadataPartitionOnly = body.topics().size() == 1 && body.topics().get(0).topicName().equals(MetadataLog.TOPIC)
            && body.topics().get(0).partitions().size() == 1 && body.topics().get(0).partitions().get(0).partitionIndex() == 0;
        if (!metadataPartitionOnly) {
            request.respond(unknownPartitions(body));
            return;
        }
        context.controller().describeQuorum().whenComplete((quorum, failure) -> {
            DescribeQuorumResponseData response = new DescribeQuorumResponseData().setErrorMessage("");
            if (failure != null) {
                request.respond(response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()).setErrorMessage(failure.getMessage()));
                return;
            }
            DescribeQuorumResponseData.PartitionData partition = new DescribeQuorumResponseData.PartitionData().setPartitionIndex(0)
                .setErrorCode(ErrorCode.NONE.code()).setErrorMessage("").setLeaderId(quorum.leaderId()).setLeaderEpoch(quorum.leaderEpoch())
                .setHighWatermark(quorum.highWatermark());
            // Directory ids and nodes are v2+ fields that cannot be dropped silently: older versions must leave them unset.
            boolean v2 = request.apiVersion() >= 2;
            partition.currentVoters().add(new DescribeQuorumResponseData.ReplicaState().setReplicaId(quorum.leaderId())
                .setReplicaDirectoryId(v2 ? context.metadataDirectoryId() : io.strata.protocol.Uuids.ZERO).setLogEndOffset(quorum.logEndOffset())
                .setLastFetchTimestamp(quorum.nowMs()).setLastCaughtUpTimestamp(quorum.nowMs()));
            response.topics().add(new DescribeQuorumResponseData.TopicData().setTopicName(MetadataLog.TOPIC).setPartitions(
                new java.util.ArrayList<>(java.util.List.of(partition))));
            if (!v2) {
                request.respond(response);
                return;
            }
            DescribeQuorumResponseData.Node node = new DescribeQuorumResponseData.Node().setNodeId(quorum.leaderId());
            BrokerRegistration registration = context.image().brokers().get(quorum.leaderId());
            if (registration != null) {
                for (BrokerRegistration.Endpoint endpoint : registration.endpoints()) {
                    node.listeners().add(new DescribeQuorumResponseData.Listener().setName(endpoint.listenerName()).setHost(endpoint.host())
                        .setPort(endpoint.port()));
                }
            }
            response.nodes().add(node);
            request.respond(response);
        });
    }

    private static DescribeQuorumResponseData unknownPartitions(DescribeQuorumRequestData body) {
        DescribeQuorumResponseData response = new DescribeQuorumResponseData().setErrorMessage("");
        for (DescribeQuorumRequestData.TopicData topic : body.topics()) {
            DescribeQuorumResponseData.TopicData topicData = new DescribeQuorumResponseData.TopicData().setTopicName(topic.topicName());
            for (DescribeQuorumRequestData.PartitionData partition : topic.partitions()) {
                topicData.partitions().add(new DescribeQuorumResponseData.PartitionData().setPartitionIndex(partition.partitionIndex())
                    .setErrorCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code()).setErrorMessage("This server does not host this topic-partition.")
                    .setLeaderId(0).setLeaderEpoch(0).setHighWatermark(0));
            }
            response.topics().add(topicData);
        }
        return response;
    }
}
