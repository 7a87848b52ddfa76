package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionReassignmentsRequestData;
import io.strata.protocol.message.AlterPartitionReassignmentsResponseData;
import io.strata.protocol.message.ListPartitionReassignmentsRequestData;
import io.strata.protocol.message.ListPartitionReassignmentsResponseData;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * AlterPartitionReassignments (key 45, v0-1) and ListPartitionReassignments (key 46) as Kafka
 * 4.4's ReplicationControlManager answers them, over a {@link MetadataImage}; the records come
 * from {@link PartitionChangeBuilder} and the reassignment arithmetic from {@link Reassignment}.
 * Nothing is applied here. Immutable and thread-safe; the controller calls it on its thread.
 *
 * <p>Per partition of an Alter request, in request order (a partition named twice is handled
 * twice, each against the image as the request found it, as Kafka does), checked in this order:
 * <ol>
 *   <li>unknown topic → UNKNOWN_TOPIC_OR_PARTITION "Unable to find a topic named T."; unknown
 *       partition → UNKNOWN_TOPIC_OR_PARTITION "Unable to find partition T:P.";</li>
 *   <li>null replicas is a cancel: none in progress → NO_REASSIGNMENT_IN_PROGRESS (no message:
 *       Kafka's ApiError drops a message equal to the code's default); a revert whose ISR would be
 *       empty ({@link Reassignment#revert}: it then holds the first original replica) while the
 *       topic does not allow unclean leader election → INVALID_REPLICA_ASSIGNMENT; else replicas
 *       back to the original, elected with UNCLEAN whenever the topic allows it;</li>
 *   <li>otherwise the target must be non-empty, name only registered brokers and none twice
 *       (INVALID_REPLICA_ASSIGNMENT; a negative id is an unregistered broker), then, when
 *       AllowReplicationFactorChange is false (KIP-860, v1), be as long as the replica set the
 *       partition is headed for: the running reassignment's target if one runs, else the replicas
 *       (INVALID_REPLICATION_FACTOR "The replication factor is changed from N to M").</li>
 * </ol>
 * A valid target starts the reassignment (and completes it at once if the ISR already holds what
 * completion needs, e.g. a pure shrink). Errors are per partition; the top-level error is NONE.
 */
public final class PartitionReassignments {
    private final ReplicationControl replication;

    public PartitionReassignments(ReplicationControl replication) {
        this.replication = replication;
    }

    /** Thrown inside a partition's handling: the partition's answer. */
    private static final class Refusal extends Exception {
        private final ErrorCode error;

        Refusal(ErrorCode error, String message) {
            super(message, null, false, false);
            this.error = error;
        }
    }

    /** The records to write and the answer; see the class javadoc. */
    public ReplicationControl.Result<AlterPartitionReassignmentsResponseData> alter(MetadataImage image,
                                                                                  AlterPartitionReassignmentsRequestData request) {
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData().setErrorMessage(null)
            .setAllowReplicationFactorChange(request.allowReplicationFactorChange());
        List<ApiMessage> records = new ArrayList<>();
        for (AlterPartitionReassignmentsRequestData.ReassignableTopic topicData : request.topics()) {
            AlterPartitionReassignmentsResponseData.ReassignableTopicResponse topicResponse =
                new AlterPartitionReassignmentsResponseData.ReassignableTopicResponse().setName(topicData.name());
            response.responses().add(topicResponse);
            for (AlterPartitionReassignmentsRequestData.ReassignablePartition partitionData : topicData.partitions()) {
                AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse answer =
                    new AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse().setPartitionIndex(partitionData.partitionIndex());
                try {
                    alterOne(image, topicData.name(), partitionData, request.allowReplicationFactorChange()).ifPresent(records::add);
                    answer.setErrorCode(ErrorCode.NONE.code()).setErrorMessage(null);
                } catch (Refusal refusal) {
                    answer.setErrorCode(refusal.error.code()).setErrorMessage(refusal.getMessage());
                }
                topicResponse.partitions().add(answer);
            }
        }
        return new ReplicationControl.Result<>(records, response);
    }

    private Optional<PartitionChangeRecord> alterOne(MetadataImage image, String topicName,
                                                     AlterPartitionReassignmentsRequestData.ReassignablePartition data,
                                                     boolean allowReplicationFactorChange) throws Refusal {
        TopicImage topic = image.topicsByName().get(topicName);
        PartitionRegistration partition = topic == null ? null : topic.partitions().get(data.partitionIndex());
        if (topic == null) {
            throw new Refusal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named " + topicName + ".");
        }
        if (partition == null) {
            throw new Refusal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition " + topicName + ":" + data.partitionIndex() + ".");
        }
        if (data.replicas() == null) {
            return cancel(image, topic, data.partitionIndex(), partition);
        }
        return change(image, topic, data.partitionIndex(), partition, data.replicas(), allowReplicationFactorChange);
    }

    private Optional<PartitionChangeRecord> cancel(MetadataImage image, TopicImage topic, int partitionId, PartitionRegistration partition)
        throws Refusal {
        Reassignment current = Reassignment.of(partition);
        if (!current.inProgress()) {
            throw new Refusal(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, null);
        }
        if (current.original().isEmpty()) {
            throw new Refusal(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Invalid replica assignment: addingReplicas contains all replicas.");
        }
        Reassignment.Revert revert = current.revert(PartitionRegistration.toList(partition.isr()));
        boolean uncleanAllowed = replication.uncleanLeaderElectionEnabled(image, topic.name());
        if (revert.unclean() && !uncleanAllowed) {
            throw new Refusal(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition assignment for " + topic.name() + ":"
                + partitionId + " because it would require an unclean leader election.");
        }
        PartitionChangeBuilder builder = replication.builder(image, topic, partitionId, ReplicationControl.acceptableLeaders(image, Set.of(), Set.of()))
            .setTargetIsr(revert.isr()).setTargetReplicas(revert.replicas()).setTargetAdding(List.of()).setTargetRemoving(List.of());
        if (uncleanAllowed) {
            // As Kafka: whenever the topic allows it, not only for an unclean revert (the ISR left may have no live member).
            builder.setElection(PartitionChangeBuilder.Election.UNCLEAN);
        }
        return builder.build();
    }

    private Optional<PartitionChangeRecord> change(MetadataImage image, TopicImage topic, int partitionId, PartitionRegistration partition,
                                                   List<Integer> target, boolean allowReplicationFactorChange) throws Refusal {
        validateAssignment(image, target);
        Reassignment current = Reassignment.of(partition);
        if (!allowReplicationFactorChange) {
            // Kafka's validatePartitionReplicationFactorUnchanged: against the size the partition is headed for.
            int currentSize = current.inProgress() ? current.target().size() : partition.replicas().length;
            if (currentSize != target.size()) {
                throw new Refusal(ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from " + currentSize + " to "
                    + target.size());
            }
        }
        // As Kafka: the reassignment is computed over the replicas as they stand (a running one's full list).
        Reassignment next = Reassignment.of(PartitionRegistration.toList(partition.replicas()), target);
        return replication.builder(image, topic, partitionId, ReplicationControl.acceptableLeaders(image, Set.of(), Set.of()))
            .setTargetReplicas(next.replicas()).setTargetAdding(next.adding()).setTargetRemoving(next.removing()).build();
    }

    /** Kafka's validateManualPartitionAssignment: non-empty, every broker registered, none twice (checked in ascending id order). */
    private static void validateAssignment(MetadataImage image, List<Integer> target) throws Refusal {
        if (target.isEmpty()) {
            throw new Refusal(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.");
        }
        List<Integer> sorted = new ArrayList<>(target);
        sorted.sort(Integer::compare);
        Integer previous = null;
        for (Integer brokerId : sorted) {
            if (!image.brokers().containsKey(brokerId)) {
                throw new Refusal(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker " + brokerId
                    + ", but no such broker is registered.");
            }
            if (brokerId.equals(previous)) {
                throw new Refusal(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker " + previous
                    + " more than once.");
            }
            previous = brokerId;
        }
    }

    /**
     * ListPartitionReassignments: the running reassignments of the named partitions, as Kafka's
     * controller lists them. A null topic list means every partition: topics in name order,
     * partitions in id order. Named topics come in the request's order, each with its named
     * partitions in the request's order (one named twice is listed twice, as Kafka does); unknown
     * topics and partitions and those without a reassignment are left out, and so is a topic left
     * with none.
     */
    public ListPartitionReassignmentsResponseData list(MetadataImage image, ListPartitionReassignmentsRequestData request) {
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsResponseData().setErrorCode(ErrorCode.NONE.code())
            .setErrorMessage(null);
        if (request.topics() == null) {
            for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
                addTopic(topic, new TreeMap<>(topic.partitions()).keySet(), response);
            }
        } else {
            for (ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics wanted : request.topics()) {
                TopicImage topic = image.topicsByName().get(wanted.name());
                if (topic != null) {
                    addTopic(topic, wanted.partitionIndexes(), response);
                }
            }
        }
        return response;
    }

    private static void addTopic(TopicImage topic, Iterable<Integer> partitionIds, ListPartitionReassignmentsResponseData response) {
        List<ListPartitionReassignmentsResponseData.OngoingPartitionReassignment> ongoing = new ArrayList<>();
        for (int partitionId : partitionIds) {
            addOngoing(topic, partitionId, ongoing);
        }
        if (!ongoing.isEmpty()) {
            response.topics().add(new ListPartitionReassignmentsResponseData.OngoingTopicReassignment().setName(topic.name()).setPartitions(ongoing));
        }
    }

    private static void addOngoing(TopicImage topic, int partitionId, List<ListPartitionReassignmentsResponseData.OngoingPartitionReassignment> found) {
        PartitionRegistration partition = topic.partitions().get(partitionId);
        if (partition == null) {
            return;
        }
        Reassignment reassignment = Reassignment.of(partition);
        if (!reassignment.inProgress()) {
            return;
        }
        found.add(new ListPartitionReassignmentsResponseData.OngoingPartitionReassignment()
            .setPartitionIndex(partitionId).setReplicas(reassignment.replicas()).setAddingReplicas(reassignment.adding())
            .setRemovingReplicas(reassignment.removing()));
    }
}
