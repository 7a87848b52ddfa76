package io.strata.coordinator.group;

import io.strata.common.Time;
import io.strata.coordinator.group.consumer.ConsumerGroupRecords;
import io.strata.coordinator.record.GroupMetadataKey;
import io.strata.coordinator.record.GroupMetadataValue;
import io.strata.coordinator.record.OffsetCommitKey;
import io.strata.coordinator.record.OffsetCommitValue;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Message;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.Reader;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * Writes and reads group state in {@code __consumer_offsets} with Apache Kafka's record
 * layouts, so Kafka's own tooling can read them: a key is a version (int16: 0/1 offset commit,
 * 2 group metadata, 3-8 and 16 consumer groups, see ConsumerGroupRecords) and the key struct; a value is a version (int16) and the value struct; a
 * null value deletes (compaction keeps the latest per key).
 */
final class GroupStore {
    private static final Logger LOG = LoggerFactory.getLogger(GroupStore.class);
    static final short OFFSET_COMMIT_KEY_VERSION = 1;
    static final short OFFSET_COMMIT_VALUE_VERSION = 3;
    static final short OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1;
    static final short GROUP_METADATA_KEY_VERSION = 2;
    static final short GROUP_METADATA_VALUE_VERSION = 3;

    private final CoordinatorLog log;
    private final Time time;

    GroupStore(CoordinatorLog log, Time time) {
        this.log = log;
        this.time = time;
    }

    static byte[] encode(short version, Message message) {
        ByteBuffer buffer = ByteBuffer.allocate(2 + message.size(version));
        buffer.putShort(version);
        message.write(new ByteBufferWriter(buffer), version);
        return buffer.array();
    }

    static byte[] offsetKey(String group, String topic, int partition) {
        return encode(OFFSET_COMMIT_KEY_VERSION, new OffsetCommitKey().setGroup(group).setTopic(topic).setPartition(partition));
    }

    /**
     * An offset commit value: version 3, or (as Kafka writes it) version 1 when the commit has an
     * explicit expire timestamp (OffsetCommit v2-v4 with a retention time); version 1 has no
     * leader epoch.
     */
    static byte[] offsetValue(OffsetAndMetadata offset) {
        short version = offset.hasExpireTimestamp() ? OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY : OFFSET_COMMIT_VALUE_VERSION;
        return encode(version, new OffsetCommitValue().setOffset(offset.offset()).setLeaderEpoch(offset.leaderEpoch())
            .setMetadata(offset.metadata() == null ? "" : offset.metadata()).setCommitTimestamp(offset.commitTimestampMs())
            .setExpireTimestamp(offset.expireTimestampMs()));
    }

    /** The tombstone of a committed offset. */
    static byte[][] offsetTombstone(String group, String topic, int partition) {
        return new byte[][] {offsetKey(group, topic, partition), null};
    }

    private static OffsetAndMetadata readOffset(ByteBuffer value) {
        Reader valueReader = new Reader(value.duplicate());
        short valueVersion = valueReader.readShort();
        OffsetCommitValue offsetValue = new OffsetCommitValue(valueReader, valueVersion);
        return new OffsetAndMetadata(offsetValue.offset(), offsetValue.leaderEpoch(), offsetValue.metadata(), offsetValue.commitTimestamp(),
            offsetValue.expireTimestamp());
    }

    static byte[] groupKey(String group) {
        return encode(GROUP_METADATA_KEY_VERSION, new GroupMetadataKey().setGroup(group));
    }

    static byte[] groupValue(ClassicGroup group) {
        GroupMetadataValue value = new GroupMetadataValue().setProtocolType(group.protocolType == null ? "" : group.protocolType)
            .setGeneration(group.generationId).setProtocol(group.protocolName).setLeader(group.leaderId)
            .setCurrentStateTimestamp(group.stateTimestampMs);
        for (ClassicGroupMember member : group.members.values()) {
            value.members().add(new GroupMetadataValue.MemberMetadata().setMemberId(member.memberId).setGroupInstanceId(member.groupInstanceId)
                .setClientId(member.clientId).setClientHost(member.clientHost).setRebalanceTimeout(member.rebalanceTimeoutMs)
                .setSessionTimeout(member.sessionTimeoutMs)
                .setSubscription(group.protocolName != null && member.metadata(group.protocolName) != null ? member.metadata(group.protocolName) : new byte[0])
                .setAssignment(member.assignment));
        }
        return encode(GROUP_METADATA_VALUE_VERSION, value);
    }

    /** Writes the group's metadata; {@code done} runs on the shard's thread. */
    void writeGroup(GroupShard shard, ClassicGroup group, Consumer<ErrorCode> done) {
        byte[] value = group.is(ClassicGroupState.DEAD) ? null : groupValue(group);
        List<byte[][]> records = new java.util.ArrayList<>(1);
        records.add(new byte[][] {groupKey(group.groupId), value});
        write(shard, records, done);
    }

