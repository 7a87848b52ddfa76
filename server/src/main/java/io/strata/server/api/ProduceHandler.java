package io.strata.server.api;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchDescriptor;
import io.strata.server.network.Request;
import io.strata.server.replica.ProducePartitionResult;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Produce: appends each partition's record batch and answers per partition. Kafka's request
 * rules apply: acks must be -1, 0 or 1; a v3+ request carries exactly one magic-2 batch per
 * partition; v13+ names topics by id. With acks=0 nothing is sent back, and any error closes
 * the connection so the producer notices. A transactional v12+ request is transactions v2
 * (KIP-890 part 2): the leader adds the partitions to the transaction itself, so the client sends
 * no AddPartitionsToTxn. A partition this broker does not lead is answered NOT_LEADER_OR_FOLLOWER
 * (UNKNOWN_TOPIC_OR_PARTITION if the cluster has no such partition) and, from v10, with its
 * current leader and that leader's endpoint (KIP-951).
 */
final class ProduceHandler implements ApiHandler {
    private final BrokerContext context;

    ProduceHandler(BrokerContext context) {
        this.context = context;
    }

    private record Target(String topicName, java.util.UUID topicId, int partition) {
    }

    @Override
    public void handle(Request request) {
        ProduceRequestData body = request.body(ProduceRequestData.class);
        short acks = body.acks();
        MetadataImage image = context.image();
        LinkedHashMap<TopicPartition, MemoryRecords> entries = new LinkedHashMap<>();
        Map<Target, ProducePartitionResult> immediate = new LinkedHashMap<>();
        Map<Target, TopicPartition> order = new LinkedHashMap<>();
        boolean transactionalWithoutId = false;
        boolean transactionalIdRefused = body.transactionalId() != null
            && !context.authorization().authorize(request, io.strata.metadata.authorizer.AclOperation.WRITE, io.strata.metadata.authorizer.ResourceType.TRANSACTIONAL_ID, body.transactionalId());
        for (ProduceRequestData.TopicProduceData topic : body.topicData()) {
            String name = topic.name();
            if (request.apiVersion() >= 13) {
                TopicImage byId = image.topic(topic.topicId());
                name = byId == null ? null : byId.name();
            }
            for (ProduceRequestData.PartitionProduceData partition : topic.partitionData()) {
                Target target = new Target(topic.name(), topic.topicId(), partition.index());
                if (name == null) {
                    immediate.put(target, ProducePartitionResult.error(ErrorCode.UNKNOWN_TOPIC_ID, "This server does not host this topic ID."));
                    continue;
                }
                if (transactionalIdRefused) {
                    immediate.put(target, ProducePartitionResult.error(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null));
                    continue;
                }
                if (!context.authorization().authorize(request, io.strata.metadata.authorizer.AclOperation.WRITE, io.strata.metadata.authorizer.ResourceType.TOPIC, name)) {
                    immediate.put(target, ProducePartitionResult.error(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null));
                    continue;
                }
                if (acks != -1 && acks != 0 && acks != 1) {
                    immediate.put(target, ProducePartitionResult.error(ErrorCode.INVALID_REQUIRED_ACKS, "Invalid required acks value " + acks));
                    continue;
                }
                String problem = validateRecords(partition);
                if (problem != null) {
                    immediate.put(target, ProducePartitionResult.error(ErrorCode.INVALID_RECORD, problem));
                    continue;
                }
                TopicPartition topicPartition = new TopicPartition(name, partition.index());
                MemoryRecords records = (MemoryRecords) partition.records();
                entries.put(topicPartition, records);
                order.put(target, topicPartition);
                transactionalWithoutId |= body.transactionalId() == null && isTransactional(records);
            }
        }
        java.util.function.Consumer<Map<TopicPartition, ProducePartitionResult>> done = results -> respond(request, body, acks, immediate, order, results);
        if (transactionalWithoutId) {
            // As Kafka: transactional records need the transactional id, the only key the coordinator can verify them by (KIP-890).
            Map<TopicPartition, ProducePartitionResult> refused = new HashMap<>();
            entries.keySet().forEach(topicPartition -> refused.put(topicPartition, ProducePartitionResult.error(
                ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional records require the request's transactional id")));
            done.accept(refused);
            return;
        }
        if (request.apiVersion() >= 12 && body.transactionalId() != null) {
            if (image.features().getOrDefault(Features.TRANSACTION_VERSION, (short) 0) < 2) {
                // Transactions v2 is not finalized: a transactional Produce v12 would skip AddPartitionsToTxn.
                Map<TopicPartition, ProducePartitionResult> refused = new HashMap<>();
                entries.keySet().forEach(topicPartition -> refused.put(topicPartition, ProducePartitionResult.error(ErrorCode.UNSUPPORTED_VERSION,
                    "Transactional Produce v12 requires transaction.version 2, which is not finalized")));
                done.accept(refused);
                return;
            }
            context.replicaManager().appendTransactionalRecords(body.timeoutMs(), acks, body.transactionalId(), entries, false, done);
            return;
        }
        if (body.transactionalId() != null) {
            // A transactions v1 client: its first write to a partition in a transaction is verified with the coordinator (KIP-890 part 1).
            context.replicaManager().appendTransactionalRecords(body.timeoutMs(), acks, body.transactionalId(), entries, true, done);
            return;
        }
        context.replicaManager().appendRecords(body.timeoutMs(), acks, false, UnifiedLog.AppendOrigin.CLIENT, entries, done);
    }

    /** Whether the (validated: one magic-2) batch of {@code records} is transactional, read from its header in place. */
    private static boolean isTransactional(MemoryRecords records) {
        ByteBuffer buffer = records.buffer();
        short attributes = buffer.getShort(buffer.position() + RecordBatchDescriptor.ATTRIBUTES_OFFSET);
        return (attributes & RecordBatchDescriptor.TRANSACTIONAL_FLAG_MASK) != 0;
    }

    /** Kafka's ProduceRequest checks: one magic-2 batch per partition. */
    private static String validateRecords(ProduceRequestData.PartitionProduceData partition) {
        if (!(partition.records() instanceof MemoryRecords records) || records.sizeInBytes() == 0) {
            return "Produce request has no records for partition " + partition.index();
        }
        try {
            Iterator<RecordBatch> batches = records.batchIterator();
            if (!batches.hasNext()) {
                return "Produce request carries an incomplete record batch";
            }
            RecordBatch first = batches.next();
            if (first.magic() != RecordBatchDescriptor.MAGIC_V2) {
                return "Produce requests with version 3 and above are only allowed to contain record batches with magic version 2";
            }
            if (batches.hasNext()) {
                return "Produce requests with version 3 and above are only allowed to contain exactly one record batch per partition";
            }
        } catch (ProtocolException e) {
            return "Malformed record batch: " + e.getMessage();
        }
        return null;
    }

    private void respond(Request request, ProduceRequestData body, short acks, Map<Target, ProducePartitionResult> immediate,
                         Map<Target, TopicPartition> order, Map<TopicPartition, ProducePartitionResult> results) {
        Map<Target, ProducePartitionResult> all = new HashMap<>(immediate);
        for (Map.Entry<Target, TopicPartition> entry : order.entrySet()) {
            all.put(entry.getKey(), results.get(entry.getValue()));
        }
        if (acks == 0) {
            boolean failed = all.values().stream().anyMatch(result -> result.error() != ErrorCode.NONE);
            if (failed) {
                request.closeConnection("acks=0 produce failed: " + all.values().stream().filter(r -> r.error() != ErrorCode.NONE)
                    .findFirst().map(r -> r.error() + " " + r.errorMessage()).orElse(""));
            } else {
                request.respondWithoutResponse();
            }
            return;
        }
        ProduceResponseData response = new ProduceResponseData();
        LeaderHints hints = request.apiVersion() >= 10 ? new LeaderHints(context.image(), request.listenerName()) : null;
        for (ProduceRequestData.TopicProduceData topic : body.topicData()) {
            ProduceResponseData.TopicProduceResponse topicResponse = new ProduceResponseData.TopicProduceResponse()
                .setName(topic.name()).setTopicId(topic.topicId());
            for (ProduceRequestData.PartitionProduceData partition : topic.partitionData()) {
                Target target = new Target(topic.name(), topic.topicId(), partition.index());
                ProducePartitionResult result = all.get(target);
                ProduceResponseData.PartitionProduceResponse partitionResponse = new ProduceResponseData.PartitionProduceResponse()
                    .setIndex(partition.index())
                    .setErrorCode(result.error().code())
                    .setBaseOffset(result.baseOffset())
                    .setLogAppendTimeMs(result.logAppendTimeMs())
                    .setLogStartOffset(result.logStartOffset())
                    .setErrorMessage(result.error() == ErrorCode.NONE ? null : result.errorMessage());
                if (hints != null && result.error() == ErrorCode.NOT_LEADER_OR_FOLLOWER) {
                    TopicPartition resolved = order.get(target);
                    LeaderHints.Leader leader = hints.leaderOf(resolved == null ? null : resolved.topic(), partition.index());
                    partitionResponse.setCurrentLeader(new ProduceResponseData.LeaderIdAndEpoch().setLeaderId(leader.id())
                        .setLeaderEpoch(leader.epoch()));
                }
                topicResponse.partitionResponses().add(partitionResponse);
            }
            response.responses().add(topicResponse);
        }
        if (hints != null) {
            for (LeaderHints.Node node : hints.nodes().values()) {
                response.nodeEndpoints().add(new ProduceResponseData.NodeEndpoint().setNodeId(node.id()).setHost(node.host())
                    .setPort(node.port()).setRack(node.rack()));
            }
        }
        request.respond(response);
    }
}
