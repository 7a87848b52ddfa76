package io.strata.coordinator.group.consumer;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.strata.common.Time;
import io.strata.coordinator.record.ConsumerGroupCurrentMemberAssignmentKey;
import io.strata.coordinator.record.ConsumerGroupCurrentMemberAssignmentValue;
import io.strata.coordinator.record.ConsumerGroupMemberMetadataKey;
import io.strata.coordinator.record.ConsumerGroupMemberMetadataValue;
import io.strata.coordinator.record.ConsumerGroupMetadataKey;
import io.strata.coordinator.record.ConsumerGroupMetadataValue;
import io.strata.coordinator.record.ConsumerGroupRegularExpressionKey;
import io.strata.coordinator.record.ConsumerGroupRegularExpressionValue;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMemberKey;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMemberValue;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMetadataKey;
import io.strata.coordinator.record.ConsumerGroupTargetAssignmentMetadataValue;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Reader;
import io.strata.protocol.message.ConsumerGroupDescribeResponseData;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import io.strata.protocol.message.ListGroupsResponseData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The consumer groups (KIP-848 protocol) of one {@code __consumer_offsets} partition: handles
 * ConsumerGroupHeartbeat and ConsumerGroupDescribe, validates offset commits and fetches of
 * consumer groups, expires sessions and rebalance timeouts, and replays the group records.
 *
 * <p><b>State changes are records.</b> Every change is expressed as records (see
 * {@link ConsumerGroupRecords}) that are applied to the in-memory groups by the same
 * {@link #replay} that loads the partition after a restart, then appended to the log. A
 * response is sent only once the records it depends on are durable (a heartbeat that wrote
 * nothing waits for the group's last write still in flight).
 *
 * <p><b>Undo.</b> Before a change applies its first record, the group is copied (the undo of the
 * change; {@link ConsumerGroup#copy}). If the change's append fails, the copy is put back and the
 * client gets the mapped error: memory loses exactly that change, nothing is replayed. Writes
 * of a group still in flight after the failed one were built on top of it, so they are undone
 * with it (they are marked reverted; an append that fails is normally followed by the later ones
 * failing too, as the partition's leadership or disk went). Only if such a reverted write is
 * nevertheless appended does memory lack records the log has; then, and only then, the group is
 * rebuilt from the log ({@link #reloads()} counts these). A bug that interrupts a change half-way
 * (an exception while producing its records) is undone the same way: nothing is written, the
 * copy is put back, and the client gets UNKNOWN_SERVER_ERROR.
 *
 * <p><b>A heartbeat</b> (Kafka's three steps): (1) create or update the member; a changed
 * subscription, a changed regex resolution, or a change of the subscribed topics' metadata
 * bumps the group epoch; (2) if the group epoch is ahead of the target assignment epoch, the
 * assignor computes a new target assignment for every member; (3) the member's current
 * assignment moves towards its target ({@link Reconciler}), revoking before assigning.
 *
 * <p>Timers: a member's session expires {@code group.consumer.session.timeout.ms} after its
 * last heartbeat; a member that must revoke partitions is fenced if it has not within its
 * rebalance timeout. Both remove the member and bump the group epoch.
 *
 * <p>Not thread-safe: every method, timer and write completion runs on the shard's thread.
 */
public final class ConsumerGroupManager {
    private static final Logger LOG = LoggerFactory.getLogger(ConsumerGroupManager.class);
    /** Kafka never matches subscription regexes against its internal topics. */
    private static final Set<String> INTERNAL_TOPICS = Set.of("__consumer_offsets", "__transaction_state", "__share_group_state");
    /** Member types of ConsumerGroupDescribe v1 (KIP-1099). */
    private static final byte CONSUMER_MEMBER_TYPE = 1;

    private final int partition;
    private final ConsumerGroupSettings settings;
    private final Time time;
    private final CoordinatorTimer timer;
    private final GroupRecordLog log;
    private final Supplier<TopicsView> topics;
    private final ClassicGroups classicGroups;
    private final Map<String, ServerAssignor> assignors = new HashMap<>();
    private final Map<String, ConsumerGroup> groups = new HashMap<>();
    /** The last write of each group still in flight; responses that wrote nothing wait for it. */
    private final Map<String, CompletableFuture<ErrorCode>> pendingWrites = new HashMap<>();
    /** The writes of each group still in flight, oldest first, each with the undo of its change. */
    private final Map<String, java.util.ArrayDeque<InFlightWrite>> inFlight = new HashMap<>();
    /** Times a group was rebuilt from the log (a reverted write that was appended after all). */
    private long reloads;
    private final Map<String, Pattern> compiledRegexes = new HashMap<>();
    /** While false (loading or rebuilding) replayed records may contradict each other; afterwards a contradiction is a bug. */
    private boolean strict;
    private boolean loaded;

    public ConsumerGroupManager(int partition, ConsumerGroupSettings settings, Time time, CoordinatorTimer timer, GroupRecordLog log,
                                Supplier<TopicsView> topics, ClassicGroups classicGroups) {
        this.partition = partition;
        this.settings = settings;
        this.time = time;
        this.timer = timer;
        this.log = log;
        this.topics = topics;
        this.classicGroups = classicGroups;
        for (ServerAssignor assignor : List.of(new UniformAssignor(), new RangeAssignor())) {
            if (settings.assignors().contains(assignor.name())) {
                assignors.put(assignor.name(), assignor);
            }
        }
    }

    public int partition() {
        return partition;
    }

    public boolean has(String groupId) {
        return groups.containsKey(groupId);
    }

    public ConsumerGroup group(String groupId) {
        return groups.get(groupId);
    }

    public Collection<ConsumerGroup> groups() {
        return groups.values();
    }

    // ---------------------------------------------------------------- ConsumerGroupHeartbeat

    /** Handles a heartbeat; {@code respond} is called once, on the shard's thread, after the changes it caused are durable. */
    public void heartbeat(ConsumerGroupHeartbeatRequestData request, short version, String clientId, String clientHost,
                          Consumer<ConsumerGroupHeartbeatResponseData> respond) {
        Emitter out = new Emitter();
        ConsumerGroupHeartbeatResponseData response;
        try {
            if (!loaded) {
                throw new ApiError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, null);
            }
            validate(request, version);
            int epoch = request.memberEpoch();
            if (epoch == ConsumerGroupMember.LEAVE_GROUP_MEMBER_EPOCH || epoch == ConsumerGroupMember.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
                response = leave(request, out);
            } else {
                response = joinOrHeartbeat(request, clientId, clientHost, out);
            }
        } catch (ApiError e) {
            response = heartbeatError(e.error(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("ConsumerGroupHeartbeat of group {} member {} failed", request.groupId(), request.memberId(), e);
            discard(out);
            respond.accept(heartbeatError(ErrorCode.UNKNOWN_SERVER_ERROR, null));
            return;
        }
        ConsumerGroupHeartbeatResponseData answer = response;
        complete(request.groupId(), out, error -> respond.accept(error == ErrorCode.NONE ? answer : heartbeatError(error, null)));
    }

    private static ConsumerGroupHeartbeatResponseData heartbeatError(ErrorCode error, String message) {
        return new ConsumerGroupHeartbeatResponseData().setErrorCode(error.code()).setErrorMessage(message);
    }

    /** Kafka's request validation (GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid). */
    private void validate(ConsumerGroupHeartbeatRequestData request, short version) {
        int epoch = request.memberEpoch();
        if (version >= 1 || epoch > 0 || epoch == ConsumerGroupMember.LEAVE_GROUP_MEMBER_EPOCH) {
            requireNotEmpty(request.memberId(), "MemberId can't be empty.");
        }
        requireNotEmpty(request.groupId(), "GroupId can't be empty.");
        requireNotEmpty(request.instanceId(), "InstanceId can't be empty.");
        requireNotEmpty(request.rackId(), "RackId can't be empty.");
        if (epoch == 0) {
            if (request.rebalanceTimeoutMs() == -1) {
                throw invalid("RebalanceTimeoutMs must be provided in first request.");
            }
            if (request.topicPartitions() == null || !request.topicPartitions().isEmpty()) {
                throw invalid("TopicPartitions must be empty when (re-)joining.");
            }
            if (request.subscribedTopicNames() == null && request.subscribedTopicRegex() == null) {
                throw invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.");
            }
        } else if (epoch == ConsumerGroupMember.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            if (request.instanceId() == null) {
                throw invalid("InstanceId can't be null.");
            }
        } else if (epoch < ConsumerGroupMember.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            throw invalid("MemberEpoch is invalid.");
        }
        if (request.serverAssignor() != null && !assignors.containsKey(request.serverAssignor())) {
            throw new ApiError(ErrorCode.UNSUPPORTED_ASSIGNOR, "ServerAssignor " + request.serverAssignor()
                + " is not supported. Supported assignors: " + String.join(", ", settings.assignors()) + ".");
        }
    }

    private static void requireNotEmpty(String value, String message) {
        if (value != null && value.isEmpty()) {
            throw invalid(message);
        }
    }

    private static ApiError invalid(String message) {
        return new ApiError(ErrorCode.INVALID_REQUEST, message);
    }

    /** Who the heartbeat is from: the member as the group knows it (or a new one), and the static member it replaces. */
    private record Identity(ConsumerGroupMember member, ConsumerGroupMember replaced, boolean convertClassicGroup) {
    }

    private ConsumerGroupHeartbeatResponseData joinOrHeartbeat(ConsumerGroupHeartbeatRequestData request, String clientId, String clientHost,
                                                               Emitter out) {
        String groupId = request.groupId();
        String memberId = request.memberId().isEmpty() ? UUID.randomUUID().toString() : request.memberId();
        Assignment ownedReported = toAssignment(request.topicPartitions());
        Identity identity = identify(request, memberId, ownedReported);
        ConsumerGroupMember member = identity.member();
        ConsumerGroupMember updated = member.withMetadata(
            request.instanceId() != null ? request.instanceId() : member.instanceId(),
            request.rackId() != null ? request.rackId() : member.rackId(),
            clientId, clientHost,
            request.subscribedTopicNames() != null ? request.subscribedTopicNames() : member.subscribedTopicNames(),
            request.subscribedTopicRegex() != null ? request.subscribedTopicRegex() : member.subscribedTopicRegex(),
            request.rebalanceTimeoutMs() != -1 ? request.rebalanceTimeoutMs() : member.rebalanceTimeoutMs(),
            request.serverAssignor() != null ? request.serverAssignor() : member.serverAssignor());
        if (updated.subscribedTopicRegex() != null && !updated.subscribedTopicRegex().equals(member.subscribedTopicRegex())) {
            compile(updated.subscribedTopicRegex());
        }
        // Everything is validated: from here on, state changes.
        if (identity.convertClassicGroup()) {
            LOG.info("[GroupId {}] The empty classic group becomes a consumer group", groupId);
            classicGroups.remove(groupId);
            out.records.add(ConsumerGroupRecords.classicGroupTombstone(groupId));
        }
        TopicsView view = topics.get();
        boolean newGroup = !groups.containsKey(groupId);
        if (identity.replaced() != null) {
            replaceStaticMember(groupId, identity.replaced(), updated, out);
        } else if (!groups.containsKey(groupId) || groups.get(groupId).member(memberId) == null || updated.metadataDiffers(member)) {
            out.emit(ConsumerGroupRecords.memberMetadata(groupId, updated));
        }
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            throw new IllegalStateException("Group " + groupId + " does not exist after adding member " + memberId);
        }
        boolean bump = newGroup || group.groupEpoch == 0 || updated.subscriptionDiffers(member);
        bump |= updateRegexes(group, member, updated, view, out);
        maybeBumpGroupEpoch(group, bump, view, out);
        maybeComputeTargetAssignment(group, view, out);
        reconcile(group, memberId, ownedReported, out);
        scheduleSessionTimeout(groupId, memberId);

        ConsumerGroupMember after = group.member(memberId);
        ConsumerGroupHeartbeatResponseData response = new ConsumerGroupHeartbeatResponseData().setMemberId(memberId)
            .setMemberEpoch(after.memberEpoch()).setHeartbeatIntervalMs(settings.heartbeatIntervalMs());
        boolean fullRequest = request.memberEpoch() == 0
            || request.rebalanceTimeoutMs() != -1 && request.subscribedTopicNames() != null && request.topicPartitions() != null;
        if (fullRequest || !after.assignedPartitions().equals(member.assignedPartitions())) {
            response.setAssignment(responseAssignment(after.assignedPartitions()));
        }
        return response;
    }

    /** Finds the member a heartbeat comes from, applying Kafka's membership and epoch checks. Changes nothing. */
    private Identity identify(ConsumerGroupHeartbeatRequestData request, String memberId, Assignment ownedReported) {
        String groupId = request.groupId();
        int epoch = request.memberEpoch();
        ConsumerGroup group = groups.get(groupId);
        boolean convert = false;
        if (group == null) {
            Boolean classicEmpty = classicGroups.isEmpty(groupId);
            if (classicEmpty != null && !classicEmpty) {
                throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, "Group " + groupId + " is not a consumer group.");
            }
            if (epoch != 0) {
                throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, "Consumer group " + groupId + " not found.");
            }
            convert = classicEmpty != null;
        }
        if (group != null && group.members.size() >= settings.maxSize() && !group.members.containsKey(memberId)) {
            throw new ApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, "The consumer group has reached its maximum capacity of "
                + settings.maxSize() + " members.");
        }
        String instanceId = request.instanceId();
        if (instanceId == null) {
            ConsumerGroupMember member = group == null ? null : group.member(memberId);
            if (member == null) {
                if (epoch != 0) {
                    throw new ApiError(ErrorCode.UNKNOWN_MEMBER_ID, "Member " + memberId + " is not a member of group " + groupId + ".");
                }
                return new Identity(ConsumerGroupMember.newMember(memberId), null, convert);
            }
            validateEpoch(member, epoch, ownedReported);
            return new Identity(member, null, convert);
        }
        ConsumerGroupMember existing = group == null ? null : group.staticMember(instanceId);
        if (epoch != 0) {
            if (existing == null) {
                throw new ApiError(ErrorCode.UNKNOWN_MEMBER_ID, "Instance id " + instanceId + " is unknown.");
            }
            requireSameStaticMember(existing, memberId, instanceId);
            validateEpoch(existing, epoch, ownedReported);
            return new Identity(existing, null, convert);
        }
        if (existing == null) {
            ConsumerGroupMember member = group == null ? null : group.member(memberId);
            return new Identity(member != null ? member : ConsumerGroupMember.newMember(memberId), null, convert);
        }
        if (existing.memberId().equals(memberId)) {
            return new Identity(existing, null, convert); // the same process rejoins (e.g. after being fenced)
        }
        if (existing.memberEpoch() != ConsumerGroupMember.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            throw new ApiError(ErrorCode.UNRELEASED_INSTANCE_ID, "Static member " + memberId + " with instance id " + instanceId
                + " cannot join the group because the instance id is owned by " + existing.memberId() + " member.");
        }
        ConsumerGroupMember replacement = existing.withMemberId(memberId).withAssignment(0, 0, MemberState.STABLE,
            existing.assignedPartitions(), Assignment.EMPTY, existing.assignmentEpochs().extendTo(existing.assignedPartitions(), 0));
        return new Identity(replacement, existing, convert);
    }

    private static void requireSameStaticMember(ConsumerGroupMember existing, String memberId, String instanceId) {
        if (!existing.memberId().equals(memberId)) {
            throw new ApiError(ErrorCode.FENCED_INSTANCE_ID, "Static member " + memberId + " with instance id " + instanceId
                + " was fenced by member " + existing.memberId() + ".");
        }
    }

    /**
     * The epoch a member sends must be its current one, or its previous one if it still owns
     * only partitions of its current assignment (the response that bumped it was lost). Epoch 0
     * means the member lost its partitions and rejoins (KAFKA-19233).
     */
    private static void validateEpoch(ConsumerGroupMember member, int receivedEpoch, Assignment ownedReported) {
        if (receivedEpoch == 0) {
            return;
        }
        if (receivedEpoch > member.memberEpoch()) {
            throw new ApiError(ErrorCode.FENCED_MEMBER_EPOCH, "The consumer group member has a greater member epoch (" + receivedEpoch
                + ") than the one known by the group coordinator (" + member.memberEpoch() + "). The member must abandon all its partitions and rejoin.");
        }
        if (receivedEpoch < member.memberEpoch()
            && (receivedEpoch != member.previousMemberEpoch() || ownedReported == null || !ownedReported.isSubsetOf(member.assignedPartitions()))) {
            throw new ApiError(ErrorCode.FENCED_MEMBER_EPOCH, "The consumer group member has a smaller member epoch (" + receivedEpoch
                + ") than the one known by the group coordinator (" + member.memberEpoch() + "). The member must abandon all its partitions and rejoin.");
        }
    }

    /** A static member restarted (new member id, same instance id) after leaving with epoch -2: it takes over the old member's partitions. */
    private void replaceStaticMember(String groupId, ConsumerGroupMember replaced, ConsumerGroupMember replacement, Emitter out) {
        LOG.info("[GroupId {}] Static member {} with instance id {} replaces member {}", groupId, replacement.memberId(),
            replacement.instanceId(), replaced.memberId());
        ConsumerGroup group = groups.get(groupId);
        Assignment target = group.targetAssignment(replaced.memberId());
        cancelTimers(groupId, replaced.memberId());
        out.emit(ConsumerGroupRecords.currentAssignmentTombstone(groupId, replaced.memberId()));
        out.emit(ConsumerGroupRecords.targetAssignmentTombstone(groupId, replaced.memberId()));
        out.emit(ConsumerGroupRecords.memberMetadataTombstone(groupId, replaced.memberId()));
        out.emit(ConsumerGroupRecords.memberMetadata(groupId, replacement));
        out.emit(ConsumerGroupRecords.targetAssignment(groupId, replacement.memberId(), target));
        out.emit(ConsumerGroupRecords.currentAssignment(groupId, replacement));
    }

    /**
     * Resolves a new or changed regular expression, drops one no member uses any more, and
     * re-resolves all of the group's expressions when the topics changed. Returns whether a
     * resolution changed (which rebalances the group).
     */
    private boolean updateRegexes(ConsumerGroup group, ConsumerGroupMember before, ConsumerGroupMember after, TopicsView view, Emitter out) {
        boolean changed = false;
        String oldRegex = before.subscribedTopicRegex();
        String newRegex = after.subscribedTopicRegex();
        if (oldRegex != null && !oldRegex.equals(newRegex) && !group.regexUsedByOthers(oldRegex, after.memberId())
            && group.regexes.containsKey(oldRegex)) {
            out.emit(ConsumerGroupRecords.regexTombstone(group.groupId, oldRegex));
        }
        if (newRegex != null && !group.regexes.containsKey(newRegex)) {
            out.emit(ConsumerGroupRecords.regex(group.groupId, newRegex, resolve(newRegex, view)));
            changed = true;
        }
        if (group.topicsCheckedVersion != view.version()) {
            for (Map.Entry<String, ConsumerGroup.ResolvedRegex> regex : new ArrayList<>(group.regexes.entrySet())) {
                if (regex.getValue().version() == view.version()) {
                    continue;
                }
                ConsumerGroup.ResolvedRegex resolved = resolve(regex.getKey(), view);
                if (!resolved.topics().equals(regex.getValue().topics())) {
                    LOG.info("[GroupId {}] Regular expression {} now matches {}", group.groupId, regex.getKey(), resolved.topics());
                    out.emit(ConsumerGroupRecords.regex(group.groupId, regex.getKey(), resolved));
                    changed = true;
                }
            }
        }
        return changed;
    }

    private ConsumerGroup.ResolvedRegex resolve(String regex, TopicsView view) {
        Pattern pattern = compile(regex);
        SortedSet<String> matched = new TreeSet<>();
        for (String topic : view.topicNames()) {
            if (!INTERNAL_TOPICS.contains(topic) && pattern.matcher(topic).matches()) {
                matched.add(topic);
            }
        }
        return new ConsumerGroup.ResolvedRegex(matched, view.version(), time.milliseconds());
    }

    /**
     * Compiles a subscription pattern with RE2/J, as Kafka does (GroupMetadataManager): RE2's
     * syntax (no backreferences, lookaround or possessive quantifiers) and matching in time
     * linear in the topic name, so no client pattern can stall the shard's thread. A pattern
     * RE2/J refuses gets INVALID_REGULAR_EXPRESSION with Kafka's message.
     */
    private Pattern compile(String regex) {
        Pattern pattern = compiledRegexes.get(regex);
        if (pattern == null) {
            try {
                pattern = Pattern.compile(regex);
            } catch (PatternSyntaxException e) {
                throw new ApiError(ErrorCode.INVALID_REGULAR_EXPRESSION, "SubscribedTopicRegex `" + regex
                    + "` is not a valid regular expression: " + e.getDescription() + ".");
            }
            if (compiledRegexes.size() > 10_000) {
                compiledRegexes.clear(); // a cache, bounded; patterns are cheap to recompile
            }
            compiledRegexes.put(regex, pattern);
        }
        return pattern;
    }

    /** Bumps the group epoch if asked to, or if the subscribed topics' metadata changed since the last check. */
    private void maybeBumpGroupEpoch(ConsumerGroup group, boolean bump, TopicsView view, Emitter out) {
        if (!bump && group.topicsCheckedVersion == view.version()) {
            return;
        }
        long hash = subscribedTopicsHash(group.subscribedTopicNames(group.members.values()), view);
        group.topicsCheckedVersion = view.version();
        if (bump || hash != group.metadataHash) {
            out.emit(ConsumerGroupRecords.groupEpoch(group.groupId, group.groupEpoch + 1, hash));
            LOG.info("[GroupId {}] Bumped group epoch to {}", group.groupId, group.groupEpoch);
        }
    }

    /**
     * A 64-bit FNV-1a hash over name, id and partition count of each subscribed topic that
     * exists. Only compared with itself (a change means "rebalance"); Kafka's hash differs, so
     * a Kafka coordinator taking over rebalances once.
     */
    static long subscribedTopicsHash(Set<String> topicNames, TopicsView view) {
        long hash = 0xcbf29ce484222325L;
        for (String name : new TreeSet<>(topicNames)) {
            TopicsView.Topic topic = view.topic(name);
            if (topic == null) {
                continue;
            }
            for (byte b : (name + '\u0000' + topic.id() + '\u0000' + topic.partitionCount() + '\u0000').getBytes(StandardCharsets.UTF_8)) {
                hash ^= b & 0xff;
                hash *= 0x100000001b3L;
            }
        }
        return hash;
    }

    /** Computes a new target assignment if the group epoch moved past the target assignment epoch. */
    private void maybeComputeTargetAssignment(ConsumerGroup group, TopicsView view, Emitter out) {
        if (group.groupEpoch <= group.assignmentEpoch) {
            return;
        }
        String assignorName = ConsumerGroup.preferredAssignor(group.members.values(), settings.defaultAssignor());
        Map<String, Assignment> target = computeTargetAssignment(group, view, assignors.get(assignorName));
        for (Map.Entry<String, Assignment> member : target.entrySet()) {
            if (!member.getValue().equals(group.targetAssignment(member.getKey()))) {
                out.emit(ConsumerGroupRecords.targetAssignment(group.groupId, member.getKey(), member.getValue()));
            }
        }
        out.emit(ConsumerGroupRecords.targetAssignmentEpoch(group.groupId, group.groupEpoch, time.milliseconds()));
        LOG.info("[GroupId {}] Computed target assignment of epoch {} with the {} assignor: {}", group.groupId, group.assignmentEpoch,
            assignorName, target);
    }

    private static Map<String, Assignment> computeTargetAssignment(ConsumerGroup group, TopicsView view, ServerAssignor assignor) {
        SortedMap<String, ServerAssignor.MemberSpec> members = new TreeMap<>();
        Map<UUID, Integer> partitionCounts = new HashMap<>();
        for (ConsumerGroupMember member : group.members.values()) {
            Set<UUID> topicIds = new HashSet<>();
            for (String name : group.subscribedTopicNames(member)) {
                TopicsView.Topic topic = view.topic(name);
                if (topic != null) {
                    topicIds.add(topic.id());
                    partitionCounts.put(topic.id(), topic.partitionCount());
                }
            }
            members.put(member.memberId(), new ServerAssignor.MemberSpec(topicIds, group.targetAssignment(member.memberId())));
        }
        Map<String, Assignment> assigned = assignor.assign(new ServerAssignor.GroupSpec(members, partitionCounts));
        Map<String, Assignment> target = new TreeMap<>();
        Map<UUID, Map<Integer, String>> assignedTo = new HashMap<>();
        for (String memberId : members.keySet()) {
            Assignment assignment = assigned.getOrDefault(memberId, Assignment.EMPTY);
            for (Map.Entry<UUID, SortedSet<Integer>> topic : assignment.partitions().entrySet()) {
                for (int partitionIndex : topic.getValue()) {
                    String other = assignedTo.computeIfAbsent(topic.getKey(), t -> new HashMap<>()).put(partitionIndex, memberId);
                    if (other != null) {
                        throw new IllegalStateException("Assignor " + assignor.name() + " gave " + topic.getKey() + "-" + partitionIndex
                            + " of group " + group.groupId + " to both " + other + " and " + memberId);
                    }
                }
            }
            target.put(memberId, assignment);
        }
        return target;
    }

    /** Moves the member towards its target assignment and persists the step if it made one. */
    private void reconcile(ConsumerGroup group, String memberId, Assignment ownedReported, Emitter out) {
        ConsumerGroupMember member = group.member(memberId);
        ConsumerGroupMember next = Reconciler.reconcile(member, group.assignmentEpoch, group.targetAssignment(memberId), group::ownerOf,
            ownedReported);
        if (!next.assignmentDiffers(member)) {
            return;
        }
        out.emit(ConsumerGroupRecords.currentAssignment(group.groupId, next));
        LOG.debug("[GroupId {}] Member {} moved to epoch {} ({}), assigned {}, revoking {}", group.groupId, memberId, next.memberEpoch(),
            next.state(), next.assignedPartitions(), next.partitionsPendingRevocation());
        if (next.state() == MemberState.UNREVOKED_PARTITIONS) {
            scheduleRebalanceTimeout(group.groupId, memberId, next.memberEpoch(), next.rebalanceTimeoutMs());
        } else {
            timer.cancel(rebalanceTimerKey(group.groupId, memberId));
        }
    }

    private static Assignment toAssignment(List<ConsumerGroupHeartbeatRequestData.TopicPartitions> topicPartitions) {
        if (topicPartitions == null) {
            return null;
        }
        Map<UUID, List<Integer>> partitions = new HashMap<>();
        for (ConsumerGroupHeartbeatRequestData.TopicPartitions topic : topicPartitions) {
            partitions.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).addAll(topic.partitions());
        }
        return Assignment.of(partitions);
    }

    private static ConsumerGroupHeartbeatResponseData.Assignment responseAssignment(Assignment assignment) {
        ConsumerGroupHeartbeatResponseData.Assignment response = new ConsumerGroupHeartbeatResponseData.Assignment();
        for (Map.Entry<UUID, SortedSet<Integer>> topic : assignment.partitions().entrySet()) {
            response.topicPartitions().add(new ConsumerGroupHeartbeatResponseData.TopicPartitions().setTopicId(topic.getKey())
                .setPartitions(new ArrayList<>(topic.getValue())));
        }
        return response;
    }

    // ---------------------------------------------------------------- leaving and fencing

    private ConsumerGroupHeartbeatResponseData leave(ConsumerGroupHeartbeatRequestData request, Emitter out) {
        String groupId = request.groupId();
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, "Consumer group " + groupId + " not found.");
        }
        String memberId = request.memberId();
        ConsumerGroupMember member;
        if (request.instanceId() == null) {
            member = group.member(memberId);
            if (member == null) {
                throw new ApiError(ErrorCode.UNKNOWN_MEMBER_ID, "Member " + memberId + " is not a member of group " + groupId + ".");
            }
        } else {
            member = group.staticMember(request.instanceId());
            if (member == null) {
                throw new ApiError(ErrorCode.UNKNOWN_MEMBER_ID, "Instance id " + request.instanceId() + " is unknown.");
            }
            requireSameStaticMember(member, memberId, request.instanceId());
        }
        if (request.memberEpoch() == ConsumerGroupMember.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            // The static member will be back: it keeps its partitions (nobody else gets them) until its session expires.
            LOG.info("[GroupId {}] Static member {} with instance id {} left temporarily", groupId, memberId, member.instanceId());
            out.emit(ConsumerGroupRecords.currentAssignment(groupId, member.withAssignment(ConsumerGroupMember.LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                member.previousMemberEpoch(), member.state(), member.assignedPartitions(), Assignment.EMPTY,
                member.assignmentEpochs().extendTo(member.assignedPartitions(), 0))));
            timer.cancel(rebalanceTimerKey(groupId, memberId));
            scheduleSessionTimeout(groupId, memberId);
        } else {
            LOG.info("[GroupId {}] Member {} left the group", groupId, memberId);
            fence(group, member, out);
        }
        return new ConsumerGroupHeartbeatResponseData().setMemberId(memberId).setMemberEpoch(request.memberEpoch());
    }

    /** Removes a member and bumps the group epoch, so the others rebalance its partitions. */
    private void fence(ConsumerGroup group, ConsumerGroupMember member, Emitter out) {
        String groupId = group.groupId;
        cancelTimers(groupId, member.memberId());
        out.emit(ConsumerGroupRecords.currentAssignmentTombstone(groupId, member.memberId()));
        out.emit(ConsumerGroupRecords.targetAssignmentTombstone(groupId, member.memberId()));
        out.emit(ConsumerGroupRecords.memberMetadataTombstone(groupId, member.memberId()));
        String regex = member.subscribedTopicRegex();
        if (regex != null && !group.regexUsedByOthers(regex, member.memberId()) && group.regexes.containsKey(regex)) {
            out.emit(ConsumerGroupRecords.regexTombstone(groupId, regex));
        }
        TopicsView view = topics.get();
        long hash = subscribedTopicsHash(group.subscribedTopicNames(group.members.values()), view);
        group.topicsCheckedVersion = view.version();
        out.emit(ConsumerGroupRecords.groupEpoch(groupId, group.groupEpoch + 1, hash));
        if (group.members.isEmpty()) {
            // An empty group has nothing to assign: its target assignment is current (KAFKA-20442).
            out.emit(ConsumerGroupRecords.targetAssignmentEpoch(groupId, group.groupEpoch, time.milliseconds()));
        }
    }

    private static String sessionTimerKey(String groupId, String memberId) {
        return "session:" + groupId.length() + ":" + groupId + memberId;
    }

    private static String rebalanceTimerKey(String groupId, String memberId) {
        return "rebalance:" + groupId.length() + ":" + groupId + memberId;
    }

    private void cancelTimers(String groupId, String memberId) {
        timer.cancel(sessionTimerKey(groupId, memberId));
        timer.cancel(rebalanceTimerKey(groupId, memberId));
    }

    private void scheduleSessionTimeout(String groupId, String memberId) {
        timer.schedule(sessionTimerKey(groupId, memberId), settings.sessionTimeoutMs(), () -> {
            ConsumerGroup group = groups.get(groupId);
            ConsumerGroupMember member = group == null ? null : group.member(memberId);
            if (member == null) {
                return;
            }
            LOG.info("[GroupId {}] Member {} fenced: no heartbeat within the session timeout of {} ms", groupId, memberId,
                settings.sessionTimeoutMs());
            fenceOnTimer(group, member);
        });
    }

    /** Fences a member from a timer; a failure there is a bug, contained to the group. */
    private void fenceOnTimer(ConsumerGroup group, ConsumerGroupMember member) {
        Emitter out = new Emitter();
        try {
            fence(group, member, out);
        } catch (RuntimeException e) {
            LOG.error("[GroupId {}] Fencing member {} failed", group.groupId, member.memberId(), e);
            discard(out);
            return;
        }
        complete(group.groupId, out, error -> { });
    }

    /**
     * After a bug interrupted a change half-way: nothing of it is written, and its undo puts the
     * group back as it was before the change (writes in flight before it are unaffected).
     */
    private void discard(Emitter out) {
        if (out.undoTaken) {
            restore(out.undoGroupId, out.undo);
        }
    }

    private void scheduleRebalanceTimeout(String groupId, String memberId, int memberEpoch, int rebalanceTimeoutMs) {
        timer.schedule(rebalanceTimerKey(groupId, memberId), Math.max(0, rebalanceTimeoutMs), () -> {
            ConsumerGroup group = groups.get(groupId);
            ConsumerGroupMember member = group == null ? null : group.member(memberId);
            if (member == null || member.memberEpoch() != memberEpoch || member.state() != MemberState.UNREVOKED_PARTITIONS) {
                return;
            }
            LOG.info("[GroupId {}] Member {} fenced: it did not revoke its partitions of epoch {} within {} ms", groupId, memberId,
                memberEpoch, rebalanceTimeoutMs);
            fenceOnTimer(group, member);
        });
    }

    // ---------------------------------------------------------------- describe, list, offsets, delete

    /** ConsumerGroupDescribe of one group; GROUP_ID_NOT_FOUND if it is not a consumer group (clients then try DescribeGroups). */
    public ConsumerGroupDescribeResponseData.DescribedGroup describe(String groupId) {
        ConsumerGroupDescribeResponseData.DescribedGroup described = new ConsumerGroupDescribeResponseData.DescribedGroup().setGroupId(groupId);
        if (!loaded) {
            return described.setErrorCode(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS.code());
        }
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            String message = classicGroups.isEmpty(groupId) != null ? "Group " + groupId + " is not a consumer group."
                : "Group " + groupId + " not found.";
            return described.setErrorCode(ErrorCode.GROUP_ID_NOT_FOUND.code()).setErrorMessage(message);
        }
        TopicsView view = topics.get();
        described.setErrorCode(ErrorCode.NONE.code()).setGroupState(group.state().displayName).setGroupEpoch(group.groupEpoch)
            .setAssignmentEpoch(group.assignmentEpoch)
            .setAssignorName(ConsumerGroup.preferredAssignor(group.members.values(), settings.defaultAssignor()));
        for (ConsumerGroupMember member : group.members.values()) {
            described.members().add(new ConsumerGroupDescribeResponseData.Member().setMemberId(member.memberId())
                .setInstanceId(member.instanceId()).setRackId(member.rackId()).setMemberEpoch(member.memberEpoch())
                .setClientId(member.clientId()).setClientHost(member.clientHost())
                .setSubscribedTopicNames(new ArrayList<>(member.subscribedTopicNames())).setSubscribedTopicRegex(member.subscribedTopicRegex())
                .setAssignment(describeAssignment(member.assignedPartitions(), view))
                .setTargetAssignment(describeAssignment(group.targetAssignment(member.memberId()), view))
                .setMemberType(CONSUMER_MEMBER_TYPE));
        }
        return described;
    }

    private static ConsumerGroupDescribeResponseData.Assignment describeAssignment(Assignment assignment, TopicsView view) {
        ConsumerGroupDescribeResponseData.Assignment described = new ConsumerGroupDescribeResponseData.Assignment();
        for (Map.Entry<UUID, SortedSet<Integer>> topic : assignment.partitions().entrySet()) {
            TopicsView.Topic known = view.topic(topic.getKey());
            if (known != null) { // partitions of deleted topics are not shown, as in Kafka
                described.topicPartitions().add(new ConsumerGroupDescribeResponseData.TopicPartitions().setTopicId(topic.getKey())
                    .setTopicName(known.name()).setPartitions(new ArrayList<>(topic.getValue())));
            }
        }
        return described;
    }

    /** ListGroups entries of the consumer groups in the given states (display names, any case; empty: all). */
    public List<ListGroupsResponseData.ListedGroup> list(List<String> states) {
        List<ListGroupsResponseData.ListedGroup> listed = new ArrayList<>();
        for (ConsumerGroup group : new TreeMap<>(groups).values()) {
            String state = group.state().displayName;
            if (states.isEmpty() || states.stream().anyMatch(s -> s.equalsIgnoreCase(state))) {
                listed.add(new ListGroupsResponseData.ListedGroup().setGroupId(group.groupId).setProtocolType("consumer")
                    .setGroupState(state).setGroupType("consumer"));
            }
        }
        return listed;
    }

    /**
     * Validates a commit of {@code topic}-{@code partition} to consumer group {@code groupId};
     * NONE if it may proceed ({@code topic} null: the commit as a whole, without KIP-1251's
     * per-partition leniency). A commit without a member (epoch &lt; 0) is accepted only while
     * the group is empty. A member must use OffsetCommit v9+ and its current epoch, or (KIP-1251)
     * an older epoch no older than the one at which it got the partition, which it must still
     * own: its epoch may move on while a commit is in flight without the partition changing
     * hands. Otherwise STALE_MEMBER_EPOCH (ILLEGAL_GENERATION in a transaction).
     */
    public ErrorCode validateOffsetCommit(String groupId, String memberId, int memberEpoch, short apiVersion, boolean transactional,
                                          String topic, int partition) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            throw new IllegalStateException("Not a consumer group: " + groupId);
        }
        if (memberEpoch < 0 && group.members.isEmpty()) {
            return ErrorCode.NONE;
        }
        ConsumerGroupMember member = memberId == null ? null : group.member(memberId);
        if (member == null) {
            return ErrorCode.UNKNOWN_MEMBER_ID;
        }
        if (!transactional && apiVersion < 9) {
            return ErrorCode.UNSUPPORTED_VERSION;
        }
        if (memberEpoch == member.memberEpoch()) {
            return ErrorCode.NONE;
        }
        ErrorCode stale = transactional ? ErrorCode.ILLEGAL_GENERATION : ErrorCode.STALE_MEMBER_EPOCH;
        if (memberEpoch > member.memberEpoch() || topic == null) {
            return stale;
        }
        TopicsView.Topic known = topics.get().topic(topic);
        Integer assignedAt = known == null ? null : member.assignmentEpochs().epoch(known.id(), partition);
        return assignedAt != null && assignedAt <= memberEpoch ? ErrorCode.NONE : stale;
    }

    /** {@link #validateOffsetCommit(String, String, int, short, boolean, String, int)} of a commit as a whole. */
    public ErrorCode validateOffsetCommit(String groupId, String memberId, int memberEpoch, short apiVersion, boolean transactional) {
        return validateOffsetCommit(groupId, memberId, memberEpoch, apiVersion, transactional, null, -1);
    }

    /** Validates an OffsetFetch v9+ of a member; a fetch without member id and epoch (admin tools) is always allowed. */
    public ErrorCode validateOffsetFetch(String groupId, String memberId, int memberEpoch) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null || memberId == null && memberEpoch < 0) {
            return ErrorCode.NONE;
        }
        ConsumerGroupMember member = memberId == null ? null : group.member(memberId);
        if (member == null) {
            return ErrorCode.UNKNOWN_MEMBER_ID;
        }
        return memberEpoch == member.memberEpoch() ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
    }

    /** Whether {@code groupId} may be deleted: NONE, or NON_EMPTY_GROUP while it has members. */
    public ErrorCode validateDelete(String groupId) {
        ConsumerGroup group = groups.get(groupId);
        return group == null || group.members.isEmpty() ? ErrorCode.NONE : ErrorCode.NON_EMPTY_GROUP;
    }

    /**
     * Deletes an empty consumer group together with {@code extraRecords} (its offset
     * tombstones) in one batch; {@code done} gets NONE or the mapped write error.
     */
    public void delete(String groupId, List<byte[][]> extraRecords, Consumer<ErrorCode> done) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null || !group.members.isEmpty()) {
            throw new IllegalStateException("Cannot delete group " + groupId + ": " + (group == null ? "no such consumer group" : "it has members"));
        }
        Emitter out = new Emitter();
        out.records.addAll(extraRecords);
        for (String regex : new ArrayList<>(group.regexes.keySet())) {
            out.emit(ConsumerGroupRecords.regexTombstone(groupId, regex));
        }
        for (String memberId : new ArrayList<>(group.targetAssignment.keySet())) {
            out.emit(ConsumerGroupRecords.targetAssignmentTombstone(groupId, memberId));
        }
        out.emit(ConsumerGroupRecords.targetAssignmentEpochTombstone(groupId));
        out.emit(ConsumerGroupRecords.partitionMetadataTombstone(groupId));
        out.emit(ConsumerGroupRecords.groupTombstone(groupId));
        complete(groupId, out, done);
    }

    /**
     * A classic JoinGroup for {@code groupId}: INCONSISTENT_GROUP_PROTOCOL while consumer-protocol
     * members use it; an empty consumer group is deleted (its offsets stay) so the id can become
     * a classic group. {@code done} gets NONE when the join may proceed.
     */
    public void yieldToClassicGroup(String groupId, Consumer<ErrorCode> done) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            done.accept(ErrorCode.NONE);
            return;
        }
        if (!group.members.isEmpty()) {
            done.accept(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
            return;
        }
        LOG.info("[GroupId {}] The empty consumer group becomes a classic group", groupId);
        delete(groupId, List.of(), done);
    }

    // ---------------------------------------------------------------- writes

    /**
     * Collects the records of one change of one group and applies each to memory as it is
     * produced; the first one takes the undo (a copy of the group as it was, or null if the
     * group did not exist).
     */
    private final class Emitter {
        final List<byte[][]> records = new ArrayList<>();
        private boolean undoTaken;
        private String undoGroupId;
        private ConsumerGroup undo;

        void emit(byte[][] record) {
            if (!undoTaken) {
                Reader key = new Reader(ByteBuffer.wrap(record[0]));
                key.readShort();
                undoGroupId = key.readString(key.readShort());
                ConsumerGroup before = groups.get(undoGroupId);
                undo = before == null ? null : before.copy();
                undoTaken = true;
            }
            records.add(record);
            replay(ByteBuffer.wrap(record[0]), record[1] == null ? null : ByteBuffer.wrap(record[1]));
        }
    }

    /** A group's write in flight: the group before its change, and whether a failed earlier write undid it already. */
    private static final class InFlightWrite {
        final ConsumerGroup before;
        final boolean undoable;
        boolean reverted;

        InFlightWrite(Emitter out) {
            this.before = out.undo;
            this.undoable = out.undoTaken;
        }
    }

    /** Times a group had to be rebuilt from the log; on the shard's thread. */
    public long reloads() {
        return reloads;
    }

    /** Puts the group back as it was before a change, with fresh timers for its members. */
    private void restore(String groupId, ConsumerGroup before) {
        ConsumerGroup current = groups.remove(groupId);
        if (current != null) {
            for (String memberId : current.members.keySet()) {
                cancelTimers(groupId, memberId);
            }
        }
        if (before != null) {
            groups.put(groupId, before);
            startTimers(before);
        }
    }

    /**
     * Writes {@code records} (already applied) and then calls {@code done} with NONE or the
     * mapped write error. With no records, waits for the group's write in flight, if any.
     */
    private void complete(String groupId, Emitter out, Consumer<ErrorCode> done) {
        List<byte[][]> records = out.records;
        if (records.isEmpty()) {
            CompletableFuture<ErrorCode> pending = pendingWrites.get(groupId);
            if (pending == null) {
                done.accept(ErrorCode.NONE);
            } else {
                pending.thenAccept(done);
            }
            return;
        }
        CompletableFuture<ErrorCode> written = new CompletableFuture<>();
        pendingWrites.put(groupId, written);
        InFlightWrite write = new InFlightWrite(out);
        java.util.ArrayDeque<InFlightWrite> writes = inFlight.computeIfAbsent(groupId, g -> new java.util.ArrayDeque<>());
        writes.addLast(write);
        log.append(records, error -> {
            pendingWrites.remove(groupId, written);
            List<InFlightWrite> later = new ArrayList<>();
            boolean after = false;
            for (InFlightWrite each : writes) {
                if (after) {
                    later.add(each);
                }
                after |= each == write;
            }
            writes.remove(write);
            if (writes.isEmpty()) {
                inFlight.remove(groupId, writes);
            }
            ErrorCode mapped = mapWriteError(error);
            if (error != ErrorCode.NONE) {
                onWriteFailed(groupId, write, later, records.size(), error);
            } else if (write.reverted) {
                LOG.warn("[GroupId {}] A write undone after an earlier failure was appended to __consumer_offsets-{} after all; "
                    + "rebuilding the group from the log", groupId, partition);
                reloadGroup(groupId);
            }
            written.complete(mapped);
            done.accept(mapped);
        });
    }

    /** Undoes a failed write's change and, with it, the changes of the group's later writes still in flight (built on it). */
    private void onWriteFailed(String groupId, InFlightWrite write, List<InFlightWrite> laterWrites, int recordCount,
                               ErrorCode error) {
        if (write.reverted) {
            LOG.warn("[GroupId {}] Writing {} record(s) to __consumer_offsets-{} failed with {}; its change was already undone",
                groupId, recordCount, partition, error);
            return;
        }
        LOG.warn("[GroupId {}] Writing {} record(s) to __consumer_offsets-{} failed with {}; undoing the change{}", groupId, recordCount,
            partition, error, laterWrites.isEmpty() ? "" : " and the " + laterWrites.size() + " later one(s) in flight");
        for (InFlightWrite later : laterWrites) {
            later.reverted = true;
        }
        if (write.undoable) {
            restore(groupId, write.before);
        } else {
            reloadGroup(groupId);
        }
    }

    /** Kafka's mapping of internal-topic write errors to errors group clients understand. */
    static ErrorCode mapWriteError(ErrorCode error) {
        return switch (error) {
            case NONE -> ErrorCode.NONE;
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT -> ErrorCode.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> ErrorCode.NOT_COORDINATOR;
            default -> ErrorCode.UNKNOWN_SERVER_ERROR;
        };
    }

    /** Rebuilds one group from the log after a failed write, so memory holds only what is durable. */
    private void reloadGroup(String groupId) {
        reloads++;
        ConsumerGroup dropped = groups.remove(groupId);
        if (dropped != null) {
            for (String memberId : dropped.members.keySet()) {
                cancelTimers(groupId, memberId);
            }
        }
        boolean wasStrict = strict;
        strict = false;
        try {
            log.replay((key, value) -> {
                Reader reader = new Reader(key.duplicate());
                short keyVersion = reader.readShort();
                if (ConsumerGroupRecords.isConsumerGroupRecord(keyVersion) && groupId.equals(reader.readString(reader.readShort()))) {
                    replay(key, value);
                }
            });
        } finally {
            strict = wasStrict;
        }
        ConsumerGroup reloaded = groups.get(groupId);
        if (reloaded != null) {
            startTimers(reloaded);
        }
    }

    // ---------------------------------------------------------------- replay

    /** Applies one record (key with its type prefix; value with its version prefix, or null). */
    public void replay(ByteBuffer key, ByteBuffer value) {
        Reader keyReader = new Reader(key.duplicate());
        short keyVersion = keyReader.readShort();
        replay(keyVersion, keyReader, value);
    }

    /** Applies one record whose key type was already read from {@code keyReader}. */
    public void replay(short keyVersion, Reader keyReader, ByteBuffer value) {
        Reader valueReader = null;
        short valueVersion = 0;
        if (value != null) {
            valueReader = new Reader(value.duplicate());
            valueVersion = valueReader.readShort();
        }
        switch (keyVersion) {
            case ConsumerGroupRecords.GROUP_METADATA -> replayGroupEpoch(new ConsumerGroupMetadataKey(keyReader, keyVersion).groupId(),
                valueReader == null ? null : new ConsumerGroupMetadataValue(valueReader, valueVersion));
            case ConsumerGroupRecords.PARTITION_METADATA -> { } // legacy subscription metadata: superseded by the epoch record's hash
            case ConsumerGroupRecords.MEMBER_METADATA -> replayMemberMetadata(new ConsumerGroupMemberMetadataKey(keyReader, keyVersion),
                valueReader == null ? null : new ConsumerGroupMemberMetadataValue(valueReader, valueVersion));
            case ConsumerGroupRecords.TARGET_ASSIGNMENT_METADATA -> {
                String groupId = new ConsumerGroupTargetAssignmentMetadataKey(keyReader, keyVersion).groupId();
                if (valueReader != null) {
                    groupFor(groupId).assignmentEpoch = new ConsumerGroupTargetAssignmentMetadataValue(valueReader, valueVersion).assignmentEpoch();
                }
            }
            case ConsumerGroupRecords.TARGET_ASSIGNMENT_MEMBER -> replayTargetAssignment(new ConsumerGroupTargetAssignmentMemberKey(keyReader, keyVersion),
                valueReader == null ? null : new ConsumerGroupTargetAssignmentMemberValue(valueReader, valueVersion));
            case ConsumerGroupRecords.CURRENT_MEMBER_ASSIGNMENT -> replayCurrentAssignment(
                new ConsumerGroupCurrentMemberAssignmentKey(keyReader, keyVersion),
                valueReader == null ? null : new ConsumerGroupCurrentMemberAssignmentValue(valueReader, valueVersion));
            case ConsumerGroupRecords.REGULAR_EXPRESSION -> replayRegex(new ConsumerGroupRegularExpressionKey(keyReader, keyVersion),
                valueReader == null ? null : new ConsumerGroupRegularExpressionValue(valueReader, valueVersion));
            default -> throw new IllegalArgumentException("Not a consumer group record type: " + keyVersion);
        }
    }

    private ConsumerGroup groupFor(String groupId) {
        return groups.computeIfAbsent(groupId, ConsumerGroup::new);
    }

    private void replayGroupEpoch(String groupId, ConsumerGroupMetadataValue value) {
        if (value == null) {
            ConsumerGroup removed = groups.remove(groupId);
            if (removed != null) {
                for (String memberId : removed.members.keySet()) {
                    cancelTimers(groupId, memberId);
                }
            }
            return;
        }
        ConsumerGroup group = groupFor(groupId);
        group.groupEpoch = value.epoch();
        group.metadataHash = value.metadataHash();
    }

    private void replayMemberMetadata(ConsumerGroupMemberMetadataKey key, ConsumerGroupMemberMetadataValue value) {
        if (value == null) {
            ConsumerGroup group = groups.get(key.groupId());
            if (group != null) {
                group.removeMember(key.memberId());
            }
            return;
        }
        ConsumerGroup group = groupFor(key.groupId());
        ConsumerGroupMember member = group.member(key.memberId());
        if (member == null) {
            member = ConsumerGroupMember.newMember(key.memberId());
        }
        group.updateMember(member.withMetadata(value.instanceId(), value.rackId(), value.clientId(), value.clientHost(),
            value.subscribedTopicNames(), value.subscribedTopicRegex(), value.rebalanceTimeoutMs(), value.serverAssignor()), strict);
    }

    private void replayTargetAssignment(ConsumerGroupTargetAssignmentMemberKey key, ConsumerGroupTargetAssignmentMemberValue value) {
        if (value == null) {
            ConsumerGroup group = groups.get(key.groupId());
            if (group != null) {
                group.targetAssignment.remove(key.memberId());
            }
            return;
        }
        Map<UUID, List<Integer>> partitions = new HashMap<>();
        for (ConsumerGroupTargetAssignmentMemberValue.TopicPartition topic : value.topicPartitions()) {
            partitions.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).addAll(topic.partitions());
        }
        groupFor(key.groupId()).targetAssignment.put(key.memberId(), Assignment.of(partitions));
    }

    private void replayCurrentAssignment(ConsumerGroupCurrentMemberAssignmentKey key, ConsumerGroupCurrentMemberAssignmentValue value) {
        ConsumerGroup group = value == null ? groups.get(key.groupId()) : groupFor(key.groupId());
        ConsumerGroupMember member = group == null ? null : group.member(key.memberId());
        if (value == null) {
            if (member != null) {
                group.updateMember(member.withAssignment(0, 0, MemberState.STABLE, Assignment.EMPTY, Assignment.EMPTY, AssignmentEpochs.EMPTY), strict);
            }
            return;
        }
        if (member == null) {
            member = ConsumerGroupMember.newMember(key.memberId());
        }
        Map<UUID, Map<Integer, Integer>> epochs = new HashMap<>();
        // Records without epochs (written before KIP-1251) count every partition as assigned at the member epoch, as Kafka does.
        int defaultEpoch = Math.max(value.memberEpoch(), 0);
        Assignment assigned = currentPartitions(value.assignedPartitions(), epochs, defaultEpoch);
        Assignment revoking = currentPartitions(value.partitionsPendingRevocation(), epochs, defaultEpoch);
        group.updateMember(member.withAssignment(value.memberEpoch(), value.previousMemberEpoch(), MemberState.fromValue(value.state()),
            assigned, revoking, AssignmentEpochs.of(epochs)), strict);
    }

    private static Assignment currentPartitions(List<ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions> topics,
                                                Map<UUID, Map<Integer, Integer>> epochs, int defaultEpoch) {
        Map<UUID, List<Integer>> partitions = new HashMap<>();
        for (ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions topic : topics) {
            partitions.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).addAll(topic.partitions());
            List<Integer> topicEpochs = topic.assignmentEpochs();
            boolean aligned = topicEpochs != null && topicEpochs.size() == topic.partitions().size();
            for (int i = 0; i < topic.partitions().size(); i++) {
                epochs.computeIfAbsent(topic.topicId(), t -> new HashMap<>()).put(topic.partitions().get(i), aligned ? topicEpochs.get(i) : defaultEpoch);
            }
        }
        return Assignment.of(partitions);
    }

    private void replayRegex(ConsumerGroupRegularExpressionKey key, ConsumerGroupRegularExpressionValue value) {
        if (value == null) {
            ConsumerGroup group = groups.get(key.groupId());
            if (group != null) {
                group.regexes.remove(key.regularExpression());
            }
            return;
        }
        groupFor(key.groupId()).regexes.put(key.regularExpression(),
            new ConsumerGroup.ResolvedRegex(new TreeSet<>(value.topics()), value.version(), value.timestamp()));
    }

    /** After the partition was replayed: members get a full session to heartbeat again; revoking members get their rebalance timeout. */
    public void onLoaded() {
        for (ConsumerGroup group : groups.values()) {
            startTimers(group);
        }
        strict = true;
        loaded = true;
    }

    private void startTimers(ConsumerGroup group) {
        for (ConsumerGroupMember member : group.members.values()) {
            scheduleSessionTimeout(group.groupId, member.memberId());
            if (member.state() == MemberState.UNREVOKED_PARTITIONS) {
                scheduleRebalanceTimeout(group.groupId, member.memberId(), member.memberEpoch(), member.rebalanceTimeoutMs());
            }
        }
    }
}