    /** Writes key/value pairs as one batch; {@code done} runs on the shard's thread. */
    void write(GroupShard shard, List<byte[][]> keyValues, Consumer<ErrorCode> done) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0);
        long now = time.milliseconds();
        for (byte[][] keyValue : keyValues) {
            builder.append(now, keyValue[0], keyValue[1]);
        }
        MemoryRecords records = builder.build();
        Executor executor = shard.executor();
        log.append(shard.partition(), records, error -> executor.execute(() -> done.accept(error)));
    }

    /** Replays a partition into a shard, holding transactional offset commits until their markers. Runs on the shard's thread. */
    void load(GroupShard shard) {
        log.replayTransactional(shard.partition(), new CoordinatorLog.TransactionalReplay() {
            @Override
            public void record(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional) {
                record(key, value, producerId, transactional, -1L);
            }

            @Override
            public void record(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional, long offset) {
                try {
                    if (transactional) {
                        applyTransactional(shard, key, value, producerId);
                    } else {
                        apply(shard, key, value, offset);
                    }
                } catch (ProtocolException e) {
                    // A record whose bytes do not parse (corrupt, or a layout this version does not know): the
                    // rest of the partition still loads, as Kafka goes on past a record type it cannot read.
                    // The operator needs to know which record was skipped, and where.
                    shard.recordSkipped();
                    LOG.warn("Skipping an unreadable record at offset {} of __consumer_offsets-{} (key type {}): {}", offset, shard.partition(),
                        keyType(key), e.getMessage());
                }
            }

            @Override
            public void marker(long producerId, boolean commit) {
                shard.completeTransactionalOffsets(producerId, commit);
            }
        });
        shard.onLoaded();
    }

    private static void applyTransactional(GroupShard shard, ByteBuffer key, ByteBuffer value, long producerId) {
        Reader keyReader = new Reader(key.duplicate());
        short keyVersion = keyReader.readShort();
        if ((keyVersion == 0 || keyVersion == 1) && value != null) {
            OffsetCommitKey offsetKey = new OffsetCommitKey(keyReader, keyVersion);
            shard.addPendingTransactionalOffset(producerId, offsetKey.group(), new GroupShard.TopicPartitionKey(offsetKey.topic(), offsetKey.partition()),
                readOffset(value));
        }
    }

    /** Writes offset commits inside a producer's transaction; {@code done} runs on the shard's thread. */
    void writeTransactional(GroupShard shard, List<byte[][]> keyValues, long producerId, short producerEpoch, Consumer<ErrorCode> done) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
            .producerState(producerId, producerEpoch, -1, true);
        long now = time.milliseconds();
        for (byte[][] keyValue : keyValues) {
            builder.append(now, keyValue[0], keyValue[1]);
        }
        Executor executor = shard.executor();
        log.appendTransactional(shard.partition(), builder.build(), error -> executor.execute(() -> done.accept(error)));
    }

    /** The record type (a key's version prefix), or -1 if the key is missing or too short. */
    private static int keyType(ByteBuffer key) {
        return key == null || key.remaining() < 2 ? -1 : key.getShort(key.position());
    }

    private static void apply(GroupShard shard, ByteBuffer key, ByteBuffer value, long logOffset) {
        if (key == null) {
            LOG.warn("Skipping a record without a key at offset {} of __consumer_offsets-{}", logOffset, shard.partition());
            shard.recordSkipped();
            return;
        }
        Reader keyReader = new Reader(key.duplicate());
        short keyVersion = keyReader.readShort();
        if (keyVersion == 0 || keyVersion == 1) {
            OffsetCommitKey offsetKey = new OffsetCommitKey(keyReader, keyVersion);
            OffsetAndMetadata offset = value == null ? null : readOffset(value);
            shard.loadOffset(offsetKey.group(), new GroupShard.TopicPartitionKey(offsetKey.topic(), offsetKey.partition()), offset);
        } else if (keyVersion == 2) {
            GroupMetadataKey groupKey = new GroupMetadataKey(keyReader, keyVersion);
            shard.loadGroup(groupKey.group(), value == null ? null : readGroup(groupKey.group(), value));
        } else if (ConsumerGroupRecords.isConsumerGroupRecord(keyVersion)) {
            shard.consumerGroups.replay(keyVersion, keyReader, value);
        } else {
            // Kafka's loader skips a record type it does not know with the same warning (e.g. a left-over of an aborted upgrade).
            LOG.warn("Skipping a record of unknown type {} at offset {} of __consumer_offsets-{}", keyVersion, logOffset, shard.partition());
            shard.recordSkipped();
        }
    }

    /** Replays the shard's partition as it is, for rebuilding consumer group state after a failed write. Runs on the shard's thread. */
    void replayRaw(GroupShard shard, java.util.function.BiConsumer<ByteBuffer, ByteBuffer> records) {
        log.replay(shard.partition(), records);
    }

    private static ClassicGroup readGroup(String groupId, ByteBuffer value) {
        Reader reader = new Reader(value.duplicate());
        short version = reader.readShort();
        GroupMetadataValue stored = new GroupMetadataValue(reader, version);
        ClassicGroup group = new ClassicGroup(groupId);
        group.protocolType = stored.protocolType().isEmpty() ? null : stored.protocolType();
        group.generationId = stored.generation();
        group.protocolName = stored.protocol();
        group.leaderId = stored.leader();
        for (GroupMetadataValue.MemberMetadata stored1 : stored.members()) {
            LinkedHashMap<String, byte[]> protocols = new LinkedHashMap<>();
            if (stored.protocol() != null) {
                protocols.put(stored.protocol(), stored1.subscription());
            }
            ClassicGroupMember member = new ClassicGroupMember(stored1.memberId(), stored1.groupInstanceId(), stored1.clientId(),
                stored1.clientHost(), stored1.rebalanceTimeout(), stored1.sessionTimeout(), group.protocolType, protocols);
            member.assignment = stored1.assignment();
            group.members.put(member.memberId, member);
            if (member.isStatic()) {
                group.staticMembers.put(member.groupInstanceId, member.memberId);
            }
        }
        group.state = group.members.isEmpty() ? ClassicGroupState.EMPTY : ClassicGroupState.STABLE;
        group.stateTimestampMs = stored.currentStateTimestamp();
        return group;
    }
}
