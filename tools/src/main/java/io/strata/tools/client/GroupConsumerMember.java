package io.strata.tools.client;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.OffsetCommitResponseData;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One member of a consumer group under the consumer protocol (KIP-848), subscribed to one
 * topic. The coordinator computes the assignment; the member only heartbeats and follows it:
 * <ol>
 *   <li>It joins with member epoch 0 and a member id of its own (ConsumerGroupHeartbeat v1
 *       lets the client choose it, as Kafka's consumer does with a random UUID).</li>
 *   <li>Every heartbeat lists the subscription and the partitions the member owns. A response
 *       carrying an assignment replaces the owned set: partitions that left it are revoked
 *       (the {@link Listener} commits their positions first), new ones are handed to the
 *       listener. The next heartbeat goes out at once to acknowledge the new set, so the
 *       coordinator can give revoked partitions to their next owner without waiting a whole
 *       heartbeat interval.</li>
 *   <li>UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH: the member has lost its partitions (no
 *       commit: another member may own them by now) and rejoins with epoch 0.</li>
 *   <li>{@link #leave()} sends epoch -1, so the coordinator reassigns at once instead of after
 *       the session timeout.</li>
 * </ol>
 *
 * <p>Offsets are committed with the member id and the current member epoch, which the
 * coordinator checks against the member's state; a refused commit (stale epoch, unknown member)
 * is reported, not thrown: the partitions' next owner resumes from the last accepted commit.
 *
 * <p>Heartbeats happen only inside {@link #poll(long)}: the owner must call it more often than
 * the heartbeat interval the coordinator announced (5 s by default), as a Kafka consumer must
 * call {@code poll}.
 *
 * <p>Not thread-safe: one owner at a time, like the {@link ClusterClient} it uses.
 */
public final class GroupConsumerMember {
    /** Kafka's {@code max.poll.interval.ms} default, sent as the rebalance timeout. */
    public static final int DEFAULT_REBALANCE_TIMEOUT_MS = 300_000;
    /** Until the coordinator says otherwise (its {@code group.consumer.heartbeat.interval.ms} default). */
    static final int INITIAL_HEARTBEAT_INTERVAL_MS = 5_000;
    static final int JOIN_EPOCH = 0;
    static final int LEAVE_EPOCH = -1;

    /** What the owner of the member does when the owned partitions change. */
    public interface Listener {
        /** The member is about to give up {@code partitions}: stop reading them and commit their positions now. */
        void onRevoked(Set<Integer> partitions);

        /** The member lost {@code partitions} without the chance to commit (it was fenced): stop reading them. */
        void onLost(Set<Integer> partitions);

        /** The member may read {@code partitions} from now on, in addition to those it kept. */
        void onAssigned(Set<Integer> partitions);
    }

    /** The outcome of a commit. */
    public enum CommitResult { COMMITTED, NOT_A_MEMBER, REFUSED }

    private final ClusterClient cluster;
    private final GroupAdmin coordinatorClient;
    private final String groupId;
    private final String memberId;
    private final int rebalanceTimeoutMs;
    private final Listener listener;
    private TopicInfo topic;
    private int memberEpoch = JOIN_EPOCH;
    private int heartbeatIntervalMs = INITIAL_HEARTBEAT_INTERVAL_MS;
    private long nextHeartbeatMs;
    private final TreeSet<Integer> owned = new TreeSet<>();
    private boolean left;

    /**
     * @param memberId the member id the client chose (Kafka's consumer uses a random UUID in
     *                 its base64 form); kept for the member's whole life, also across rejoins
     */
    public GroupConsumerMember(ClusterClient cluster, String groupId, TopicInfo topic, String memberId, int rebalanceTimeoutMs, Listener listener) {
        if (groupId == null || groupId.isEmpty()) {
            throw new IllegalArgumentException("group id must not be empty");
        }
        if (memberId == null || memberId.isEmpty()) {
            throw new IllegalArgumentException("member id must not be empty");
        }
        if (!topic.hasTopicId()) {
            throw new ClientException("the broker reports no topic id for " + topic.name() + ": the consumer protocol needs one");
        }
        if (rebalanceTimeoutMs <= 0) {
            throw new IllegalArgumentException("rebalance timeout must be positive: rebalanceTimeoutMs=" + rebalanceTimeoutMs);
        }
        this.cluster = cluster;
        this.coordinatorClient = new GroupAdmin(cluster);
        this.groupId = groupId;
        this.topic = topic;
        this.memberId = memberId;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.listener = listener;
    }

    public String memberId() {
        return memberId;
    }

    /** The current member epoch: 0 before the coordinator has accepted the member. */
    public int memberEpoch() {
        return memberEpoch;
    }

    /** The partitions of the topic the member owns now. */
    public Set<Integer> owned() {
        return Collections.unmodifiableSet(new TreeSet<>(owned));
    }

    /** When the next heartbeat is due, on the cluster client's clock. */
    public long nextHeartbeatMs() {
        return nextHeartbeatMs;
    }

    /**
     * Heartbeats if one is due, applying whatever the coordinator answers.
     *
     * @throws UnsupportedApiException if the coordinator does not speak the consumer protocol
     * @throws BrokerErrorException    for an error the member cannot recover from (e.g. GROUP_MAX_SIZE_REACHED)
     */
    public void poll(long nowMs) {
        if (left) {
            throw new IllegalStateException("member " + memberId + " has left group " + groupId);
        }
        if (nowMs < nextHeartbeatMs) {
            return;
        }
        ConsumerGroupHeartbeatResponseData response;
        try {
            response = coordinatorClient.callCoordinator(groupId, "cannot heartbeat to group " + groupId,
                (connection, coordinatorId) -> sendHeartbeat(connection, memberEpoch));
        } catch (BrokerErrorException | UnsupportedApiException e) {
            throw e;
        } catch (ClientException e) {
            // The coordinator stayed unreachable for a request timeout; keep the partitions and
            // try again, as Kafka's consumer does until its session is gone.
            nextHeartbeatMs = cluster.time().hiResClockMs() + ClientLimits.RETRY_BACKOFF_MS;
            return;
        }
        handleHeartbeat(response);
    }

    private ConsumerGroupHeartbeatResponseData sendHeartbeat(KafkaConnection connection, int epoch) {
        connection.versions().version(ApiMessageType.CONSUMER_GROUP_HEARTBEAT); // v1: the client chooses the member id
        ConsumerGroupHeartbeatRequestData request = new ConsumerGroupHeartbeatRequestData()
            .setGroupId(groupId)
            .setMemberId(memberId)
            .setMemberEpoch(epoch);
        if (epoch != LEAVE_EPOCH) {
            // A full heartbeat every time: the coordinator accepts unchanged fields, and a
            // retried or lost response never leaves it with a stale view of the member.
            ConsumerGroupHeartbeatRequestData.TopicPartitions ownedPartitions = new ConsumerGroupHeartbeatRequestData.TopicPartitions()
                .setTopicId(topic.topicId())
                .setPartitions(new ArrayList<>(owned));
            request.setRebalanceTimeoutMs(rebalanceTimeoutMs)
                .setSubscribedTopicNames(new ArrayList<>(List.of(topic.name())))
                .setTopicPartitions(owned.isEmpty() ? new ArrayList<>() : new ArrayList<>(List.of(ownedPartitions)));
        }
        ConsumerGroupHeartbeatResponseData response = connection.send(request, ConsumerGroupHeartbeatResponseData.class);
        ErrorCode error = ErrorCode.forCode(response.errorCode());
        if (GroupAdmin.isCoordinatorError(error)) {
            throw new BrokerErrorException("cannot heartbeat to group " + groupId, error, response.errorMessage());
        }
        return response;
    }

    private void handleHeartbeat(ConsumerGroupHeartbeatResponseData response) {
        long nowMs = cluster.time().hiResClockMs();
        ErrorCode error = ErrorCode.forCode(response.errorCode());
        switch (error) {
            case NONE -> {
                memberEpoch = response.memberEpoch();
                if (response.heartbeatIntervalMs() > 0) {
                    heartbeatIntervalMs = response.heartbeatIntervalMs();
                }
                boolean changed = response.assignment() != null && reconcile(response.assignment());
                nextHeartbeatMs = changed ? nowMs : nowMs + heartbeatIntervalMs;
            }
            case UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH -> {
                loseAll();
                memberEpoch = JOIN_EPOCH;
                nextHeartbeatMs = nowMs;
            }
            default -> {
                if (!error.isRetriable()) {
                    throw new BrokerErrorException("cannot heartbeat to group " + groupId, error, response.errorMessage());
                }
                nextHeartbeatMs = nowMs + ClientLimits.RETRY_BACKOFF_MS;
            }
        }
    }

    /** Adopts an assignment; returns whether the owned set changed. */
    private boolean reconcile(ConsumerGroupHeartbeatResponseData.Assignment assignment) {
        TreeSet<Integer> target = new TreeSet<>();
        for (ConsumerGroupHeartbeatResponseData.TopicPartitions assigned : assignment.topicPartitions()) {
            if (topic.topicId().equals(assigned.topicId())) {
                target.addAll(assigned.partitions());
            }
        }
        if (target.equals(owned)) {
            return false;
        }
        if (!target.isEmpty() && target.last() >= topic.partitionCount()) {
            topic = cluster.topic(topic.name(), false); // partitions were added since the member looked
        }
        TreeSet<Integer> revoked = new TreeSet<>(owned);
        revoked.removeAll(target);
        TreeSet<Integer> added = new TreeSet<>(target);
        added.removeAll(owned);
        if (!revoked.isEmpty()) {
            listener.onRevoked(Collections.unmodifiableSet(revoked));
        }
        owned.clear();
        owned.addAll(target);
        if (!added.isEmpty()) {
            listener.onAssigned(Collections.unmodifiableSet(added));
        }
        return true;
    }

    private void loseAll() {
        if (owned.isEmpty()) {
            return;
        }
        TreeSet<Integer> lost = new TreeSet<>(owned);
        owned.clear();
        listener.onLost(Collections.unmodifiableSet(lost));
    }

    /** The topic as the member last saw it (refreshed when the assignment names new partitions). */
    public TopicInfo topic() {
        return topic;
    }

    /**
     * Commits the next offsets to read, by partition, as this member at its current epoch.
     *
     * @return COMMITTED, NOT_A_MEMBER (not joined yet, nothing sent) or REFUSED (the
     *         coordinator answered a stale epoch or an unknown member: the member is being
     *         fenced and its next heartbeat rejoins)
     * @throws BrokerErrorException for any other refusal
     */
    public CommitResult commit(Map<Integer, Long> offsets) {
        if (offsets.isEmpty()) {
            return CommitResult.COMMITTED;
        }
        if (memberEpoch <= JOIN_EPOCH) {
            return CommitResult.NOT_A_MEMBER;
        }
        return coordinatorClient.callCoordinator(groupId, "cannot commit offsets for group " + groupId,
            (connection, coordinatorId) -> sendCommit(connection, offsets));
    }

    private CommitResult sendCommit(KafkaConnection connection, Map<Integer, Long> offsets) {
        connection.versions().version(ApiMessageType.OFFSET_COMMIT);
        OffsetCommitRequestData.OffsetCommitRequestTopic requestTopic = new OffsetCommitRequestData.OffsetCommitRequestTopic()
            .setName(topic.name());
        for (Map.Entry<Integer, Long> entry : new TreeMap<>(offsets).entrySet()) {
            requestTopic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                .setPartitionIndex(entry.getKey())
                .setCommittedOffset(entry.getValue())
                .setCommittedMetadata(""));
        }
        OffsetCommitRequestData request = new OffsetCommitRequestData()
            .setGroupId(groupId)
            .setMemberId(memberId)
            .setGenerationIdOrMemberEpoch(memberEpoch)
            .setTopics(new ArrayList<>(List.of(requestTopic)));
        OffsetCommitResponseData response = connection.send(request, OffsetCommitResponseData.class);
        CommitResult result = CommitResult.COMMITTED;
        for (OffsetCommitResponseData.OffsetCommitResponseTopic topicResponse : response.topics()) {
            for (OffsetCommitResponseData.OffsetCommitResponsePartition partition : topicResponse.partitions()) {
                ErrorCode error = ErrorCode.forCode(partition.errorCode());
                if (error == ErrorCode.NONE) {
                    continue;
                }
                if (GroupAdmin.isCoordinatorError(error)) {
                    throw new BrokerErrorException("cannot commit offsets for group " + groupId, error, null);
                }
                if (isFencing(error)) {
                    result = CommitResult.REFUSED;
                    continue;
                }
                throw new BrokerErrorException("cannot commit the offset of " + topic.name() + "-" + partition.partitionIndex()
                    + " for group " + groupId, error, null);
            }
        }
        return result;
    }

    private static boolean isFencing(ErrorCode error) {
        return error == ErrorCode.STALE_MEMBER_EPOCH || error == ErrorCode.UNKNOWN_MEMBER_ID || error == ErrorCode.FENCED_MEMBER_EPOCH
            || error == ErrorCode.ILLEGAL_GENERATION || error == ErrorCode.REBALANCE_IN_PROGRESS;
    }

    /** The offsets the group has committed for partitions of the topic. */
    public Map<Integer, Long> committedOffsets() {
        Map<Integer, Long> offsets = new TreeMap<>();
        for (Map.Entry<TopicPartition, Long> entry : coordinatorClient.committedOffsets(groupId).entrySet()) {
            if (entry.getKey().topic().equals(topic.name())) {
                offsets.put(entry.getKey().partition(), entry.getValue());
            }
        }
        return offsets;
    }

    /**
     * Leaves the group (member epoch -1) so its partitions move at once. Best effort: a failure
     * only means the coordinator notices after the session timeout.
     */
    public void leave() {
        if (left) {
            return;
        }
        left = true;
        owned.clear();
        if (memberEpoch <= JOIN_EPOCH) {
            return;
        }
        try {
            coordinatorClient.callCoordinator(groupId, "cannot leave group " + groupId,
                (connection, coordinatorId) -> sendHeartbeat(connection, LEAVE_EPOCH));
        } catch (ClientException e) {
            // Best effort, see above.
        }
    }
}
