package io.strata.coordinator.group;

import io.strata.common.BackgroundErrors;
import io.strata.common.BackgroundExecutors;
import io.strata.common.Time;
import io.strata.coordinator.group.consumer.ClassicGroups;
import io.strata.coordinator.group.consumer.ConsumerGroupManager;
import io.strata.coordinator.group.consumer.ConsumerGroupSettings;
import io.strata.coordinator.group.consumer.CoordinatorTimer;
import io.strata.coordinator.group.consumer.ExecutorCoordinatorTimer;
import io.strata.coordinator.group.consumer.GroupRecordLog;
import io.strata.coordinator.group.consumer.TopicsView;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ConsumerGroupDescribeResponseData;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import io.strata.protocol.message.DescribeGroupsResponseData;
import io.strata.protocol.message.JoinGroupRequestData;
import io.strata.protocol.message.JoinGroupResponseData;
import io.strata.protocol.message.ListGroupsResponseData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.SyncGroupRequestData;
import io.strata.protocol.message.SyncGroupResponseData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The group coordinator: groups and their committed offsets, sharded by
 * {@code __consumer_offsets} partition ({@code abs(hash(groupId)) % partitions}, as Kafka
 * places them). Each shard is a single-threaded state machine; shards are spread over a few
 * threads and every request for a group runs on its shard's thread. A shard answers
 * COORDINATOR_LOAD_IN_PROGRESS until its partition has been replayed, NOT_COORDINATOR if this
 * node does not host the partition.
 *
 * <p>Thread-safe: the public methods may be called from any thread.
 */
