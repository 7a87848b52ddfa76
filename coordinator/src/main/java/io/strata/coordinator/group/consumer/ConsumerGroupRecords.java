package io.strata.coordinator.group.consumer;

import io.strata.coordinator.record.ConsumerGroupCurrentMemberAssignmentKey;
import io.strata.coordinator.record.ConsumerGroupCurrentMemberAssignmentValue;
import io.strata.coordinator.record.ConsumerGroupMemberMetadataKey;
import io.strata.coordinator.record.ConsumerGroupMemberMetadataValue;
import io.strata.coordinator.record.ConsumerGroupMetadataKey;
import io.strata.coordinator.record.ConsumerGroupMetadataValue;
import io.strata.coordinator.record.ConsumerGroupPartitionMetadataKey;
import io.strata.coordinator.record.ConsumerGroupRegularExpressionKey;
import io.strata.coordinator.record.ConsumerGroupRegularExpressionValue;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMemberKey;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMemberValue;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMetadataKey;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMetadataValue;
import io.strata.coordinator.record.GroupMetadataKey;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.Message;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.UUID;

/**
 * The records of consumer groups in {@code __consumer_offsets}, in Apache Kafka's layouts so
 * Kafka's tools (and a Kafka coordinator) read them. A key is an int16 record type followed by
 * the key struct (non-flexible); a value is an int16 version (0) followed by the value struct
 * (flexible); a null value is a tombstone.
 *
 * <pre>
 *   type  key fields            value
 *    3    group                 group epoch, subscribed-topics hash
 *    4    group                 (legacy subscription metadata; only tombstoned)
 *    5    group, member         member subscription: instance, rack, client, topics, regex, assignor
 *    6    group                 target assignment epoch
 *    7    group, member         member's target assignment
 *    8    group, member         member's epoch, previous epoch, state, assigned and revoking partitions
 *                               (each with the epoch it was assigned at, KIP-1251)
 *   16    group, regex          topics the regex resolved to
 * </pre>
 *
 * Order matters on replay: a member's subscription (5) precedes its assignments (7, 8); its
 * tombstones come in the order 8, 7, 5; the group's tombstone (3) comes last.
 */
public final class ConsumerGroupRecords {
    public static final short GROUP_METADATA = 3;
    public static final short PARTITION_METADATA = 4;
    public static final short MEMBER_METADATA = 5;
    public static final short TARGET_ASSIGNMENT_METADATA = 6;
    public static final short TARGET_ASSIGNMENT_MEMBER = 7;
    public static final short CURRENT_MEMBER_ASSIGNMENT = 8;
    public static final short REGULAR_EXPRESSION = 16;
    static final short CLASSIC_GROUP_METADATA = 2;
    static final short VALUE_VERSION = 0;

    private ConsumerGroupRecords() {
    }

    /** Whether a key of this record type belongs to a consumer group. */
    public static boolean isConsumerGroupRecord(short keyVersion) {
        return keyVersion >= GROUP_METADATA && keyVersion <= CURRENT_MEMBER_ASSIGNMENT || keyVersion == REGULAR_EXPRESSION;
    }

    static byte[] encode(short version, Message message) {
        ByteBuffer buffer = ByteBuffer.allocate(2 + message.size(version));
        buffer.putShort(version);
        message.write(new ByteBufferWriter(buffer), version);
        if (buffer.hasRemaining()) {
            throw new IllegalStateException("Encoded " + buffer.position() + " bytes but sized " + buffer.capacity() + " for " + message.getClass().getSimpleName());
        }
        return buffer.array();
    }

    static byte[][] groupEpoch(String groupId, int epoch, long metadataHash) {
        return new byte[][] {encode(GROUP_METADATA, new ConsumerGroupMetadataKey().setGroupId(groupId)),
            encode(VALUE_VERSION, new ConsumerGroupMetadataValue().setEpoch(epoch).setMetadataHash(metadataHash))};
    }

    static byte[][] groupTombstone(String groupId) {
        return new byte[][] {encode(GROUP_METADATA, new ConsumerGroupMetadataKey().setGroupId(groupId)), null};
    }

    static byte[][] partitionMetadataTombstone(String groupId) {
        return new byte[][] {encode(PARTITION_METADATA, new ConsumerGroupPartitionMetadataKey().setGroupId(groupId)), null};
    }

    static byte[][] memberMetadata(String groupId, ConsumerGroupMember member) {
        ConsumerGroupMemberMetadataValue value = new ConsumerGroupMemberMetadataValue().setInstanceId(member.instanceId())
            .setRackId(member.rackId()).setClientId(member.clientId()).setClientHost(member.clientHost())
            .setSubscribedTopicNames(new ArrayList<>(member.subscribedTopicNames())).setSubscribedTopicRegex(member.subscribedTopicRegex())
            .setRebalanceTimeoutMs(member.rebalanceTimeoutMs()).setServerAssignor(member.serverAssignor());
        return new byte[][] {memberMetadataKey(groupId, member.memberId()), encode(VALUE_VERSION, value)};
    }

