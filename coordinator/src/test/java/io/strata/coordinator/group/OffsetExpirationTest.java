package io.strata.coordinator.group;

import io.strata.common.MockTime;
import io.strata.coordinator.group.consumer.ConsumerGroupSettings;
import io.strata.coordinator.group.consumer.TopicsView;
import io.strata.coordinator.record.GroupMetadataKey;
import io.strata.coordinator.record.OffsetCommitKey;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Reader;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import io.strata.protocol.message.ConsumerProtocolSubscription;
import io.strata.protocol.message.JoinGroupRequestData;
import io.strata.protocol.message.JoinGroupResponseData;
import io.strata.protocol.message.ListGroupsResponseData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.SyncGroupRequestData;
import io.strata.protocol.message.SyncGroupResponseData;
import io.strata.protocol.message.TxnOffsetCommitRequestData;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Expiration of committed offsets ({@code offsets.retention.minutes}) with Kafka 4.x's rules,
 * on a mock clock over an in-memory {@code __consumer_offsets} partition: what expires from
 * when for simple, classic and consumer (KIP-848) groups, pending transactional offsets, the
 * deletion of empty groups, and a restart rebuilding the same state from the log.
 *
 * <p>The periodic pass is configured far in the future; each test runs passes itself
 * ({@link GroupCoordinator#cleanupGroupMetadata}) after moving the clock.
 */
class OffsetExpirationTest {
    private static final long RETENTION_MS = TimeUnit.DAYS.toMillis(7);
    private static final long HOUR_MS = TimeUnit.HOURS.toMillis(1);
    private static final UUID ORDERS_ID = UUID.nameUUIDFromBytes("orders".getBytes());
    private static final UUID PAYMENTS_ID = UUID.nameUUIDFromBytes("payments".getBytes());

    /** An in-memory __consumer_offsets partition: records with their producer, and transaction markers, in order. */
    static final class MemoryLog implements CoordinatorLog {
        record Entry(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional, Boolean marker) {
        }

        final List<Entry> entries = new CopyOnWriteArrayList<>();

        @Override
        public void append(int partition, MemoryRecords batch, Consumer<ErrorCode> callback) {
            for (RecordBatch each : batch.batches()) {
                DefaultRecordBatch entry = (DefaultRecordBatch) each;
                for (Record record : entry.records()) {
                    entries.add(new Entry(copy(record.key()), record.value() == null ? null : copy(record.value()), entry.producerId(),
                        entry.isTransactional(), null));
                }
            }
            callback.accept(ErrorCode.NONE);
        }

        @Override
        public void appendTransactional(int partition, MemoryRecords records, Consumer<ErrorCode> callback) {
            append(partition, records, callback);
        }

        void marker(long producerId, boolean commit) {
            entries.add(new Entry(null, null, producerId, true, commit));
        }

        private static ByteBuffer copy(ByteBuffer buffer) {
            ByteBuffer copy = ByteBuffer.allocate(buffer.remaining());
            copy.put(buffer.duplicate()).flip();
            return copy;
        }

        @Override
        public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> consumer) {
            for (Entry entry : entries) {
                if (entry.marker() == null) {
                    consumer.accept(entry.key().duplicate(), entry.value() == null ? null : entry.value().duplicate());
                }
            }
        }

        @Override
        public void replayTransactional(int partition, TransactionalReplay replay) {
            // An entry's index is its offset.
            for (int offset = 0; offset < entries.size(); offset++) {
                Entry entry = entries.get(offset);
                if (entry.marker() != null) {
                    replay.marker(entry.producerId(), entry.marker());
                } else {
                    replay.record(entry.key().duplicate(), entry.value() == null ? null : entry.value().duplicate(), entry.producerId(),
                        entry.transactional(), offset);
                }
            }
        }

        /** Offset commit tombstones written for {@code group}, as "topic-partition". */
        List<String> offsetTombstones(String group) {
            List<String> tombstones = new ArrayList<>();
            for (Entry entry : entries) {
                if (entry.marker() == null && entry.value() == null) {
                    Reader reader = new Reader(entry.key().duplicate());
                    short version = reader.readShort();
                    if (version <= 1) {
                        OffsetCommitKey key = new OffsetCommitKey(reader, version);
                        if (key.group().equals(group)) {
                            tombstones.add(key.topic() + "-" + key.partition());
                        }
                    }
                }
            }
            return tombstones;
        }

        boolean hasGroupTombstone(String group) {
            for (Entry entry : entries) {
                if (entry.marker() == null && entry.value() == null) {
                    Reader reader = new Reader(entry.key().duplicate());
                    if (reader.readShort() == 2 && new GroupMetadataKey(reader, (short) 2).group().equals(group)) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    private final MockTime time = new MockTime();
    private final MemoryLog log = new MemoryLog();
    private GroupCoordinator coordinator;

    @BeforeEach
    void start() throws Exception {
        coordinator = newCoordinator();
    }

    @AfterEach
    void stop() {
        coordinator.close();
    }

    private GroupCoordinator newCoordinator() throws Exception {
        // One partition holds every group; the periodic pass is far away (tests run passes themselves).
        GroupCoordinator started = new GroupCoordinator(new GroupCoordinatorSettings(1, 1, 3_600_000, 0, 100, 4096, 1, RETENTION_MS,
            TimeUnit.DAYS.toMillis(365)), log, time);
        started.configureConsumerGroups(new ConsumerGroupSettings(1000, 3_600_000, 100, ConsumerGroupSettings.DEFAULT_ASSIGNORS),
            () -> TopicsView.of(1, List.of(new TopicsView.Topic(ORDERS_ID, "orders", 2), new TopicsView.Topic(PAYMENTS_ID, "payments", 1))));
        started.onPartitionsLed(Set.of(0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!started.isLoaded() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(started.isLoaded()).isTrue();
        return started;
    }

    /** A broker restart: a new coordinator rebuilds the partition from the log. */
    private void restart() throws Exception {
        coordinator.close();
        coordinator = newCoordinator();
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    private int expire() throws Exception {
        return get(coordinator.cleanupGroupMetadata());
    }

    private <T> T onShard(Function<GroupShard, T> read) throws Exception {
        GroupShard shard = coordinator.shard(0);
        return get(CompletableFuture.supplyAsync(() -> read.apply(shard), shard.executor()));
    }

    // ---------------------------------------------------------------- clients

    private void commit(String group, int generation, String memberId, String topic, int partition, long offset) throws Exception {
        commit(group, generation, memberId, topic, partition, offset, (short) 8, -1L);
    }

    private void commit(String group, int generation, String memberId, String topic, int partition, long offset, short version,
                        long retentionTimeMs) throws Exception {
        OffsetCommitRequestData request = new OffsetCommitRequestData().setGroupId(group).setGenerationIdOrMemberEpoch(generation)
            .setMemberId(memberId).setRetentionTimeMs(retentionTimeMs);
        request.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(topic)
            .setPartitions(new ArrayList<>(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(partition)
                .setCommittedOffset(offset).setCommittedMetadata("")))));
        List<GroupCoordinator.CommitResult> results = get(coordinator.commitOffsets(request, version));
        assertThat(results).extracting(GroupCoordinator.CommitResult::error).containsOnly(ErrorCode.NONE);
    }

    /** Committed offsets of a group as "topic-partition=offset", sorted. */
    private Map<String, Long> committed(String group) throws Exception {
        Map<String, Long> offsets = new TreeMap<>();
        get(coordinator.fetchOffsets(group, null)).offsets().forEach((topic, partitions) ->
            partitions.forEach((partition, offset) -> offsets.put(topic + "-" + partition, offset.offset())));
        return offsets;
    }

    private List<String> listedGroups() throws Exception {
        return get(coordinator.listGroups(List.of(), List.of())).stream().map(ListGroupsResponseData.ListedGroup::groupId).sorted().toList();
    }

    private String classicState(String group) throws Exception {
        return get(coordinator.describeGroup(group)).groupState();
    }

    private static byte[] subscription(String... topics) {
        return GroupStore.encode((short) 0, new ConsumerProtocolSubscription().setTopics(new ArrayList<>(List.of(topics))));
    }

    /** A classic member that joins (JoinGroup v3: no member id round trip), syncs as the only member and so leads. */
    private record Member(String group, String memberId, int generation) {
    }

    private Member joinAndSync(String group, String protocolType, byte[] metadata) throws Exception {
        JoinGroupRequestData join = new JoinGroupRequestData().setGroupId(group).setMemberId("").setProtocolType(protocolType)
            .setSessionTimeoutMs(3_600_000).setRebalanceTimeoutMs(60_000);
        join.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(metadata));
        JoinGroupResponseData joined = get(coordinator.joinGroup(join, (short) 3, "client", "/127.0.0.1"));
        assertThat(ErrorCode.forCode(joined.errorCode())).isEqualTo(ErrorCode.NONE);
        SyncGroupRequestData sync = new SyncGroupRequestData().setGroupId(group).setMemberId(joined.memberId())
            .setGenerationId(joined.generationId());
        sync.assignments().add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(joined.memberId()).setAssignment(new byte[0]));
        SyncGroupResponseData synced = get(coordinator.syncGroup(sync));
        assertThat(ErrorCode.forCode(synced.errorCode())).isEqualTo(ErrorCode.NONE);
        assertThat(classicState(group)).isEqualTo("Stable");
        return new Member(group, joined.memberId(), joined.generationId());
    }

    private void leave(Member member) throws Exception {
        assertThat(get(coordinator.leaveGroup(member.group(), List.<String[]>of(new String[] {member.memberId(), null}))))
            .containsExactly(ErrorCode.NONE);
    }

    // ---------------------------------------------------------------- simple groups

    @Test
    void standaloneCommitsExpireRetentionAfterTheirCommitAndThenTheGroupIsDeleted() throws Exception {
        commit("simple", -1, "", "orders", 0, 10);
        time.advance(HOUR_MS);
        commit("simple", -1, "", "orders", 1, 20);
        assertThat(listedGroups()).containsExactly("simple");

        time.advance(RETENTION_MS - HOUR_MS - 1);
        assertThat(expire()).isZero();
        assertThat(committed("simple")).containsOnlyKeys("orders-0", "orders-1");

        time.advance(1); // orders-0 is exactly retention old: expired (now - commit >= retention)
        assertThat(expire()).isEqualTo(1);
        assertThat(committed("simple")).containsOnlyKeys("orders-1");
        assertThat(log.offsetTombstones("simple")).containsExactly("orders-0");
        assertThat(listedGroups()).containsExactly("simple"); // it still has an offset

        time.advance(HOUR_MS);
        assertThat(expire()).isEqualTo(2); // orders-1 and the group
        assertThat(committed("simple")).isEmpty();
        assertThat(log.offsetTombstones("simple")).containsExactly("orders-0", "orders-1");
        assertThat(log.hasGroupTombstone("simple")).isTrue();
        assertThat(listedGroups()).isEmpty();
        assertThat(classicState("simple")).isEqualTo("Dead");
        assertThat(expire()).isZero();
    }

    @Test
    void aNewCommitRestartsTheRetentionOfItsPartition() throws Exception {
        commit("simple", -1, "", "orders", 0, 10);
        time.advance(RETENTION_MS - 1);
        commit("simple", -1, "", "orders", 0, 11);
        time.advance(RETENTION_MS - 1);
        assertThat(expire()).isZero();
        assertThat(committed("simple")).containsEntry("orders-0", 11L);
    }

    @Test
    void anExplicitRetentionTimeOfOffsetCommitV2ToV4WinsAndSurvivesARestart() throws Exception {
        commit("legacy", -1, "", "orders", 0, 10, (short) 2, HOUR_MS); // retention_time_ms: expires in an hour, not in 7 days
        commit("legacy", -1, "", "orders", 1, 20, (short) 2, -1L);    // -1: the broker's retention
        restart();
        time.advance(HOUR_MS - 1);
        assertThat(expire()).isZero();
        time.advance(1);
        assertThat(expire()).isEqualTo(1);
        assertThat(committed("legacy")).containsOnlyKeys("orders-1");
        time.advance(RETENTION_MS - HOUR_MS);
        assertThat(expire()).isEqualTo(2);
        assertThat(listedGroups()).isEmpty();
    }

    // ---------------------------------------------------------------- classic groups

    @Test
    void classicGroupOffsetsExpireRetentionAfterTheGroupBecameEmptyNotAfterTheCommit() throws Exception {
        Member member = joinAndSync("app", "consumer", subscription("orders"));
        commit("app", member.generation(), member.memberId(), "orders", 0, 42);

        time.advance(2 * RETENTION_MS); // members keep their subscribed offsets, however old
        assertThat(expire()).isZero();
        assertThat(committed("app")).containsOnlyKeys("orders-0");

        leave(member);
        assertThat(classicState("app")).isEqualTo("Empty");
        time.advance(RETENTION_MS - 1); // the commit is three retentions old, but the group has been empty for less than one
        assertThat(expire()).isZero();
        assertThat(committed("app")).containsOnlyKeys("orders-0");

        time.advance(1);
        assertThat(expire()).isEqualTo(2); // the offset, then the empty group without offsets
        assertThat(committed("app")).isEmpty();
        assertThat(log.offsetTombstones("app")).containsExactly("orders-0");
        assertThat(log.hasGroupTombstone("app")).isTrue();
        assertThat(classicState("app")).isEqualTo("Dead");
        assertThat(listedGroups()).isEmpty();
    }

    @Test
    void theEmptySinceTimestampComesBackFromTheLogAfterARestart() throws Exception {
        Member member = joinAndSync("app", "consumer", subscription("orders"));
        commit("app", member.generation(), member.memberId(), "orders", 0, 42);
        time.advance(2 * RETENTION_MS);
        leave(member);
        long emptySince = time.milliseconds();

        time.advance(RETENTION_MS / 2);
        restart();
        long loadedSince = onShard(shard -> shard.group("app").stateTimestampMs);
        assertThat(loadedSince).isEqualTo(emptySince);
        time.advance(RETENTION_MS / 2 - 1);
        assertThat(expire()).isZero();
        assertThat(committed("app")).containsOnlyKeys("orders-0");
        time.advance(1);
        assertThat(expire()).isEqualTo(2);
        assertThat(listedGroups()).isEmpty();
    }

    @Test
    void aStableConsumerProtocolGroupLosesOnlyOffsetsOfTopicsItNoLongerSubscribesTo() throws Exception {
        Member member = joinAndSync("app", "consumer", subscription("orders"));
        commit("app", member.generation(), member.memberId(), "orders", 0, 1);
        commit("app", member.generation(), member.memberId(), "payments", 0, 2);
        time.advance(RETENTION_MS - 1);
        assertThat(expire()).isZero();
        time.advance(1); // by commit timestamp, as for simple groups
        assertThat(expire()).isEqualTo(1);
        assertThat(committed("app")).containsOnlyKeys("orders-0");
        assertThat(log.offsetTombstones("app")).containsExactly("payments-0");
        assertThat(classicState("app")).isEqualTo("Stable");
        assertThat(listedGroups()).containsExactly("app");
    }

    @Test
    void aGroupWithMembersOfAnotherProtocolTypeKeepsEveryOffset() throws Exception {
        Member member = joinAndSync("workers", "connect", new byte[] {1, 2, 3});
        commit("workers", member.generation(), member.memberId(), "payments", 0, 5);
        time.advance(3 * RETENTION_MS);
        assertThat(expire()).isZero();
        assertThat(committed("workers")).containsOnlyKeys("payments-0");
        leave(member);
        time.advance(RETENTION_MS);
        assertThat(expire()).isEqualTo(2);
        assertThat(listedGroups()).isEmpty();
    }

    @Test
    void aRebalancingGroupKeepsEveryOffset() throws Exception {
        Member member = joinAndSync("app", "consumer", subscription("orders"));
        commit("app", member.generation(), member.memberId(), "payments", 0, 9); // not subscribed: would expire while Stable
        time.advance(RETENTION_MS);
        JoinGroupRequestData join = new JoinGroupRequestData().setGroupId("app").setMemberId("").setProtocolType("consumer")
            .setSessionTimeoutMs(3_600_000).setRebalanceTimeoutMs(60_000);
        join.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(subscription("orders")));
        CompletableFuture<JoinGroupResponseData> second = coordinator.joinGroup(join, (short) 3, "client", "/127.0.0.1");
        assertThat(classicState("app")).isEqualTo("PreparingRebalance"); // waits for the first member to rejoin
        assertThat(expire()).isZero();
        assertThat(committed("app")).containsOnlyKeys("payments-0");
        assertThat(second).isNotDone();
    }

    @Test
    void anEmptyClassicGroupWithoutOffsetsIsDeletedAtTheNextPass() throws Exception {
        Member member = joinAndSync("idle", "consumer", subscription("orders"));
        leave(member);
        assertThat(listedGroups()).containsExactly("idle");
        assertThat(expire()).isEqualTo(1);
        assertThat(log.hasGroupTombstone("idle")).isTrue();
        assertThat(listedGroups()).isEmpty();
    }

    // ---------------------------------------------------------------- transactional offsets

    @Test
    void pendingTransactionalOffsetsAreNeverExpiredAndKeepTheGroup() throws Exception {
        commit("txn-group", -1, "", "orders", 0, 1);
        commit("txn-group", -1, "", "orders", 1, 2);
        TxnOffsetCommitRequestData txn = new TxnOffsetCommitRequestData().setTransactionalId("tx").setGroupId("txn-group").setProducerId(7)
            .setProducerEpoch((short) 0).setGenerationIdOrMemberEpoch(-1).setMemberId("");
        txn.topics().add(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName("orders")
            .setPartitions(new ArrayList<>(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0)
                .setCommittedOffset(100).setCommittedMetadata("")))));
        assertThat(get(coordinator.commitTransactionalOffsets(txn))).extracting(GroupCoordinator.CommitResult::error).containsOnly(ErrorCode.NONE);

        time.advance(RETENTION_MS);
        assertThat(expire()).isEqualTo(1); // orders-1 only: orders-0 has a pending transactional commit, and the open transaction keeps the group
        assertThat(committed("txn-group")).containsOnlyKeys("orders-0");
        assertThat(log.hasGroupTombstone("txn-group")).isFalse();

        restart(); // the pending offset is rebuilt from the log, and still protects its partition
        assertThat(expire()).isZero();
        assertThat(committed("txn-group")).containsOnlyKeys("orders-0");

        log.marker(7, true);
        coordinator.onTransactionMarker(0, 7, true);
        assertThat(committed("txn-group")).containsEntry("orders-0", 100L);
        // The transactional commit carries its own commit timestamp (when TxnOffsetCommit was handled).
        assertThat(expire()).isEqualTo(2);
        assertThat(listedGroups()).isEmpty();
    }

    // ---------------------------------------------------------------- consumer groups (KIP-848)

    private ConsumerGroupHeartbeatResponseData heartbeat(ConsumerGroupHeartbeatRequestData request) throws Exception {
        ConsumerGroupHeartbeatResponseData response = get(coordinator.consumerGroupHeartbeat(request, (short) 1, "client", "/127.0.0.1"));
        assertThat(ErrorCode.forCode(response.errorCode())).isEqualTo(ErrorCode.NONE);
        return response;
    }

    @Test
    void aConsumerGroupExpiresUnsubscribedTopicsByCommitTimeAndIsDeletedOnceEmptyWithoutOffsets() throws Exception {
        String memberId = UUID.randomUUID().toString();
        ConsumerGroupHeartbeatResponseData joined = heartbeat(new ConsumerGroupHeartbeatRequestData().setGroupId("modern").setMemberId(memberId)
            .setMemberEpoch(0).setRebalanceTimeoutMs(60_000).setSubscribedTopicNames(List.of("orders")).setTopicPartitions(new ArrayList<>()));
        int epoch = joined.memberEpoch();
        commit("modern", epoch, memberId, "orders", 0, 7, (short) 9, -1L);
        commit("modern", epoch, memberId, "payments", 0, 8, (short) 9, -1L);

        time.advance(RETENTION_MS);
        assertThat(expire()).isEqualTo(1);
        assertThat(committed("modern")).containsOnlyKeys("orders-0");
        assertThat(log.offsetTombstones("modern")).containsExactly("payments-0");

        heartbeat(new ConsumerGroupHeartbeatRequestData().setGroupId("modern").setMemberId(memberId).setMemberEpoch(-1));
        assertThat(get(coordinator.consumerGroupDescribe("modern")).groupState()).isEqualTo("Empty");
        // Empty: the age counts from the commit (not from when the group emptied), so orders-0 goes at once, and the group with it.
        assertThat(expire()).isEqualTo(2); // orders-0 and the group (all of its records)
        assertThat(committed("modern")).isEmpty();
        assertThat(log.offsetTombstones("modern")).containsExactly("payments-0", "orders-0");
        assertThat(ErrorCode.forCode(get(coordinator.consumerGroupDescribe("modern")).errorCode())).isEqualTo(ErrorCode.GROUP_ID_NOT_FOUND);
        assertThat(listedGroups()).isEmpty();

        restart();
        assertThat(listedGroups()).isEmpty();
        assertThat(committed("modern")).isEmpty();
    }

    @Test
    void anEmptyConsumerGroupWithoutOffsetsIsDeletedAtTheNextPass() throws Exception {
        String memberId = UUID.randomUUID().toString();
        heartbeat(new ConsumerGroupHeartbeatRequestData().setGroupId("modern").setMemberId(memberId).setMemberEpoch(0)
            .setRebalanceTimeoutMs(60_000).setSubscribedTopicNames(List.of("orders")).setTopicPartitions(new ArrayList<>()));
        assertThat(expire()).isZero(); // it has a member
        heartbeat(new ConsumerGroupHeartbeatRequestData().setGroupId("modern").setMemberId(memberId).setMemberEpoch(-1));
        assertThat(listedGroups()).containsExactly("modern");
        assertThat(expire()).isEqualTo(1);
        assertThat(listedGroups()).isEmpty();
        restart();
        assertThat(listedGroups()).isEmpty();
    }

    // ---------------------------------------------------------------- restart

    /** Everything the shard holds about groups and offsets, as text. */
    private String state() throws Exception {
        return onShard(shard -> {
            StringBuilder state = new StringBuilder();
            for (ClassicGroup group : shard.allGroups()) {
                state.append("group ").append(group.groupId).append(' ').append(group.state).append(" type=").append(group.protocolType)
                    .append(" generation=").append(group.generationId).append(" members=").append(new TreeMap<>(group.members).keySet())
                    .append(group.protocolType == null ? "" : " since=" + group.stateTimestampMs).append('\n');
            }
            for (var group : shard.consumerGroups.groups()) {
                state.append("consumer group ").append(group.groupId()).append(" epoch=").append(group.groupEpoch()).append('\n');
            }
            new TreeMap<>(shard.offsets).forEach((group, offsets) -> new TreeMap<GroupShard.TopicPartitionKey, OffsetAndMetadata>(
                java.util.Comparator.comparing(GroupShard.TopicPartitionKey::topic).thenComparingInt(GroupShard.TopicPartitionKey::partition)) {{
                    putAll(offsets);
                }}.forEach((key, offset) -> state.append("offset ").append(group).append(' ').append(key.topic()).append('-')
                .append(key.partition()).append('=').append(offset).append('\n')));
            return state.toString();
        });
    }

    @Test
    void aRestartRebuildsTheSameStateWithoutResurrectingExpiredOffsets() throws Exception {
        commit("simple", -1, "", "orders", 0, 1);
        commit("simple", -1, "", "orders", 1, 2);
        Member member = joinAndSync("app", "consumer", subscription("orders"));
        commit("app", member.generation(), member.memberId(), "orders", 0, 3);
        commit("app", member.generation(), member.memberId(), "payments", 0, 4);
        leave(member);
        Member other = joinAndSync("kept", "consumer", subscription("orders"));
        commit("kept", other.generation(), other.memberId(), "orders", 1, 5);
        time.advance(HOUR_MS);
        commit("simple", -1, "", "orders", 1, 6);
        commit("gone", -1, "", "payments", 0, 7);

        time.advance(RETENTION_MS - HOUR_MS);
        assertThat(expire()).isEqualTo(4); // simple orders-0, app's two offsets and app itself
        String before = state();
        assertThat(before).contains("offset simple orders-1=", "offset kept orders-1=", "offset gone payments-0=", "group kept STABLE")
            .doesNotContain("offset simple orders-0", "offset app ", "group app ");

        restart();
        assertThat(state()).isEqualTo(before);
        assertThat(committed("app")).isEmpty();
        assertThat(committed("simple")).containsOnlyKeys("orders-1");

        time.advance(HOUR_MS);
        assertThat(expire()).isEqualTo(4); // simple orders-1 and the group, gone payments-0 and the group
        String after = state();
        restart();
        assertThat(state()).isEqualTo(after);
        assertThat(listedGroups()).containsExactly("kept");
    }

    @Test
    void simpleGroupsExistAfterARestartAsBefore() throws Exception {
        commit("simple", -1, "", "orders", 0, 1);
        String before = state();
        assertThat(listedGroups()).containsExactly("simple");
        restart();
        assertThat(state()).isEqualTo(before);
        assertThat(listedGroups()).containsExactly("simple");
    }
}