public final class GroupCoordinator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

    private final GroupCoordinatorSettings settings;
    private final Time time;
    private final GroupStore store;
    private final ScheduledExecutorService[] threads;
    private final Function<ScheduledExecutorService, CoordinatorTimer> timers;
    private final BackgroundErrors backgroundErrors;
    private final Map<Integer, GroupShard> shards = new ConcurrentHashMap<>();
    private volatile ConsumerGroupSettings consumerGroupSettings = ConsumerGroupSettings.DEFAULT;
    private volatile Supplier<TopicsView> topics = () -> TopicsView.EMPTY;

    public GroupCoordinator(GroupCoordinatorSettings settings, CoordinatorLog log, Time time) {
        this(settings, log, time, ExecutorCoordinatorTimer::new, new BackgroundErrors());
    }

    /**
     * @param timers makes each shard's timer (member sessions, rebalance timeouts of consumer
     *               groups, the offset expiration pass) from the shard's thread; production passes
     *               {@link ExecutorCoordinatorTimer}, tests a timer on their mock clock
     * @param backgroundErrors where failures of the expiration pass and other shard-thread work are counted
     */
    public GroupCoordinator(GroupCoordinatorSettings settings, CoordinatorLog log, Time time,
                            Function<ScheduledExecutorService, CoordinatorTimer> timers, BackgroundErrors backgroundErrors) {
        this.settings = settings;
        this.time = time;
        this.store = new GroupStore(log, time);
        this.timers = timers;
        this.backgroundErrors = backgroundErrors;
        this.threads = new ScheduledExecutorService[Math.max(1, settings.threads())];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = BackgroundExecutors.singleThreadScheduler("strata-group-coordinator-" + i, GroupShard.SHARD_THREAD_TASK,
                backgroundErrors, LOG);
        }
    }

    /** The {@code __consumer_offsets} partition that stores {@code groupId}: Kafka's placement ({@link io.strata.coordinator.CoordinatorPlacement}). */
    public int partitionFor(String groupId) {
        return io.strata.coordinator.CoordinatorPlacement.partitionFor(groupId, settings.offsetsTopicPartitions());
    }

    public int offsetsTopicPartitions() {
        return settings.offsetsTopicPartitions();
    }

    /**
     * Settings of consumer groups (KIP-848) and the cluster's topics they assign from. Called
     * once, before any partition is led.
     */
    public void configureConsumerGroups(ConsumerGroupSettings consumerSettings, Supplier<TopicsView> clusterTopics) {
        this.consumerGroupSettings = consumerSettings;
        this.topics = clusterTopics;
    }

    private ConsumerGroupManager consumerGroupManager(int partition, GroupShard shard) {
        GroupRecordLog recordLog = new GroupRecordLog() {
            @Override
            public void append(List<byte[][]> records, java.util.function.Consumer<ErrorCode> done) {
                store.write(shard, records, done);
            }

            @Override
            public void replay(java.util.function.BiConsumer<java.nio.ByteBuffer, java.nio.ByteBuffer> records) {
                store.replayRaw(shard, records);
            }
        };
        ClassicGroups classicGroups = new ClassicGroups() {
            @Override
            public Boolean isEmpty(String groupId) {
                ClassicGroup group = shard.group(groupId);
                return group == null ? null : group.members.isEmpty() && group.pendingMembers.isEmpty();
            }

            @Override
            public void remove(String groupId) {
                shard.groups.remove(groupId);
            }
        };
        return new ConsumerGroupManager(partition, consumerGroupSettings, time, shard.timer(), recordLog,
            () -> topics.get(), classicGroups);
    }

    /**
     * The partitions this node leads now (the whole set, after every metadata change): starts
     * coordinating the new ones (each replayed in the background) and unloads those it no longer
     * leads, as Kafka's coordinator resigns, so that their groups answer NOT_COORDINATOR here and
     * the new leader owns them.
     */
    public void onPartitionsLed(Set<Integer> partitions) {
        for (Map.Entry<Integer, GroupShard> entry : shards.entrySet()) {
            if (!partitions.contains(entry.getKey()) && shards.remove(entry.getKey(), entry.getValue())) {
                GroupShard resigned = entry.getValue();
                resigned.executor().execute(resigned::unload);
                LOG.info("Unloading __consumer_offsets-{}: this node no longer leads it", entry.getKey());
            }
        }
        for (int partition : partitions) {
            shards.computeIfAbsent(partition, p -> {
                ScheduledExecutorService executor = threads[p % threads.length];
                GroupShard shard = new GroupShard(p, settings, executor, timers.apply(executor), backgroundErrors, store, time);
                shard.consumerGroups = consumerGroupManager(p, shard);
                executor.execute(() -> {
                    long start = System.nanoTime();
                    store.load(shard);
                    LOG.debug("Loaded __consumer_offsets-{} in {} ms: {} group(s)", p, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                        shard.groups.size());
                });
                return shard;
            });
        }
    }

    /** The shard of a led partition, or null (tests read its state on its thread). */
    GroupShard shard(int partition) {
        return shards.get(partition);
    }

    /** Whether every shard this node coordinates has been loaded. */
    public boolean isLoaded() {
        return shards.values().stream().allMatch(shard -> shard.loaded);
    }

    /** Runs {@code operation} on the group's shard, or answers with {@code notCoordinator} if there is none. */
    private <T> CompletableFuture<T> onShard(String groupId, java.util.function.Function<GroupShard, T> operation, Supplier<T> notCoordinator) {
        GroupShard shard = shards.get(partitionFor(groupId));
        if (shard == null) {
            return CompletableFuture.completedFuture(notCoordinator.get());
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        shard.executor().execute(() -> {
            try {
                result.complete(operation.apply(shard));
            } catch (Throwable e) {
                LOG.error("Group coordinator operation on group {} failed", groupId, e);
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Like {@link #onShard} for operations that answer later through a callback. */
    private <T> CompletableFuture<T> onShardAsync(String groupId, java.util.function.BiConsumer<GroupShard, CompletableFuture<T>> operation,
                                                  Supplier<T> notCoordinator) {
        GroupShard shard = shards.get(partitionFor(groupId));
        if (shard == null) {
            return CompletableFuture.completedFuture(notCoordinator.get());
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        shard.executor().execute(() -> {
            try {
                operation.accept(shard, result);
            } catch (Throwable e) {
                LOG.error("Group coordinator operation on group {} failed", groupId, e);
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    public CompletableFuture<JoinGroupResponseData> joinGroup(JoinGroupRequestData request, short version, String clientId, String clientHost) {
        // A group id used by consumer-protocol members cannot be joined with the classic protocol (no online migration).
        return onShardAsync(request.groupId(), (shard, result) -> shard.consumerGroups.yieldToClassicGroup(request.groupId(), error -> {
            if (error == ErrorCode.NONE) {
                shard.joinGroup(request, version, clientId, clientHost, result::complete);
            } else {
                result.complete(new JoinGroupResponseData().setErrorCode(error.code()).setMemberId(request.memberId()).setGenerationId(-1)
                    .setProtocolName(null).setLeader(""));
            }
        }), () -> new JoinGroupResponseData().setErrorCode(ErrorCode.NOT_COORDINATOR.code()).setMemberId(request.memberId()).setGenerationId(-1));
    }

    public CompletableFuture<SyncGroupResponseData> syncGroup(SyncGroupRequestData request) {
        return onShardAsync(request.groupId(), (shard, result) -> shard.syncGroup(request, result::complete),
            () -> new SyncGroupResponseData().setErrorCode(ErrorCode.NOT_COORDINATOR.code()));
    }

    public CompletableFuture<ErrorCode> heartbeat(String groupId, String memberId, String groupInstanceId, int generationId) {
        return onShard(groupId, shard -> shard.heartbeat(groupId, memberId, groupInstanceId, generationId), () -> ErrorCode.NOT_COORDINATOR);
    }

    /** Each identity is {memberId, groupInstanceId}. */
    public CompletableFuture<List<ErrorCode>> leaveGroup(String groupId, List<String[]> identities) {
        return onShard(groupId, shard -> shard.leaveGroup(groupId, identities),
            () -> identities.stream().map(identity -> ErrorCode.NOT_COORDINATOR).toList());
    }

    /** One commit: topic, partition and the error it got. */
    public record CommitResult(String topic, int partition, ErrorCode error) {
    }

    public CompletableFuture<List<CommitResult>> commitOffsets(OffsetCommitRequestData request) {
        return commitOffsets(request, Short.MAX_VALUE);
    }

    /** OffsetCommit at {@code version} (consumer-protocol members must use v9+). */
    public CompletableFuture<List<CommitResult>> commitOffsets(OffsetCommitRequestData request, short version) {
        List<CommitResult> notCoordinator = new ArrayList<>();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic topic : request.topics()) {
            for (OffsetCommitRequestData.OffsetCommitRequestPartition partition : topic.partitions()) {
                notCoordinator.add(new CommitResult(topic.name(), partition.partitionIndex(), ErrorCode.NOT_COORDINATOR));
            }
        }
        return onShardAsync(request.groupId(), (shard, result) -> commitOnShard(shard, request, version, result), () -> notCoordinator);
    }

    private void commitOnShard(GroupShard shard, OffsetCommitRequestData request, short version, CompletableFuture<List<CommitResult>> result) {
        boolean consumerGroup = request.groupId() != null && shard.loaded && shard.consumerGroups.has(request.groupId());
        ErrorCode groupError = request.groupId() == null || request.groupId().isEmpty() ? ErrorCode.INVALID_GROUP_ID
            : consumerGroup ? null // validated per partition below (KIP-1251)
            : shard.validateCommit(request.groupId(), request.generationIdOrMemberEpoch(), request.memberId(), request.groupInstanceId());
        if (groupError == ErrorCode.ILLEGAL_GENERATION && version >= 9 && shard.group(request.groupId()) == null) {
            groupError = ErrorCode.GROUP_ID_NOT_FOUND; // Kafka's answer from v9 to a generation of a group that does not exist
        }
        List<GroupShard.PartitionCommit> commits = new ArrayList<>();
        List<byte[][]> records = new ArrayList<>();
        long now = time.milliseconds();
        // OffsetCommit v2-v4 may carry a retention time (-1: the broker's offsets.retention.minutes); Kafka stores it as an expire timestamp.
        long expireTimestampMs = request.retentionTimeMs() == -1L ? OffsetAndMetadata.NO_EXPIRE_TIMESTAMP : now + request.retentionTimeMs();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic topic : request.topics()) {
            for (OffsetCommitRequestData.OffsetCommitRequestPartition partition : topic.partitions()) {
                ErrorCode error = consumerGroup ? consumerGroupCommitError(shard, request, version, topic.name(), partition.partitionIndex()) : groupError;
                String metadata = partition.committedMetadata() == null ? "" : partition.committedMetadata();
                if (error == null && metadata.length() > settings.offsetMetadataMaxBytes()) {
                    error = ErrorCode.OFFSET_METADATA_TOO_LARGE;
                }
                // The value with an expire timestamp (version 1) has no leader epoch: memory keeps what the log says.
                OffsetAndMetadata offset = new OffsetAndMetadata(partition.committedOffset(),
                    expireTimestampMs == OffsetAndMetadata.NO_EXPIRE_TIMESTAMP ? partition.committedLeaderEpoch() : -1, metadata, now, expireTimestampMs);
                commits.add(new GroupShard.PartitionCommit(topic.name(), partition.partitionIndex(), offset, error == null ? ErrorCode.NONE : error));
                if (error == null) {
                    records.add(new byte[][] {GroupStore.offsetKey(request.groupId(), topic.name(), partition.partitionIndex()),
                        GroupStore.offsetValue(offset)});
                }
            }
        }
        if (records.isEmpty()) {
            result.complete(commits.stream().map(c -> new CommitResult(c.topic(), c.partition(), c.error())).toList());
            return;
        }
        store.write(shard, records, writeError -> {
            if (writeError == ErrorCode.NONE) {
                shard.applyCommittedOffsets(request.groupId(), commits);
            }
            ErrorCode mapped = mapWriteError(writeError);
            result.complete(commits.stream().map(c -> new CommitResult(c.topic(), c.partition(),
                c.error() == ErrorCode.NONE ? mapped : c.error())).toList());
        });
    }

    /** The error of committing one partition to a consumer group (member epoch instead of generation), or null. */
    private static ErrorCode consumerGroupCommitError(GroupShard shard, OffsetCommitRequestData request, short version, String topic, int partition) {
        ErrorCode error = shard.consumerGroups.validateOffsetCommit(request.groupId(), request.memberId(), request.generationIdOrMemberEpoch(),
            version, false, topic, partition);
        return error == ErrorCode.NONE ? null : error;
    }

    /** Kafka's mapping of internal-topic write errors to what group clients understand. */
    static ErrorCode mapWriteError(ErrorCode error) {
        return switch (error) {
            case NONE -> ErrorCode.NONE;
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT -> ErrorCode.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> ErrorCode.NOT_COORDINATOR;
            case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE -> ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
            default -> ErrorCode.UNKNOWN_SERVER_ERROR;
        };
    }

    /** Committed offsets of a group: all of them ({@code requested} null) or the requested partitions. */
    public record FetchedOffsets(ErrorCode error, Map<String, Map<Integer, OffsetAndMetadata>> offsets) {
    }

    public CompletableFuture<FetchedOffsets> fetchOffsets(String groupId, Map<String, List<Integer>> requested) {
        return fetchOffsets(groupId, requested, null, -1);
    }

    /**
     * OffsetFetch (v9+ carries the member id and epoch of a consumer-protocol member, which must
     * be current: UNKNOWN_MEMBER_ID / STALE_MEMBER_EPOCH otherwise).
     */
    public CompletableFuture<FetchedOffsets> fetchOffsets(String groupId, Map<String, List<Integer>> requested, String memberId, int memberEpoch) {
        return onShard(groupId, shard -> {
            if (!shard.loaded) {
                return new FetchedOffsets(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, Map.of());
            }
            ErrorCode memberError = shard.consumerGroups.validateOffsetFetch(groupId, memberId, memberEpoch);
            if (memberError != ErrorCode.NONE) {
                return new FetchedOffsets(memberError, Map.of());
            }
            Map<String, Map<Integer, OffsetAndMetadata>> result = new LinkedHashMap<>();
            Map<GroupShard.TopicPartitionKey, OffsetAndMetadata> committed = shard.committedOffsets(groupId);
            if (requested == null) {
                for (Map.Entry<GroupShard.TopicPartitionKey, OffsetAndMetadata> entry : committed.entrySet()) {
                    result.computeIfAbsent(entry.getKey().topic(), t -> new LinkedHashMap<>()).put(entry.getKey().partition(), entry.getValue());
                }
            } else {
                for (Map.Entry<String, List<Integer>> topic : requested.entrySet()) {
                    Map<Integer, OffsetAndMetadata> partitions = result.computeIfAbsent(topic.getKey(), t -> new LinkedHashMap<>());
                    for (int partition : topic.getValue()) {
                        partitions.put(partition, committed.get(new GroupShard.TopicPartitionKey(topic.getKey(), partition)));
                    }
                }
            }
            return new FetchedOffsets(ErrorCode.NONE, result);
        }, () -> new FetchedOffsets(ErrorCode.NOT_COORDINATOR, Map.of()));
    }

    public CompletableFuture<DescribeGroupsResponseData.DescribedGroup> describeGroup(String groupId) {
        return onShard(groupId, shard -> shard.loaded && shard.consumerGroups.has(groupId)
            // Kafka's DescribeGroups does not describe consumer groups (admin clients use ConsumerGroupDescribe).
            ? new DescribeGroupsResponseData.DescribedGroup().setGroupId(groupId).setErrorCode(ErrorCode.GROUP_ID_NOT_FOUND.code())
                .setErrorMessage("Group " + groupId + " is not a classic group.").setGroupState("Dead").setProtocolType("").setProtocolData("")
                .setAuthorizedOperations(Integer.MIN_VALUE)
            : shard.describe(groupId), () -> new DescribeGroupsResponseData.DescribedGroup().setGroupId(groupId)
            .setErrorCode(ErrorCode.NOT_COORDINATOR.code()).setGroupState("").setProtocolType("").setProtocolData(""));
    }

    /** Every group this node coordinates, filtered by state and type names (empty filters match all). */
    public CompletableFuture<List<ListGroupsResponseData.ListedGroup>> listGroups(List<String> states, List<String> types) {
        List<CompletableFuture<List<ListGroupsResponseData.ListedGroup>>> perShard = new ArrayList<>();
        for (GroupShard shard : shards.values()) {
            CompletableFuture<List<ListGroupsResponseData.ListedGroup>> future = new CompletableFuture<>();
            shard.executor().execute(() -> {
                List<ListGroupsResponseData.ListedGroup> listed = new ArrayList<>();
                for (ClassicGroup group : shard.allGroups()) {
                    String state = group.state.displayName;
                    if (!states.isEmpty() && states.stream().noneMatch(s -> s.equalsIgnoreCase(state))) {
                        continue;
                    }
                    if (!types.isEmpty() && types.stream().noneMatch(t -> t.equalsIgnoreCase("classic")) || shard.consumerGroups.has(group.groupId)) {
                        continue;
                    }
                    listed.add(new ListGroupsResponseData.ListedGroup().setGroupId(group.groupId)
                        .setProtocolType(group.protocolType == null ? "" : group.protocolType).setGroupState(state).setGroupType("classic"));
                }
                if (types.isEmpty() || types.stream().anyMatch(t -> t.equalsIgnoreCase("consumer"))) {
                    listed.addAll(shard.consumerGroups.list(states));
                }
                future.complete(listed);
            });
            perShard.add(future);
        }
        return CompletableFuture.allOf(perShard.toArray(new CompletableFuture[0])).thenApply(done -> {
            List<ListGroupsResponseData.ListedGroup> all = new ArrayList<>();
            perShard.forEach(future -> all.addAll(future.join()));
            return all;
        });
    }

    public CompletableFuture<ErrorCode> deleteGroup(String groupId) {
        return onShardAsync(groupId, (shard, result) -> {
            if (shard.loaded && shard.consumerGroups.has(groupId)) {
                deleteConsumerGroup(shard, groupId, result);
                return;
            }
            ErrorCode error = shard.canDelete(groupId);
            if (error != null) {
                result.complete(error);
                return;
            }
            List<byte[][]> tombstones = new ArrayList<>();
            for (GroupShard.TopicPartitionKey key : shard.committedOffsets(groupId).keySet()) {
                tombstones.add(new byte[][] {GroupStore.offsetKey(groupId, key.topic(), key.partition()), null});
            }
            tombstones.add(new byte[][] {GroupStore.groupKey(groupId), null});
            store.write(shard, tombstones, writeError -> {
                if (writeError == ErrorCode.NONE) {
                    shard.removeGroup(groupId);
                }
                result.complete(mapWriteError(writeError));
            });
        }, () -> ErrorCode.NOT_COORDINATOR);
    }

    private static void deleteConsumerGroup(GroupShard shard, String groupId, CompletableFuture<ErrorCode> result) {
        ErrorCode error = shard.consumerGroups.validateDelete(groupId);
        if (error != ErrorCode.NONE) {
            result.complete(error);
            return;
        }
        List<byte[][]> tombstones = new ArrayList<>();
        for (GroupShard.TopicPartitionKey key : shard.committedOffsets(groupId).keySet()) {
            tombstones.add(new byte[][] {GroupStore.offsetKey(groupId, key.topic(), key.partition()), null});
        }
        shard.consumerGroups.delete(groupId, tombstones, writeError -> {
            if (writeError == ErrorCode.NONE) {
                shard.removeGroup(groupId);
            }
            result.complete(writeError);
        });
    }

    /** OffsetDelete: removes committed offsets of partitions the group no longer consumes. */
    public CompletableFuture<Map<String, Map<Integer, ErrorCode>>> deleteOffsets(String groupId, Map<String, List<Integer>> partitions) {
        return onShardAsync(groupId, (shard, result) -> {
            Map<String, Map<Integer, ErrorCode>> errors = new LinkedHashMap<>();
            ClassicGroup group = shard.group(groupId);
            if (!shard.loaded || (group == null && !shard.offsetGroups().contains(groupId) && !shard.consumerGroups.has(groupId))) {
                ErrorCode error = !shard.loaded ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.GROUP_ID_NOT_FOUND;
                result.complete(Map.of("", Map.of(-1, error)));
                return;
            }
            List<byte[][]> tombstones = new ArrayList<>();
            List<GroupShard.TopicPartitionKey> deleted = new ArrayList<>();
            for (Map.Entry<String, List<Integer>> topic : partitions.entrySet()) {
                for (int partition : topic.getValue()) {
                    boolean subscribed = group != null && group.is(ClassicGroupState.STABLE) && isSubscribed(group, topic.getKey())
                        || shard.consumerGroups.has(groupId) && shard.consumerGroups.group(groupId).isSubscribedTo(topic.getKey());
                    ErrorCode error = subscribed ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE;
                    errors.computeIfAbsent(topic.getKey(), t -> new LinkedHashMap<>()).put(partition, error);
                    if (!subscribed) {
                        tombstones.add(new byte[][] {GroupStore.offsetKey(groupId, topic.getKey(), partition), null});
                        deleted.add(new GroupShard.TopicPartitionKey(topic.getKey(), partition));
                    }
                }
            }
            if (tombstones.isEmpty()) {
                result.complete(errors);
                return;
            }
            store.write(shard, tombstones, writeError -> {
                if (writeError == ErrorCode.NONE) {
                    deleted.forEach(key -> shard.loadOffset(groupId, key, null));
                }
                result.complete(errors);
            });
        }, () -> Map.of("", Map.of(-1, ErrorCode.NOT_COORDINATOR)));
    }

    /** Whether a stable consumer group's members subscribe to {@code topic} (parsed from the consumer protocol metadata). */
    private static boolean isSubscribed(ClassicGroup group, String topic) {
        if (!"consumer".equals(group.protocolType) || group.protocolName == null) {
            return true; // unknown protocol: assume subscribed, as Kafka does
        }
        for (ClassicGroupMember member : group.members.values()) {
            byte[] metadata = member.metadata(group.protocolName);
            if (metadata != null && ConsumerProtocol.subscribedTopics(metadata).contains(topic)) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- transactional offsets (EOS)

    /** TxnOffsetCommit: offsets written inside the producer's transaction, visible once it commits. */
    public CompletableFuture<List<CommitResult>> commitTransactionalOffsets(io.strata.protocol.message.TxnOffsetCommitRequestData request) {
        List<CommitResult> notCoordinator = new ArrayList<>();
        for (var topic : request.topics()) {
            for (var partition : topic.partitions()) {
                notCoordinator.add(new CommitResult(topic.name(), partition.partitionIndex(), ErrorCode.NOT_COORDINATOR));
            }
        }
        return onShardAsync(request.groupId(), (shard, result) -> {
            ErrorCode groupError = !shard.loaded ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : null;
            if (groupError == null && request.generationIdOrMemberEpoch() >= 0) {
                groupError = shard.validateCommit(request.groupId(), request.generationIdOrMemberEpoch(), request.memberId(), request.groupInstanceId());
            }
            List<GroupShard.PartitionCommit> commits = new ArrayList<>();
            List<byte[][]> records = new ArrayList<>();
            long now = time.milliseconds();
            for (var topic : request.topics()) {
                for (var partition : topic.partitions()) {
                    ErrorCode error = groupError;
                    String metadata = partition.committedMetadata() == null ? "" : partition.committedMetadata();
                    if (error == null && metadata.length() > settings.offsetMetadataMaxBytes()) {
                        error = ErrorCode.OFFSET_METADATA_TOO_LARGE;
                    }
                    OffsetAndMetadata offset = new OffsetAndMetadata(partition.committedOffset(), partition.committedLeaderEpoch(), metadata, now);
                    commits.add(new GroupShard.PartitionCommit(topic.name(), partition.partitionIndex(), offset, error == null ? ErrorCode.NONE : error));
                    if (error == null) {
                        records.add(new byte[][] {GroupStore.offsetKey(request.groupId(), topic.name(), partition.partitionIndex()),
                            GroupStore.offsetValue(offset)});
                    }
                }
            }
            if (records.isEmpty()) {
                result.complete(commits.stream().map(c -> new CommitResult(c.topic(), c.partition(), c.error())).toList());
                return;
            }
            store.writeTransactional(shard, records, request.producerId(), request.producerEpoch(), writeError -> {
                if (writeError == ErrorCode.NONE) {
                    for (GroupShard.PartitionCommit commit : commits) {
                        if (commit.error() == ErrorCode.NONE) {
                            shard.addPendingTransactionalOffset(request.producerId(), request.groupId(),
                                new GroupShard.TopicPartitionKey(commit.topic(), commit.partition()), commit.offset());
                        }
                    }
                }
                ErrorCode mapped = writeError == ErrorCode.INVALID_PRODUCER_EPOCH ? ErrorCode.PRODUCER_FENCED : mapWriteError(writeError);
                result.complete(commits.stream().map(c -> new CommitResult(c.topic(), c.partition(),
                    c.error() == ErrorCode.NONE ? mapped : c.error())).toList());
            });
        }, () -> notCoordinator);
    }

    /** A transaction marker was written to {@code __consumer_offsets-partition}: publish or drop the producer's pending offsets. */
    public void onTransactionMarker(int partition, long producerId, boolean commit) {
        GroupShard shard = shards.get(partition);
        if (shard != null) {
            shard.executor().execute(() -> shard.completeTransactionalOffsets(producerId, commit));
        }
    }

    /** Whether a group has offsets waiting for a transaction to complete (OffsetFetch requireStable). */
    public CompletableFuture<Boolean> hasPendingTransactionalOffsets(String groupId) {
        return onShard(groupId, shard -> shard.hasPendingTransactionalOffset(groupId, null), () -> false);
    }

    // ---------------------------------------------------------------- consumer groups (KIP-848)

    public CompletableFuture<ConsumerGroupHeartbeatResponseData> consumerGroupHeartbeat(ConsumerGroupHeartbeatRequestData request, short version,
                                                                                       String clientId, String clientHost) {
        return onShardAsync(request.groupId(), (shard, result) -> shard.consumerGroups.heartbeat(request, version, clientId, clientHost,
            result::complete), () -> new ConsumerGroupHeartbeatResponseData().setErrorCode(ErrorCode.NOT_COORDINATOR.code()));
    }

    public CompletableFuture<ConsumerGroupDescribeResponseData.DescribedGroup> consumerGroupDescribe(String groupId) {
        return onShard(groupId, shard -> shard.consumerGroups.describe(groupId), () -> new ConsumerGroupDescribeResponseData.DescribedGroup()
            .setGroupId(groupId).setErrorCode(ErrorCode.NOT_COORDINATOR.code()));
    }

    // ---------------------------------------------------------------- offset expiration

    /**
     * Runs one offset expiration pass on every shard now (each shard also runs one every
     * {@code offsets.retention.check.interval.ms}); completes with the number of offsets and
     * groups removed once their tombstones are written. For tests and tools.
     */
    CompletableFuture<Integer> cleanupGroupMetadata() {
        List<CompletableFuture<Integer>> perShard = new ArrayList<>();
        for (GroupShard shard : shards.values()) {
            CompletableFuture<Integer> future = new CompletableFuture<>();
            shard.executor().execute(() -> {
                try {
                    shard.cleanupGroupMetadata(future::complete);
                } catch (RuntimeException e) {
                    future.completeExceptionally(e);
                }
            });
            perShard.add(future);
        }
        return CompletableFuture.allOf(perShard.toArray(new CompletableFuture[0]))
            .thenApply(done -> perShard.stream().mapToInt(CompletableFuture::join).sum());
    }

    // ---------------------------------------------------------------- metrics (read-only)

    /**
     * Statistics of every group this node coordinates (state, members, rebalances, and the lag
     * of each committed partition behind {@code endOffsets}: topic, partition to the partition's
     * end, negative if unknown). Computed on each shard's thread from the state it holds, with
     * no log reads: one task per shard.
     */
    public CompletableFuture<List<GroupStatistics>> groupStatistics(java.util.function.ToLongBiFunction<String, Integer> endOffsets) {
        List<CompletableFuture<List<GroupStatistics>>> perShard = new ArrayList<>();
        for (GroupShard shard : shards.values()) {
            CompletableFuture<List<GroupStatistics>> future = new CompletableFuture<>();
            try {
                shard.executor().execute(() -> {
                    try {
                        future.complete(GroupStatistics.of(shard, endOffsets));
                    } catch (RuntimeException e) {
                        future.completeExceptionally(e);
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                future.complete(List.of());
            }
            perShard.add(future);
        }
        return CompletableFuture.allOf(perShard.toArray(new CompletableFuture[0])).thenApply(done -> {
            List<GroupStatistics> all = new ArrayList<>();
            perShard.forEach(future -> all.addAll(future.join()));
            return all;
        });
    }

    @Override
    public void close() {
        for (ScheduledExecutorService thread : threads) {
            thread.shutdownNow();
        }
    }

}