    static byte[][] memberMetadataTombstone(String groupId, String memberId) {
        return new byte[][] {memberMetadataKey(groupId, memberId), null};
    }

    private static byte[] memberMetadataKey(String groupId, String memberId) {
        return encode(MEMBER_METADATA, new ConsumerGroupMemberMetadataKey().setGroupId(groupId).setMemberId(memberId));
    }

    static byte[][] targetAssignmentEpoch(String groupId, int epoch, long timestampMs) {
        return new byte[][] {encode(TARGET_ASSIGNMENT_METADATA, new ConsumerGroupTargetAssignmentMetadataKey().setGroupId(groupId)),
            encode(VALUE_VERSION, new ConsumerGroupTargetAssignmentMetadataValue().setAssignmentEpoch(epoch).setAssignmentTimestamp(timestampMs))};
    }

    static byte[][] targetAssignmentEpochTombstone(String groupId) {
        return new byte[][] {encode(TARGET_ASSIGNMENT_METADATA, new ConsumerGroupTargetAssignmentMetadataKey().setGroupId(groupId)), null};
    }

    static byte[][] targetAssignment(String groupId, String memberId, Assignment assignment) {
        ConsumerGroupTargetAssignmentMemberValue value = new ConsumerGroupTargetAssignmentMemberValue();
        for (Map.Entry<UUID, SortedSet<Integer>> topic : assignment.partitions().entrySet()) {
            value.topicPartitions().add(new ConsumerGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(topic.getKey())
                .setPartitions(new ArrayList<>(topic.getValue())));
        }
        return new byte[][] {targetAssignmentKey(groupId, memberId), encode(VALUE_VERSION, value)};
    }

    static byte[][] targetAssignmentTombstone(String groupId, String memberId) {
        return new byte[][] {targetAssignmentKey(groupId, memberId), null};
    }

    private static byte[] targetAssignmentKey(String groupId, String memberId) {
        return encode(TARGET_ASSIGNMENT_MEMBER, new ConsumerGroupTargetAssignmentMemberKey().setGroupId(groupId).setMemberId(memberId));
    }

    static byte[][] currentAssignment(String groupId, ConsumerGroupMember member) {
        ConsumerGroupCurrentMemberAssignmentValue value = new ConsumerGroupCurrentMemberAssignmentValue().setMemberEpoch(member.memberEpoch())
            .setPreviousMemberEpoch(member.previousMemberEpoch()).setState(member.state().value())
            .setAssignedPartitions(currentPartitions(member.assignedPartitions(), member.assignmentEpochs()))
            .setPartitionsPendingRevocation(currentPartitions(member.partitionsPendingRevocation(), member.assignmentEpochs()));
        return new byte[][] {currentAssignmentKey(groupId, member.memberId()), encode(VALUE_VERSION, value)};
    }

    static byte[][] currentAssignmentTombstone(String groupId, String memberId) {
        return new byte[][] {currentAssignmentKey(groupId, memberId), null};
    }

    private static byte[] currentAssignmentKey(String groupId, String memberId) {
        return encode(CURRENT_MEMBER_ASSIGNMENT, new ConsumerGroupCurrentMemberAssignmentKey().setGroupId(groupId).setMemberId(memberId));
    }

    private static List<ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions> currentPartitions(Assignment assignment,
                                                                                                   AssignmentEpochs epochs) {
        List<ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions> topics = new ArrayList<>();
        for (Map.Entry<UUID, SortedSet<Integer>> topic : assignment.partitions().entrySet()) {
            List<Integer> topicEpochs = new ArrayList<>();
            for (int partition : topic.getValue()) {
                topicEpochs.add(epochs.epoch(topic.getKey(), partition));
            }
            topics.add(new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(topic.getKey())
                .setPartitions(new ArrayList<>(topic.getValue())).setAssignmentEpochs(topicEpochs));
        }
        return topics;
    }

    static byte[][] regex(String groupId, String regex, ConsumerGroup.ResolvedRegex resolved) {
        return new byte[][] {regexKey(groupId, regex), encode(VALUE_VERSION, new ConsumerGroupRegularExpressionValue()
            .setTopics(new ArrayList<>(resolved.topics())).setVersion(resolved.version()).setTimestamp(resolved.timestampMs()))};
    }

    static byte[][] regexTombstone(String groupId, String regex) {
        return new byte[][] {regexKey(groupId, regex), null};
    }

    private static byte[] regexKey(String groupId, String regex) {
        return encode(REGULAR_EXPRESSION, new ConsumerGroupRegularExpressionKey().setGroupId(groupId).setRegularExpression(regex));
    }

    /** The tombstone of a classic group's metadata, written when its id passes to a consumer group (or back). */
    static byte[][] classicGroupTombstone(String groupId) {
        return new byte[][] {encode(CLASSIC_GROUP_METADATA, new GroupMetadataKey().setGroup(groupId)), null};
    }
}
