package io.strata.coordinator.group;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.coordinator.group.consumer.ConsumerGroupManager;
import io.strata.coordinator.group.consumer.CoordinatorTimer;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DescribeGroupsResponseData;
import io.strata.protocol.message.JoinGroupRequestData;
import io.strata.protocol.message.JoinGroupResponseData;
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
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * The classic-protocol state machine of the groups stored in one {@code __consumer_offsets}
 * partition, and their committed offsets. Runs on one thread (its shard executor): every
 * method, timer and write completion is called there, so no state needs a lock.
 *
 * <p>Semantics follow Kafka's classic group coordinator: member ids handed out with
 * MEMBER_ID_REQUIRED, a rebalance waits for every known member to rejoin (or its rebalance
 * timeout), the first rebalance of an empty group waits {@code group.initial.rebalance.delay.ms}
 * for more members, the leader's assignment is persisted before anyone gets it, stale
 * generations and unknown members are fenced, static members that restart within their
 * session timeout rejoin without a rebalance.
 *
 * <p>Every {@code offsets.retention.check.interval.ms} the shard expires committed offsets and
 * deletes empty groups left without offsets, with Kafka 4's rules ({@link #cleanupGroupMetadata}),
 * on the shard's {@link CoordinatorTimer}; a pass that throws is logged with the partition, counted
 * ({@link BackgroundErrors}, task {@value #EXPIRATION_TASK}) and runs again at the next interval.
 */
final class GroupShard {
    private static final Logger LOG = LoggerFactory.getLogger(GroupShard.class);
    /** Background task names (metric labels): the offset expiration pass, and other work on the shard threads. */
    static final String EXPIRATION_TASK = "group-offsets-expiration";
    static final String SHARD_THREAD_TASK = "group-coordinator-thread";
    private static final String EXPIRATION_TIMER_KEY = "offsets-expiration";

    private final int partition;
    private final GroupCoordinatorSettings settings;
    private final ScheduledExecutorService executor;
    private final CoordinatorTimer timer;
    private final BackgroundErrors backgroundErrors;
    private final GroupStore store;
    private final Time time;
    final Map<String, ClassicGroup> groups = new HashMap<>();
    final Map<String, Map<TopicPartitionKey, OffsetAndMetadata>> offsets = new HashMap<>();
    volatile boolean loaded;
    /** Records of the partition that the last load could not apply (each logged with its offset). */
    private int skippedRecords;
    /** The consumer groups (KIP-848) of this partition; set by the coordinator before the partition is loaded. */
    ConsumerGroupManager consumerGroups;

    /** A topic partition of a committed offset. */
    record TopicPartitionKey(String topic, int partition) {
    }

    GroupShard(int partition, GroupCoordinatorSettings settings, ScheduledExecutorService executor, CoordinatorTimer timer,
               BackgroundErrors backgroundErrors, GroupStore store, Time time) {
        this.partition = partition;
        this.settings = settings;
        this.executor = executor;
        this.timer = timer;
        this.backgroundErrors = backgroundErrors;
        this.store = store;
        this.time = time;
    }

    int partition() {
        return partition;
    }

    /**
     * Stops coordinating this partition (another broker leads it now); on the shard's thread. The
     * timers stop, and members waiting for a JoinGroup or SyncGroup answer are told NOT_COORDINATOR
     * so that they find the new coordinator, as Kafka's coordinator does on resignation.
     */
    void unload() {
        loaded = false;
        timer.cancelAll();
        for (ClassicGroup group : groups.values()) {
            group.cancelJoinTimer();
            for (ClassicGroupMember member : group.members.values()) {
                member.cancelSessionTimer();
                if (member.awaitingJoin != null) {
                    Consumer<JoinGroupResponseData> awaiting = member.awaitingJoin;
                    member.awaitingJoin = null;
                    awaiting.accept(joinError(ErrorCode.NOT_COORDINATOR, member.memberId));
                }
                if (member.awaitingSync != null) {
                    Consumer<SyncGroupResponseData> awaiting = member.awaitingSync;
                    member.awaitingSync = null;
                    awaiting.accept(new SyncGroupResponseData().setErrorCode(ErrorCode.NOT_COORDINATOR.code()));
                }
            }
        }
        groups.clear();
        offsets.clear();
    }

    /** Creates an empty classic group (Kafka's getOrMaybeCreateClassicGroup): Empty since now, no protocol type yet. */
    private ClassicGroup newGroup(String groupId) {
        ClassicGroup group = new ClassicGroup(groupId);
        group.stateTimestampMs = time.milliseconds();
        groups.put(groupId, group);
        return group;
    }

    ScheduledExecutorService executor() {
        return executor;
    }

    /** The shard's timer, shared with its consumer group manager; used only on the shard's thread. */
    CoordinatorTimer timer() {
        return timer;
    }

    ClassicGroup group(String groupId) {
        return groups.get(groupId);
    }

    // ---------------------------------------------------------------- join

    void joinGroup(JoinGroupRequestData request, short version, String clientId, String clientHost,
                   Consumer<JoinGroupResponseData> respond) {
        ErrorCode invalid = validateJoin(request);
        if (invalid != null) {
            respond.accept(joinError(invalid, request.memberId()));
            return;
        }
        ClassicGroup group = groups.get(request.groupId());
        boolean unknownMember = request.memberId().isEmpty();
        if (group == null) {
            if (!unknownMember) {
                respond.accept(joinError(ErrorCode.UNKNOWN_MEMBER_ID, request.memberId()));
                return;
            }
            group = newGroup(request.groupId());
        }
        if (group.is(ClassicGroupState.DEAD)) {
            respond.accept(joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, request.memberId()));
            return;
        }
        LinkedHashMap<String, byte[]> protocols = new LinkedHashMap<>();
        for (JoinGroupRequestData.JoinGroupRequestProtocol protocol : request.protocols()) {
            protocols.putIfAbsent(protocol.name(), protocol.metadata());
        }
        if (!group.supportsProtocols(request.protocolType(), protocols.keySet())) {
            respond.accept(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, request.memberId()));
            return;
        }
        int rebalanceTimeoutMs = version >= 1 ? request.rebalanceTimeoutMs() : request.sessionTimeoutMs();
        if (unknownMember) {
            joinUnknownMember(group, request, version, clientId, clientHost, rebalanceTimeoutMs, protocols, respond);
        } else {
            joinKnownMember(group, request, clientId, clientHost, rebalanceTimeoutMs, protocols, respond);
        }
    }

    private ErrorCode validateJoin(JoinGroupRequestData request) {
        if (request.groupId() == null || request.groupId().isEmpty()) {
            return ErrorCode.INVALID_GROUP_ID;
        }
        if (request.sessionTimeoutMs() < settings.minSessionTimeoutMs() || request.sessionTimeoutMs() > settings.maxSessionTimeoutMs()) {
            return ErrorCode.INVALID_SESSION_TIMEOUT;
        }
        if (!loaded) {
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
        }
        return null;
    }

    private static JoinGroupResponseData joinError(ErrorCode error, String memberId) {
        return new JoinGroupResponseData().setErrorCode(error.code()).setMemberId(memberId).setGenerationId(-1)
            .setProtocolName(null).setLeader("");
    }

    private void joinUnknownMember(ClassicGroup group, JoinGroupRequestData request, short version, String clientId, String clientHost,
                                   int rebalanceTimeoutMs, LinkedHashMap<String, byte[]> protocols, Consumer<JoinGroupResponseData> respond) {
        if (group.size() >= settings.maxGroupSize()) {
            respond.accept(joinError(ErrorCode.GROUP_MAX_SIZE_REACHED, ""));
            return;
        }
        String newMemberId = clientId + "-" + UUID.randomUUID();
        String instanceId = request.groupInstanceId();
        if (instanceId != null) {
            String existingId = group.staticMembers.get(instanceId);
            if (existingId != null) {
                replaceStaticMember(group, existingId, newMemberId, request, version, rebalanceTimeoutMs, protocols, respond);
                return;
            }
        } else if (version >= 4) {
            // KIP-394: hand out the member id and let the client rejoin with it.
            group.pendingMembers.add(newMemberId);
            scheduleSessionTimeoutForPending(group, newMemberId, request.sessionTimeoutMs());
            respond.accept(joinError(ErrorCode.MEMBER_ID_REQUIRED, newMemberId));
            return;
        }
        ClassicGroupMember member = new ClassicGroupMember(newMemberId, instanceId, clientId, clientHost, rebalanceTimeoutMs,
            request.sessionTimeoutMs(), request.protocolType(), protocols);
        member.isNew = true;
        addMemberAndRebalance(group, member, respond);
    }

    private void joinKnownMember(ClassicGroup group, JoinGroupRequestData request, String clientId, String clientHost, int rebalanceTimeoutMs,
                                 LinkedHashMap<String, byte[]> protocols, Consumer<JoinGroupResponseData> respond) {
        String memberId = request.memberId();
        if (group.pendingMembers.contains(memberId)) {
            ClassicGroupMember member = new ClassicGroupMember(memberId, request.groupInstanceId(), clientId, clientHost, rebalanceTimeoutMs,
                request.sessionTimeoutMs(), request.protocolType(), protocols);
            member.isNew = true;
            addMemberAndRebalance(group, member, respond);
            return;
        }
        ClassicGroupMember member = group.members.get(memberId);
        if (member == null) {
            respond.accept(joinError(ErrorCode.UNKNOWN_MEMBER_ID, memberId));
            return;
        }
        if (member.isStatic() && !member.groupInstanceId.equals(request.groupInstanceId())) {
            respond.accept(joinError(ErrorCode.FENCED_INSTANCE_ID, memberId));
            return;
        }
        switch (group.state) {
            case PREPARING_REBALANCE -> updateMemberAndRebalance(group, member, rebalanceTimeoutMs, request.sessionTimeoutMs(), protocols, respond);
            case COMPLETING_REBALANCE -> {
                if (member.matches(protocols)) {
                    respond.accept(joinResponse(group, member));
                } else {
                    updateMemberAndRebalance(group, member, rebalanceTimeoutMs, request.sessionTimeoutMs(), protocols, respond);
                }
            }
            case STABLE -> {
                if (memberId.equals(group.leaderId) || !member.matches(protocols)) {
                    updateMemberAndRebalance(group, member, rebalanceTimeoutMs, request.sessionTimeoutMs(), protocols, respond);
                } else {
                    scheduleSessionTimeout(group, member);
                    respond.accept(joinResponse(group, member));
                }
            }
            default -> respond.accept(joinError(ErrorCode.UNKNOWN_MEMBER_ID, memberId));
        }
    }

    /** A static member restarted (new member id, same instance id): fence the old id; no rebalance if nothing changed. */
    private void replaceStaticMember(ClassicGroup group, String oldMemberId, String newMemberId, JoinGroupRequestData request,
                                     short version, int rebalanceTimeoutMs, LinkedHashMap<String, byte[]> protocols, Consumer<JoinGroupResponseData> respond) {
        ClassicGroupMember member = group.members.remove(oldMemberId);
        member.cancelSessionTimer();
        if (member.awaitingJoin != null) {
            member.awaitingJoin.accept(joinError(ErrorCode.FENCED_INSTANCE_ID, oldMemberId));
            member.awaitingJoin = null;
        }
        if (member.awaitingSync != null) {
            member.awaitingSync.accept(new SyncGroupResponseData().setErrorCode(ErrorCode.FENCED_INSTANCE_ID.code()));
            member.awaitingSync = null;
        }
        boolean wasLeader = oldMemberId.equals(group.leaderId);
        Map<String, byte[]> oldProtocols = member.protocols;
        member.memberId = newMemberId;
        member.rebalanceTimeoutMs = rebalanceTimeoutMs;
        member.sessionTimeoutMs = request.sessionTimeoutMs();
        member.protocols = protocols;
        group.members.put(newMemberId, member);
        group.staticMembers.put(member.groupInstanceId, newMemberId);
        if (wasLeader) {
            group.leaderId = newMemberId;
        }
        if (group.is(ClassicGroupState.STABLE) && !staticRejoinChangesAssignment(group, oldProtocols, protocols)) {
            // KIP-345: the restarted instance gets its previous assignment back; the group does not rebalance.
            // A restarted leader is told to skip the assignment (KIP-814, JoinGroup v9+): it gets the members so it
            // watches their subscriptions, but must not compute a new assignment, which the coordinator would ignore
            // while the client acted on it (e.g. rejoining when it differs), rebalancing the group after all.
            boolean skipAssignment = wasLeader && version >= 9;
            scheduleSessionTimeout(group, member);
            persistGroup(group, error -> respond.accept(joinResponse(group, member).setSkipAssignment(skipAssignment)));
            return;
        }
        updateMemberAndRebalance(group, member, rebalanceTimeoutMs, request.sessionTimeoutMs(), protocols, respond);
    }

    /**
     * Whether a restarted static member's new protocols need a rebalance of a stable group: as in Kafka, only if the
     * group's selected protocol would change, or (consumer groups) its subscribed topics changed. The raw metadata
     * differs on every restart (the consumer subscription carries the generation and owned partitions), so it
     * cannot be compared byte for byte.
     */
    private static boolean staticRejoinChangesAssignment(ClassicGroup group, Map<String, byte[]> oldProtocols,
                                                         Map<String, byte[]> newProtocols) {
        String selected = group.selectProtocol();
        if (selected == null || !selected.equals(group.protocolName)) {
            return true;
        }
        byte[] oldMetadata = oldProtocols.get(selected);
        byte[] newMetadata = newProtocols.get(selected);
        if (oldMetadata == null || newMetadata == null) {
            return true;
        }
        if ("consumer".equals(group.protocolType)) {
            return !Set.copyOf(ConsumerProtocol.subscribedTopics(oldMetadata)).equals(Set.copyOf(ConsumerProtocol.subscribedTopics(newMetadata)));
        }
        return !java.util.Arrays.equals(oldMetadata, newMetadata);
    }

    private void addMemberAndRebalance(ClassicGroup group, ClassicGroupMember member, Consumer<JoinGroupResponseData> respond) {
        member.awaitingJoin = respond;
        group.add(member);
        maybePrepareRebalance(group, "member " + member.memberId + " joined");
    }

    private void updateMemberAndRebalance(ClassicGroup group, ClassicGroupMember member, int rebalanceTimeoutMs, int sessionTimeoutMs,
                                          LinkedHashMap<String, byte[]> protocols, Consumer<JoinGroupResponseData> respond) {
        if (member.awaitingJoin != null) {
            // A duplicate join while waiting: the earlier request is superseded (Kafka answers it with the same result later).
            member.awaitingJoin.accept(joinError(ErrorCode.REBALANCE_IN_PROGRESS, member.memberId));
        }
        member.rebalanceTimeoutMs = rebalanceTimeoutMs;
        member.sessionTimeoutMs = sessionTimeoutMs;
        member.protocols = protocols;
        member.awaitingJoin = respond;
        maybePrepareRebalance(group, "member " + member.memberId + " rejoined");
    }

    private void maybePrepareRebalance(ClassicGroup group, String reason) {
        if (group.is(ClassicGroupState.STABLE) || group.is(ClassicGroupState.COMPLETING_REBALANCE) || group.is(ClassicGroupState.EMPTY)) {
            prepareRebalance(group, reason);
        } else if (group.is(ClassicGroupState.PREPARING_REBALANCE)) {
            tryCompleteJoin(group);
        }
    }

    private void prepareRebalance(ClassicGroup group, String reason) {
        if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
            // Members waiting in SyncGroup must rejoin.
            for (ClassicGroupMember member : group.members.values()) {
                if (member.awaitingSync != null) {
                    member.awaitingSync.accept(new SyncGroupResponseData().setErrorCode(ErrorCode.REBALANCE_IN_PROGRESS.code()));
                    member.awaitingSync = null;
                }
            }
        }
        boolean initial = group.is(ClassicGroupState.EMPTY);
        group.transitionTo(ClassicGroupState.PREPARING_REBALANCE, time.milliseconds());
        LOG.info("Preparing to rebalance group {} (generation {}): {}", group.groupId, group.generationId, reason);
        group.cancelJoinTimer();
        if (initial && settings.initialRebalanceDelayMs() > 0) {
            group.initialDelayRunning = true;
            group.initialDelayDeadlineMs = time.milliseconds() + Math.max(group.maxRebalanceTimeoutMs(), settings.initialRebalanceDelayMs());
            scheduleInitialDelay(group, settings.initialRebalanceDelayMs());
        } else {
            group.joinTimer = executor.schedule(() -> onJoinTimeout(group), group.maxRebalanceTimeoutMs(), TimeUnit.MILLISECONDS);
            tryCompleteJoin(group);
        }
    }

    /**
     * The first rebalance of an empty group waits {@code group.initial.rebalance.delay.ms}, and
     * again each time a member joins during the wait, up to the rebalance timeout, so a group of
     * consumers starting together rebalances once.
     */
    private void scheduleInitialDelay(ClassicGroup group, long delayMs) {
        int membersAtStart = group.members.size();
        group.joinTimer = executor.schedule(() -> {
            long remainingMs = group.initialDelayDeadlineMs - time.milliseconds();
            if (group.members.size() > membersAtStart && remainingMs > 0) {
                scheduleInitialDelay(group, Math.min(settings.initialRebalanceDelayMs(), remainingMs));
            } else {
                group.initialDelayRunning = false;
                completeJoin(group);
            }
        }, delayMs, TimeUnit.MILLISECONDS);
    }

    private void tryCompleteJoin(ClassicGroup group) {
        if (group.is(ClassicGroupState.PREPARING_REBALANCE) && !group.initialDelayRunning && group.allMembersJoined()) {
            group.cancelJoinTimer();
            completeJoin(group);
        }
    }

    private void onJoinTimeout(ClassicGroup group) {
        if (!group.is(ClassicGroupState.PREPARING_REBALANCE)) {
            return;
        }
        for (ClassicGroupMember missing : group.membersNotRejoined()) {
            LOG.info("Removing member {} of group {}: it did not rejoin within the rebalance timeout", missing.memberId, group.groupId);
            group.remove(missing.memberId);
        }
        group.pendingMembers.clear();
        completeJoin(group);
    }

    /** Ends the join phase: new generation, protocol, leader; answers every waiting member. */
    private void completeJoin(ClassicGroup group) {
        group.joinTimer = null;
        for (ClassicGroupMember missing : group.membersNotRejoined()) {
            if (!missing.isStatic()) {
                group.remove(missing.memberId);
            }
        }
        group.generationId++;
        if (group.members.isEmpty()) {
            group.protocolName = null;
            group.transitionTo(ClassicGroupState.EMPTY, time.milliseconds());
            persistGroup(group, error -> { });
            return;
        }
        group.protocolName = group.selectProtocol();
        if (group.leaderId == null || !group.members.containsKey(group.leaderId)) {
            group.leaderId = group.members.keySet().iterator().next();
        }
        group.transitionTo(ClassicGroupState.COMPLETING_REBALANCE, time.milliseconds());
        LOG.info("Group {} completed its join phase in generation {} with {} member(s), protocol {}", group.groupId, group.generationId,
            group.members.size(), group.protocolName);
        for (ClassicGroupMember member : new ArrayList<>(group.members.values())) {
            member.isNew = false;
            Consumer<JoinGroupResponseData> waiting = member.awaitingJoin;
            member.awaitingJoin = null;
            scheduleSessionTimeout(group, member);
            if (waiting != null) {
                waiting.accept(joinResponse(group, member));
            }
        }
    }

    private JoinGroupResponseData joinResponse(ClassicGroup group, ClassicGroupMember member) {
        JoinGroupResponseData response = new JoinGroupResponseData().setErrorCode(ErrorCode.NONE.code())
            .setGenerationId(group.generationId).setProtocolType(group.protocolType).setProtocolName(group.protocolName)
            .setLeader(group.leaderId).setMemberId(member.memberId).setSkipAssignment(false);
        if (member.memberId.equals(group.leaderId)) {
            for (ClassicGroupMember each : group.members.values()) {
                response.members().add(new JoinGroupResponseData.JoinGroupResponseMember().setMemberId(each.memberId)
                    .setGroupInstanceId(each.groupInstanceId).setMetadata(each.metadata(group.protocolName)));
            }
        }
        return response;
    }

    // ---------------------------------------------------------------- sync

    void syncGroup(SyncGroupRequestData request, Consumer<SyncGroupResponseData> respond) {
        ClassicGroup group = groups.get(request.groupId());
        ErrorCode error = validateMember(group, request.memberId(), request.groupInstanceId(), request.generationId());
        if (error == null && request.protocolType() != null && !request.protocolType().equals(group.protocolType)
            || error == null && request.protocolName() != null && !request.protocolName().equals(group.protocolName)) {
            error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
        }
        if (error != null) {
            respond.accept(new SyncGroupResponseData().setErrorCode(error.code()));
            return;
        }
        ClassicGroupMember member = group.members.get(request.memberId());
        switch (group.state) {
            case PREPARING_REBALANCE -> respond.accept(new SyncGroupResponseData().setErrorCode(ErrorCode.REBALANCE_IN_PROGRESS.code()));
            case COMPLETING_REBALANCE -> {
                member.awaitingSync = respond;
                if (member.memberId.equals(group.leaderId)) {
                    Map<String, byte[]> assignments = new HashMap<>();
                    for (SyncGroupRequestData.SyncGroupRequestAssignment assignment : request.assignments()) {
                        assignments.put(assignment.memberId(), assignment.assignment());
                    }
                    int generation = group.generationId;
                    for (ClassicGroupMember each : group.members.values()) {
                        each.assignment = assignments.getOrDefault(each.memberId, new byte[0]);
                    }
                    persistGroup(group, writeError -> completeSync(group, generation, writeError));
                }
            }
            case STABLE -> {
                scheduleSessionTimeout(group, member);
                respond.accept(syncResponse(group, member));
            }
            default -> respond.accept(new SyncGroupResponseData().setErrorCode(ErrorCode.UNKNOWN_MEMBER_ID.code()));
        }
    }

    private void completeSync(ClassicGroup group, int generation, ErrorCode writeError) {
        if (!group.is(ClassicGroupState.COMPLETING_REBALANCE) || group.generationId != generation) {
            return; // a rebalance started while the assignment was being written
        }
        if (writeError != ErrorCode.NONE) {
            for (ClassicGroupMember member : group.members.values()) {
                member.assignment = new byte[0];
                if (member.awaitingSync != null) {
                    member.awaitingSync.accept(new SyncGroupResponseData().setErrorCode(groupWriteError(writeError).code()));
                    member.awaitingSync = null;
                }
            }
            prepareRebalance(group, "storing the assignment failed: " + writeError);
            return;
        }
        group.transitionTo(ClassicGroupState.STABLE, time.milliseconds());
        for (ClassicGroupMember member : group.members.values()) {
            if (member.awaitingSync != null) {
                member.awaitingSync.accept(syncResponse(group, member));
                member.awaitingSync = null;
            }
        }
    }

    /**
     * Kafka's answer to a member whose group could not be stored (appendGroupMetadataErrorToResponseError):
     * errors of the log become coordinator errors clients retry, or UNKNOWN_SERVER_ERROR for a
     * record the log refuses as too large (members' metadata too big for one record).
     */
    static ErrorCode groupWriteError(ErrorCode writeError) {
        return switch (writeError) {
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT -> ErrorCode.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> ErrorCode.NOT_COORDINATOR;
            case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE -> ErrorCode.UNKNOWN_SERVER_ERROR;
            default -> writeError;
        };
    }

    private static SyncGroupResponseData syncResponse(ClassicGroup group, ClassicGroupMember member) {
        return new SyncGroupResponseData().setErrorCode(ErrorCode.NONE.code()).setProtocolType(group.protocolType)
            .setProtocolName(group.protocolName).setAssignment(member.assignment);
    }

    /** Common membership checks of SyncGroup, Heartbeat and OffsetCommit; null when valid. */
    private ErrorCode validateMember(ClassicGroup group, String memberId, String groupInstanceId, int generationId) {
        if (!loaded) {
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
        }
        if (group == null || group.is(ClassicGroupState.DEAD)) {
            return ErrorCode.UNKNOWN_MEMBER_ID;
        }
        if (groupInstanceId != null) {
            String current = group.staticMembers.get(groupInstanceId);
            if (current != null && !current.equals(memberId)) {
                return ErrorCode.FENCED_INSTANCE_ID;
            }
        }
        if (!group.hasMember(memberId)) {
            return ErrorCode.UNKNOWN_MEMBER_ID;
        }
        if (generationId != group.generationId) {
            return ErrorCode.ILLEGAL_GENERATION;
        }
        return null;
    }

    // ---------------------------------------------------------------- heartbeat and leave

    ErrorCode heartbeat(String groupId, String memberId, String groupInstanceId, int generationId) {
        ClassicGroup group = groups.get(groupId);
        if (group != null && group.is(ClassicGroupState.EMPTY) && loaded) {
            return ErrorCode.UNKNOWN_MEMBER_ID;
        }
        ErrorCode error = validateMember(group, memberId, groupInstanceId, generationId);
        if (error != null) {
            return error;
        }
        ClassicGroupMember member = group.members.get(memberId);
        scheduleSessionTimeout(group, member);
        return group.is(ClassicGroupState.PREPARING_REBALANCE) ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
    }

    /** Removes members (batched, KIP-345); returns one error per identity, in order. */
    List<ErrorCode> leaveGroup(String groupId, List<String[]> identities) {
        List<ErrorCode> results = new ArrayList<>();
        ClassicGroup group = groups.get(groupId);
        boolean changed = false;
        for (String[] identity : identities) {
            String memberId = identity[0];
            String instanceId = identity[1];
            if (!loaded) {
                results.add(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
                continue;
            }
            if (group == null) {
                results.add(ErrorCode.UNKNOWN_MEMBER_ID);
                continue;
            }
            if (instanceId != null) {
                String current = group.staticMembers.get(instanceId);
                if (current == null) {
                    results.add(ErrorCode.UNKNOWN_MEMBER_ID);
                    continue;
                }
                if (!memberId.isEmpty() && !current.equals(memberId)) {
                    results.add(ErrorCode.FENCED_INSTANCE_ID);
                    continue;
                }
                memberId = current;
            }
            if (group.pendingMembers.remove(memberId)) {
                results.add(ErrorCode.NONE);
                continue;
            }
            ClassicGroupMember member = group.members.get(memberId);
            if (member == null) {
                results.add(ErrorCode.UNKNOWN_MEMBER_ID);
                continue;
            }
            removeMember(group, member);
            changed = true;
            results.add(ErrorCode.NONE);
        }
        if (changed) {
            onMembershipShrunk(group, "members left");
        }
        return results;
    }

    private void removeMember(ClassicGroup group, ClassicGroupMember member) {
        if (member.awaitingJoin != null) {
            member.awaitingJoin.accept(joinError(ErrorCode.UNKNOWN_MEMBER_ID, member.memberId));
            member.awaitingJoin = null;
        }
        if (member.awaitingSync != null) {
            member.awaitingSync.accept(new SyncGroupResponseData().setErrorCode(ErrorCode.UNKNOWN_MEMBER_ID.code()));
            member.awaitingSync = null;
        }
        group.remove(member.memberId);
    }

    private void onMembershipShrunk(ClassicGroup group, String reason) {
        switch (group.state) {
            case STABLE, COMPLETING_REBALANCE -> prepareRebalance(group, reason);
            case PREPARING_REBALANCE -> tryCompleteJoin(group);
            default -> { }
        }
    }

    private void scheduleSessionTimeout(ClassicGroup group, ClassicGroupMember member) {
        member.cancelSessionTimer();
        String memberId = member.memberId;
        member.sessionTimer = executor.schedule(() -> onSessionTimeout(group, memberId), member.sessionTimeoutMs, TimeUnit.MILLISECONDS);
    }

    private void scheduleSessionTimeoutForPending(ClassicGroup group, String memberId, int sessionTimeoutMs) {
        executor.schedule(() -> {
            if (group.pendingMembers.remove(memberId)) {
                tryCompleteJoin(group);
            }
        }, sessionTimeoutMs, TimeUnit.MILLISECONDS);
    }

    private void onSessionTimeout(ClassicGroup group, String memberId) {
        ClassicGroupMember member = group.members.get(memberId);
        if (member == null || member.isAwaitingJoin() && group.is(ClassicGroupState.PREPARING_REBALANCE)) {
            return;
        }
        LOG.info("Member {} of group {} failed to heartbeat within its session timeout of {} ms; removing it", memberId, group.groupId,
            member.sessionTimeoutMs);
        removeMember(group, member);
        onMembershipShrunk(group, "member " + memberId + " session expired");
    }

    // ---------------------------------------------------------------- offsets

    /** The offset commit of one partition: the error for it and the value to store if valid. */
    record PartitionCommit(String topic, int partition, OffsetAndMetadata offset, ErrorCode error) {
    }

    /**
     * Validates a commit's membership; returns null if the commit may proceed (then the caller
     * writes the offsets), else the error for every partition.
     */
    ErrorCode validateCommit(String groupId, int generationId, String memberId, String groupInstanceId) {
        if (!loaded) {
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
        }
        if (consumerGroups.has(groupId)) {
            // OffsetCommit checks consumer groups before calling here; what remains are transactional commits.
            ErrorCode error = consumerGroups.validateOffsetCommit(groupId, memberId, generationId, Short.MAX_VALUE, true);
            return error == ErrorCode.NONE ? null : error;
        }
        ClassicGroup group = groups.get(groupId);
        if (generationId < 0) {
            // A commit outside any generation (assign() consumers, admin tools): only for groups without members.
            if (group != null && !group.members.isEmpty()) {
                return ErrorCode.UNKNOWN_MEMBER_ID;
            }
            return null;
        }
        if (group == null) {
            return ErrorCode.ILLEGAL_GENERATION;
        }
        ErrorCode error = validateMember(group, memberId, groupInstanceId, generationId);
        if (error != null) {
            return error;
        }
        if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
            return ErrorCode.REBALANCE_IN_PROGRESS;
        }
        scheduleSessionTimeout(group, group.members.get(memberId));
        return null;
    }

    void applyCommittedOffsets(String groupId, List<PartitionCommit> commits) {
        if (!groups.containsKey(groupId) && !consumerGroups.has(groupId)) {
            newGroup(groupId); // a simple group: commits without membership
        }
        Map<TopicPartitionKey, OffsetAndMetadata> groupOffsets = offsets.computeIfAbsent(groupId, g -> new HashMap<>());
        for (PartitionCommit commit : commits) {
            if (commit.error() == ErrorCode.NONE) {
                groupOffsets.put(new TopicPartitionKey(commit.topic(), commit.partition()), commit.offset());
            }
        }
    }

    Map<TopicPartitionKey, OffsetAndMetadata> committedOffsets(String groupId) {
        return offsets.getOrDefault(groupId, Map.of());
    }

    // ---------------------------------------------------------------- describe, list, delete

    DescribeGroupsResponseData.DescribedGroup describe(String groupId) {
        DescribeGroupsResponseData.DescribedGroup described = new DescribeGroupsResponseData.DescribedGroup().setGroupId(groupId)
            .setProtocolType("").setProtocolData("").setAuthorizedOperations(Integer.MIN_VALUE);
        if (!loaded) {
            return described.setErrorCode(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS.code()).setGroupState("");
        }
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            return described.setErrorCode(ErrorCode.NONE.code()).setGroupState(ClassicGroupState.DEAD.displayName);
        }
        described.setErrorCode(ErrorCode.NONE.code()).setGroupState(group.state.displayName)
            .setProtocolType(group.protocolType == null ? "" : group.protocolType);
        if (group.is(ClassicGroupState.STABLE)) {
            described.setProtocolData(group.protocolName == null ? "" : group.protocolName);
        }
        for (ClassicGroupMember member : group.members.values()) {
            boolean stable = group.is(ClassicGroupState.STABLE);
            described.members().add(new DescribeGroupsResponseData.DescribedGroupMember().setMemberId(member.memberId)
                .setGroupInstanceId(member.groupInstanceId).setClientId(member.clientId).setClientHost(member.clientHost)
                .setMemberMetadata(stable && group.protocolName != null ? member.metadata(group.protocolName) : new byte[0])
                .setMemberAssignment(stable ? member.assignment : new byte[0]));
        }
        return described;
    }

    /** Deletes an empty (or dead) group and its offsets; the error if it cannot be deleted. */
    ErrorCode canDelete(String groupId) {
        if (!loaded) {
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
        }
        ClassicGroup group = groups.get(groupId);
        if (group == null && !offsets.containsKey(groupId)) {
            return ErrorCode.GROUP_ID_NOT_FOUND;
        }
        if (group != null && !group.members.isEmpty()) {
            return ErrorCode.NON_EMPTY_GROUP;
        }
        return null;
    }

    void removeGroup(String groupId) {
        ClassicGroup group = groups.remove(groupId);
        if (group != null) {
            group.transitionTo(ClassicGroupState.DEAD, time.milliseconds());
            group.cancelJoinTimer();
        }
        offsets.remove(groupId);
    }

    List<ClassicGroup> allGroups() {
        return new ArrayList<>(new TreeMap<>(groups).values());
    }

    Set<String> offsetGroups() {
        return offsets.keySet();
    }

    // ---------------------------------------------------------------- transactional offsets

    /** Offsets committed in open transactions: producer id → group → partition → offset. Invisible until the commit marker. */
    final Map<Long, Map<String, Map<TopicPartitionKey, OffsetAndMetadata>>> pendingTransactionalOffsets = new HashMap<>();

    void addPendingTransactionalOffset(long producerId, String groupId, TopicPartitionKey key, OffsetAndMetadata offset) {
        pendingTransactionalOffsets.computeIfAbsent(producerId, p -> new HashMap<>()).computeIfAbsent(groupId, g -> new HashMap<>()).put(key, offset);
    }

    /** A commit marker makes the producer's pending offsets visible; an abort marker drops them. */
    void completeTransactionalOffsets(long producerId, boolean commit) {
        Map<String, Map<TopicPartitionKey, OffsetAndMetadata>> pending = pendingTransactionalOffsets.remove(producerId);
        if (pending == null || !commit) {
            return;
        }
        for (Map.Entry<String, Map<TopicPartitionKey, OffsetAndMetadata>> group : pending.entrySet()) {
            if (!groups.containsKey(group.getKey()) && !consumerGroups.has(group.getKey())) {
                newGroup(group.getKey());
            }
            offsets.computeIfAbsent(group.getKey(), g -> new HashMap<>()).putAll(group.getValue());
        }
    }

    boolean hasPendingTransactionalOffset(String groupId, TopicPartitionKey key) {
        for (Map<String, Map<TopicPartitionKey, OffsetAndMetadata>> byGroup : pendingTransactionalOffsets.values()) {
            Map<TopicPartitionKey, OffsetAndMetadata> pending = byGroup.get(groupId);
            if (pending != null && (key == null ? !pending.isEmpty() : pending.containsKey(key))) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- offset expiration (offsets.retention.minutes)

    /** Set while the tombstones of an expiration pass are being written: the next pass waits for them. */
    private boolean expirationInFlight;

    /**
     * Which offsets of a group may expire and from when their age counts (Kafka's
     * OffsetExpirationCondition): an offset of a topic the group is not subscribed to expires
     * once {@code now - base(offset) >= retention}, or at its explicit expire timestamp if it
     * has one (OffsetCommit v2-v4 retention time).
     */
    private record ExpirationCondition(ToLongFunction<OffsetAndMetadata> base, Predicate<String> subscribed) {
        boolean isExpired(OffsetAndMetadata offset, long nowMs, long retentionMs) {
            if (offset.hasExpireTimestamp()) {
                return nowMs >= offset.expireTimestampMs();
            }
            return nowMs - base.applyAsLong(offset) >= retentionMs;
        }
    }

    private static final Predicate<String> SUBSCRIBED_TO_NOTHING = topic -> false;

    /**
     * Kafka's offsetExpirationCondition of the group, or null if its offsets do not expire now:
     * <ul>
     *   <li>a consumer group (KIP-848): by commit timestamp, except topics a member subscribes to;</li>
     *   <li>a classic group without a protocol type (simple group: commits without membership, such
     *       as Admin alterConsumerGroupOffsets or assign() consumers): by commit timestamp;</li>
     *   <li>an Empty classic group with a protocol type: from when it became Empty (its current
     *       state timestamp, or the commit timestamp if the stored group has none);</li>
     *   <li>a Stable classic group of the consumer protocol whose subscriptions can be read: by
     *       commit timestamp, except topics a member subscribes to;</li>
     *   <li>otherwise (rebalancing, other protocols with members) none.</li>
     * </ul>
     */
    private ExpirationCondition expirationCondition(String groupId) {
        var consumerGroup = consumerGroups.group(groupId);
        if (consumerGroup != null) {
            return new ExpirationCondition(OffsetAndMetadata::commitTimestampMs, consumerGroup::isSubscribedTo);
        }
        ClassicGroup group = groups.get(groupId);
        if (group == null || group.protocolType == null || group.protocolType.isEmpty()) {
            return new ExpirationCondition(OffsetAndMetadata::commitTimestampMs, SUBSCRIBED_TO_NOTHING);
        }
        if (group.is(ClassicGroupState.EMPTY)) {
            long emptySinceMs = group.stateTimestampMs;
            return new ExpirationCondition(offset -> emptySinceMs >= 0 ? emptySinceMs : offset.commitTimestampMs(), SUBSCRIBED_TO_NOTHING);
        }
        if ("consumer".equals(group.protocolType) && group.is(ClassicGroupState.STABLE)) {
            Set<String> subscribed = subscribedTopics(group);
            if (subscribed != null) {
                return new ExpirationCondition(OffsetAndMetadata::commitTimestampMs, subscribed::contains);
            }
        }
        return null;
    }

    /** The topics the members of a consumer-protocol classic group subscribe to, or null if a subscription cannot be read. */
    private static Set<String> subscribedTopics(ClassicGroup group) {
        if (group.protocolName == null) {
            return null;
        }
        Set<String> topics = new java.util.HashSet<>();
        for (ClassicGroupMember member : group.members.values()) {
            byte[] metadata = member.metadata(group.protocolName);
            List<String> memberTopics = metadata == null ? null : ConsumerProtocol.subscribedTopicsOrNull(metadata);
            if (memberTopics == null) {
                return null;
            }
            topics.addAll(memberTopics);
        }
        return topics;
    }

    /**
     * Kafka's cleanupExpiredOffsets of one group: adds the group's expired offsets to
     * {@code expired} (never one with a pending transactional commit) and tells whether the
     * group has no offsets left and no open transaction, so it may be deleted if empty.
     */
    private boolean collectExpiredOffsets(String groupId, long nowMs, List<TopicPartitionKey> expired) {
        Map<TopicPartitionKey, OffsetAndMetadata> groupOffsets = offsets.get(groupId);
        boolean openTransactions = hasPendingTransactionalOffset(groupId, null);
        if (groupOffsets == null || groupOffsets.isEmpty()) {
            return !openTransactions;
        }
        ExpirationCondition condition = expirationCondition(groupId);
        if (condition == null) {
            return false;
        }
        boolean allExpired = true;
        List<TopicPartitionKey> keys = new ArrayList<>(groupOffsets.keySet());
        keys.sort(java.util.Comparator.comparing(TopicPartitionKey::topic).thenComparingInt(TopicPartitionKey::partition));
        for (TopicPartitionKey key : keys) {
            if (!condition.subscribed().test(key.topic()) && condition.isExpired(groupOffsets.get(key), nowMs, settings.offsetsRetentionMs())
                && !hasPendingTransactionalOffset(groupId, key)) {
                expired.add(key);
            } else {
                allExpired = false;
            }
        }
        return allExpired && !openTransactions;
    }

    /**
     * The periodic pass, every {@code offsets.retention.check.interval.ms}. A pass that throws
     * (reported by the guard around it) leaves no write in flight: the next pass starts afresh.
     */
    private void scheduledCleanup() {
        try {
            cleanupGroupMetadata(tombstones -> { });
        } catch (RuntimeException e) {
            expirationInFlight = false;
            throw e;
        }
    }

    /**
     * Kafka's cleanupGroupMetadata: removes every expired offset and then every group that is
     * empty (a classic group in state Empty, a consumer group without members) with no offsets
     * left and no open transaction, by writing tombstones (offset commits; group metadata, or
     * all records of a consumer group) to the partition. Memory changes once they are written.
     * {@code done} gets the number of offsets and groups removed, after the writes completed.
     */
    void cleanupGroupMetadata(Consumer<Integer> done) {
        if (!loaded || expirationInFlight) {
            done.accept(0);
            return;
        }
        long startMs = time.milliseconds();
        Set<String> groupIds = new java.util.TreeSet<>(groups.keySet());
        groupIds.addAll(offsets.keySet());
        consumerGroups.groups().forEach(group -> groupIds.add(group.groupId()));

        Map<String, List<TopicPartitionKey>> expiredByGroup = new LinkedHashMap<>();
        Map<String, List<TopicPartitionKey>> deletedConsumerGroups = new LinkedHashMap<>();
        List<ClassicGroup> deletedClassicGroups = new ArrayList<>();
        List<byte[][]> records = new ArrayList<>();
        for (String groupId : groupIds) {
            List<TopicPartitionKey> expired = new ArrayList<>();
            boolean deletable = collectExpiredOffsets(groupId, startMs, expired);
            var consumerGroup = consumerGroups.group(groupId);
            if (deletable && consumerGroup != null && consumerGroup.isEmpty()) {
                deletedConsumerGroups.put(groupId, expired);
                continue;
            }
            if (!expired.isEmpty()) {
                expiredByGroup.put(groupId, expired);
                for (TopicPartitionKey key : expired) {
                    records.add(GroupStore.offsetTombstone(groupId, key.topic(), key.partition()));
                }
            }
            ClassicGroup group = groups.get(groupId);
            if (deletable && consumerGroup == null && group != null && group.is(ClassicGroupState.EMPTY)) {
                deletedClassicGroups.add(group);
                records.add(new byte[][] {GroupStore.groupKey(groupId), null});
            }
        }
        int writes = (records.isEmpty() ? 0 : 1) + deletedConsumerGroups.size();
        int removed = records.size();
        for (List<TopicPartitionKey> expired : deletedConsumerGroups.values()) {
            removed += expired.size() + 1;
        }
        if (writes == 0) {
            LOG.debug("No offsets or groups of __consumer_offsets-{} expired", partition);
            done.accept(0);
            return;
        }
        expirationInFlight = true;
        int total = removed;
        int[] remaining = {writes};
        Runnable completed = () -> {
            if (--remaining[0] == 0) {
                expirationInFlight = false;
                LOG.info("Expired {} offset(s) and {} group(s) of __consumer_offsets-{} in {} ms", expiredCount(expiredByGroup, deletedConsumerGroups),
                    deletedClassicGroups.size() + deletedConsumerGroups.size(), partition, time.milliseconds() - startMs);
                done.accept(total);
            }
        };
        if (!records.isEmpty()) {
            store.write(this, records, error -> {
                if (error == ErrorCode.NONE) {
                    expiredByGroup.forEach((groupId, keys) -> keys.forEach(key -> loadOffset(groupId, key, null)));
                    for (ClassicGroup group : deletedClassicGroups) {
                        // Removed unless the group changed while the tombstone was written (a member joined: it writes the group again).
                        if (groups.get(group.groupId) == group && group.is(ClassicGroupState.EMPTY) && !offsets.containsKey(group.groupId)
                            && !hasPendingTransactionalOffset(group.groupId, null)) {
                            removeGroup(group.groupId);
                        }
                    }
                } else {
                    LOG.warn("Writing {} expiration tombstone(s) to __consumer_offsets-{} failed with {}; retrying at the next check",
                        records.size(), partition, error);
                }
                completed.run();
            });
        }
        deletedConsumerGroups.forEach((groupId, expired) -> {
            List<byte[][]> offsetTombstones = new ArrayList<>();
            for (TopicPartitionKey key : expired) {
                offsetTombstones.add(GroupStore.offsetTombstone(groupId, key.topic(), key.partition()));
            }
            // The consumer group leaves memory at once (its manager applies records before writing them, and puts the group back if the write fails).
            consumerGroups.delete(groupId, offsetTombstones, error -> {
                if (error == ErrorCode.NONE) {
                    expired.forEach(key -> loadOffset(groupId, key, null));
                } else {
                    LOG.warn("Deleting expired consumer group {} failed with {}; retrying at the next check", groupId, error);
                }
                completed.run();
            });
        });
    }

    private static int expiredCount(Map<String, List<TopicPartitionKey>> expiredByGroup, Map<String, List<TopicPartitionKey>> deletedConsumerGroups) {
        int count = 0;
        for (List<TopicPartitionKey> keys : expiredByGroup.values()) {
            count += keys.size();
        }
        for (List<TopicPartitionKey> keys : deletedConsumerGroups.values()) {
            count += keys.size();
        }
        return count;
    }

    // ---------------------------------------------------------------- persistence

    private void persistGroup(ClassicGroup group, Consumer<ErrorCode> done) {
        store.writeGroup(this, group, done);
    }

    /** Rebuilds state from a replayed group record (null value: the group was deleted). */
    void loadGroup(String groupId, ClassicGroup loadedGroup) {
        if (loadedGroup == null) {
            groups.remove(groupId);
            return;
        }
        groups.put(groupId, loadedGroup);
    }

    void loadOffset(String groupId, TopicPartitionKey key, OffsetAndMetadata value) {
        if (value == null) {
            Map<TopicPartitionKey, OffsetAndMetadata> groupOffsets = offsets.get(groupId);
            if (groupOffsets != null) {
                groupOffsets.remove(key);
                if (groupOffsets.isEmpty()) {
                    offsets.remove(groupId);
                }
            }
            return;
        }
        if (!groups.containsKey(groupId) && !consumerGroups.has(groupId)) {
            // As Kafka replays a commit: offsets without a group belong to a simple group (commits without membership).
            newGroup(groupId);
        }
        offsets.computeIfAbsent(groupId, g -> new HashMap<>()).put(key, value);
    }

    void recordSkipped() {
        skippedRecords++;
    }

    /** Records the load skipped; on the shard's thread. */
    int skippedRecords() {
        return skippedRecords;
    }

    /** After loading: members of loaded groups get fresh session timers (they must heartbeat again). */
    void onLoaded() {
        // A simple group made up for offsets replayed before the consumer group's records (Kafka replaces it the same way).
        groups.entrySet().removeIf(entry -> consumerGroups.has(entry.getKey()) && entry.getValue().members.isEmpty());
        for (ClassicGroup group : groups.values()) {
            for (ClassicGroupMember member : group.members.values()) {
                scheduleSessionTimeout(group, member);
            }
        }
        consumerGroups.onLoaded();
        loaded = true;
        long intervalMs = settings.offsetsRetentionCheckIntervalMs();
        timer.schedulePeriodic(EXPIRATION_TIMER_KEY, intervalMs,
            backgroundErrors.guard(EXPIRATION_TASK, LOG, "__consumer_offsets-" + partition, this::scheduledCleanup));
    }
}
