package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionReassignmentsRequestData;
import io.strata.protocol.message.AlterPartitionReassignmentsResponseData;
import io.strata.protocol.message.ListPartitionReassignmentsRequestData;
import io.strata.protocol.message.ListPartitionReassignmentsResponseData;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * AlterPartitionReassignments (key 45, v0-1) and ListPartitionReassignments (key 46) as Kafka
 * 4.4's ReplicationControlManager answers them, over a {@link MetadataImage}; the records come
 * from {@link PartitionChangeBuilder} and the reassignment arithmetic from {@link Reassignment}.
 * Nothing is applied here. Immutable and thread-safe; the controller calls it on its thread.
 *
 * <p>Per partition of an Alter request, in order: unknown topic or partition →
 * UNKNOWN_TOPIC_OR_PARTITION; null replicas is a cancel: none in progress →
 * NO_REASSIGNMENT_IN_PROGRESS, a revert that needs an unclean election while the topic does not
 * allow one → INVALID_REPLICA_ASSIGNMENT, else replicas back to the original; otherwise the target
 * must be non-empty, name only registered brokers and none twice (INVALID_REPLICA_ASSIGNMENT) and,
 * when AllowReplicationFactorChange is false (KIP-860, v1), keep the original's size
 * (INVALID_REPLICATION_FACTOR). A valid target starts the reassignment (and completes it at once
 * if the ISR already holds what completion needs, e.g. a pure shrink).
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
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData()
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
            throw new Refusal(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, "No partition reassignment is in progress.");
        }
        Reassignment.Revert revert = current.revert(PartitionRegistration.toList(partition.isr()));
        if (revert.unclean() && !replication.uncleanLeaderElectionEnabled(image, topic.name())) {
            throw new Refusal(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition assignment for " + topic.name() + ":"
                + partitionId + " because it would require an unclean leader election.");
        }
        PartitionChangeBuilder builder = replication.builder(image, topic, partitionId, ReplicationControl.acceptableLeaders(image, Set.of(), Set.of()))
            .setTargetIsr(revert.isr()).setTargetReplicas(revert.replicas()).setTargetAdding(List.of()).setTargetRemoving(List.of());
        if (revert.unclean()) {
            builder.setElection(PartitionChangeBuilder.Election.UNCLEAN);
        }
        return builder.build();
    }

    private Optional<PartitionChangeRecord> change(MetadataImage image, TopicImage topic, int partitionId, PartitionRegistration partition,
                                                   List<Integer> target, boolean allowReplicationFactorChange) throws Refusal {
        validateAssignment(image, target);
        Reassignment current = Reassignment.of(partition);
        if (!allowReplicationFactorChange) {
            int currentSize = current.inProgress() ? current.original().size() : partition.replicas().length;
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
     * ListPartitionReassignments: the running reassignments of the named partitions (a null topic
     * list means every partition), topics in name order; unknown topics and partitions and those
     * without a reassignment are left out, as Kafka's controller does.
     */
    public ListPartitionReassignmentsResponseData list(MetadataImage image, ListPartitionReassignmentsRequestData request) {
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsResponseData().setErrorCode(ErrorCode.NONE.code());
        Map<String, List<ListPartitionReassignmentsResponseData.OngoingPartitionReassignment>> found = new TreeMap<>();
        if (request.topics() == null) {
            for (TopicImage topic : image.topicsByName().values()) {
                for (int partitionId : new TreeMap<>(topic.partitions()).keySet()) {
                    addOngoing(topic, partitionId, found);
                }
            }
        } else {
            for (ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics wanted : request.topics()) {
                TopicImage topic = image.topicsByName().get(wanted.name());
                if (topic == null) {
                    continue;
                }
                for (int partitionId : new HashSet<>(wanted.partitionIndexes())) {
                    addOngoing(topic, partitionId, found);
                }
            }
        }
        found.forEach((name, partitions) -> {
            partitions.sort((a, b) -> Integer.compare(a.partitionIndex(), b.partitionIndex()));
            response.topics().add(new ListPartitionReassignmentsResponseData.OngoingTopicReassignment().setName(name).setPartitions(partitions));
        });
        return response;
    }

    private static void addOngoing(TopicImage topic, int partitionId,
                                   Map<String, List<ListPartitionReassignmentsResponseData.OngoingPartitionReassignment>> found) {
        PartitionRegistration partition = topic.partitions().get(partitionId);
        if (partition == null) {
            return;
        }
        Reassignment reassignment = Reassignment.of(partition);
        if (!reassignment.inProgress()) {
            return;
        }
        found.computeIfAbsent(topic.name(), name -> new ArrayList<>()).add(new ListPartitionReassignmentsResponseData.OngoingPartitionReassignment()
            .setPartitionIndex(partitionId).setReplicas(reassignment.replicas()).setAddingReplicas(reassignment.adding())
            .setRemovingReplicas(reassignment.removing()));
    }
}
