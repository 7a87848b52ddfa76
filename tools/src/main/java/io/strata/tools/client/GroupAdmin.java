package io.strata.tools.client;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.Reader;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ConsumerGroupDescribeRequestData;
import io.strata.protocol.message.ConsumerGroupDescribeResponseData;
import io.strata.protocol.message.ConsumerProtocolAssignment;
import io.strata.protocol.message.DeleteGroupsRequestData;
import io.strata.protocol.message.DeleteGroupsResponseData;
import io.strata.protocol.message.DescribeGroupsRequestData;
import io.strata.protocol.message.DescribeGroupsResponseData;
import io.strata.protocol.message.FindCoordinatorRequestData;
import io.strata.protocol.message.FindCoordinatorResponseData;
import io.strata.protocol.message.ListGroupsRequestData;
import io.strata.protocol.message.ListGroupsResponseData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.OffsetCommitResponseData;
import io.strata.protocol.message.OffsetFetchRequestData;
import io.strata.protocol.message.OffsetFetchResponseData;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Consumer group administration over the Kafka group APIs, as Kafka's Admin client does it:
 * ListGroups goes to every broker (each lists the groups it coordinates); everything about one
 * group goes to the group's coordinator, found with FindCoordinator. NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS and lost connections make the client
 * look the coordinator up again and retry until the request timeout; other errors are thrown
 * at once (or, for DeleteGroups, reported per group).
 *
 * <p>Describing a group first asks ConsumerGroupDescribe (KIP-848 groups) if the coordinator
 * offers it; GROUP_ID_NOT_FOUND there means "not a consumer group", and the group is described
 * with DescribeGroups, whose member assignments are decoded as the consumer protocol's
 * {@code version (int16) + ConsumerProtocolAssignment}.
 *
 * <p>Offsets are committed as Kafka's admin commits them: generation -1 and no member id, which
 * the coordinator accepts only while the group has no members.
 *
 * <p>Not thread-safe: one owner at a time, like the {@link ClusterClient} it uses.
 */
public final class GroupAdmin {
    /** FindCoordinator key type of groups (1 is transactions). */
    static final byte GROUP_KEY_TYPE = 0;
    /** The embedded protocol type of consumers; other types (e.g. "connect") have assignments the client cannot read. */
    static final String CONSUMER_PROTOCOL_TYPE = "consumer";

    private final ClusterClient cluster;
    private final Map<String, Integer> coordinators = new HashMap<>();

    public GroupAdmin(ClusterClient cluster) {
        this.cluster = cluster;
    }

    /** The outcome for one group of DeleteGroups. */
    public record GroupResult(String groupId, ErrorCode error, String message) {
        public boolean failed() {
            return error != ErrorCode.NONE;
        }

        /** "NAME: message" for a failure. */
        public String describe() {
            return KafkaErrors.describe(error, message);
        }
    }

    /** One request to a group's coordinator; it throws {@link BrokerErrorException} for error codes. */
    @FunctionalInterface
    interface CoordinatorCall<T> {
        T call(KafkaConnection connection, int coordinatorId);
    }

    // ---------------------------------------------------------------- list

    /**
     * Every group of the cluster, sorted by id: ListGroups to every broker.
     *
     * @throws UnsupportedApiException if a broker does not support ListGroups
     * @throws BrokerErrorException    if a broker answers with an error that persists for the request timeout
     */
    public List<GroupListing> listGroups() {
        List<GroupListing> groups = new ArrayList<>();
        for (int nodeId : new TreeMap<>(cluster.brokers()).keySet()) {
            groups.addAll(listGroups(nodeId));
        }
        groups.sort(Comparator.comparing(GroupListing::groupId));
        return groups;
    }

    private List<GroupListing> listGroups(int nodeId) {
        long deadlineMs = cluster.time().hiResClockMs() + cluster.settings().requestTimeoutMs();
        while (true) {
            KafkaConnection connection = cluster.connection(nodeId);
            short version = connection.versions().version(ApiMessageType.LIST_GROUPS);
            ListGroupsResponseData response = connection.send(new ListGroupsRequestData(), ListGroupsResponseData.class);
            ErrorCode error = ErrorCode.forCode(response.errorCode());
            if (error == ErrorCode.NONE) {
                List<GroupListing> groups = new ArrayList<>();
                for (ListGroupsResponseData.ListedGroup group : response.groups()) {
                    groups.add(new GroupListing(group.groupId(), group.protocolType(), version >= 4 ? group.groupState() : null,
                        version >= 5 ? group.groupType() : null, nodeId));
                }
                return groups;
            }
            if (!error.isRetriable() || cluster.time().hiResClockMs() >= deadlineMs) {
                throw new BrokerErrorException("cannot list the groups of broker " + nodeId, error, null);
            }
            cluster.backoff();
        }
    }

    // ---------------------------------------------------------------- describe

    /**
     * The group as its coordinator describes it; a group that does not exist is described with
     * state Dead and no members.
     *
     * @throws BrokerErrorException    for errors other than the coordinator moving or loading
     * @throws UnsupportedApiException if the coordinator supports neither ConsumerGroupDescribe nor DescribeGroups
     */
    public GroupDescription describeGroup(String groupId) {
        return callCoordinator(groupId, "cannot describe group " + groupId, (connection, coordinatorId) -> {
            if (connection.versions().supports(ApiMessageType.CONSUMER_GROUP_DESCRIBE)) {
                GroupDescription described = describeConsumerGroup(connection, coordinatorId, groupId);
                if (described != null) {
                    return described;
                }
            }
            return describeClassicGroup(connection, coordinatorId, groupId);
        });
    }

    /** ConsumerGroupDescribe; null if the group is not a consumer group (GROUP_ID_NOT_FOUND, or UNSUPPORTED_VERSION). */
    private GroupDescription describeConsumerGroup(KafkaConnection connection, int coordinatorId, String groupId) {
        ConsumerGroupDescribeRequestData request = new ConsumerGroupDescribeRequestData().setGroupIds(new ArrayList<>(List.of(groupId)));
        ConsumerGroupDescribeResponseData response = connection.send(request, ConsumerGroupDescribeResponseData.class);
        for (ConsumerGroupDescribeResponseData.DescribedGroup group : response.groups()) {
            if (!groupId.equals(group.groupId())) {
                continue;
            }
            ErrorCode error = ErrorCode.forCode(group.errorCode());
            if (error == ErrorCode.GROUP_ID_NOT_FOUND || error == ErrorCode.UNSUPPORTED_VERSION) {
                return null; // a classic group, or consumer groups are not enabled: Kafka's admin falls back the same way
            }
            if (error != ErrorCode.NONE) {
                throw new BrokerErrorException("cannot describe group " + groupId, error, group.errorMessage());
            }
            List<GroupMember> members = new ArrayList<>();
            for (ConsumerGroupDescribeResponseData.Member member : group.members()) {
                members.add(new GroupMember(member.memberId(), member.instanceId(), member.clientId(), member.clientHost(),
                    partitions(member.assignment()), partitions(member.targetAssignment()), member.memberEpoch()));
            }
            return new GroupDescription(groupId, GroupDescription.CONSUMER, group.groupState(), CONSUMER_PROTOCOL_TYPE,
                group.assignorName() == null ? "" : group.assignorName(), coordinatorId, connection.address(), group.groupEpoch(),
                group.assignmentEpoch(), members);
        }
        throw new ClientException("the ConsumerGroupDescribe response from " + connection.address() + " does not mention group " + groupId);
    }

    private static List<TopicPartition> partitions(ConsumerGroupDescribeResponseData.Assignment assignment) {
        List<TopicPartition> partitions = new ArrayList<>();
        if (assignment == null) {
            return partitions;
        }
        for (ConsumerGroupDescribeResponseData.TopicPartitions topic : assignment.topicPartitions()) {
            for (int partition : topic.partitions()) {
                partitions.add(new TopicPartition(topic.topicName(), partition));
            }
        }
        return partitions;
    }

    private GroupDescription describeClassicGroup(KafkaConnection connection, int coordinatorId, String groupId) {
        DescribeGroupsRequestData request = new DescribeGroupsRequestData().setGroups(new ArrayList<>(List.of(groupId)));
        DescribeGroupsResponseData response = connection.send(request, DescribeGroupsResponseData.class);
        for (DescribeGroupsResponseData.DescribedGroup group : response.groups()) {
            if (!groupId.equals(group.groupId())) {
                continue;
            }
            ErrorCode error = ErrorCode.forCode(group.errorCode());
            if (error == ErrorCode.GROUP_ID_NOT_FOUND) {
                return new GroupDescription(groupId, GroupDescription.CLASSIC, GroupDescription.DEAD, "", "", coordinatorId,
                    connection.address(), -1, -1, List.of());
            }
            if (error != ErrorCode.NONE) {
                throw new BrokerErrorException("cannot describe group " + groupId, error, group.errorMessage());
            }
            boolean consumerProtocol = CONSUMER_PROTOCOL_TYPE.equals(group.protocolType()) || group.protocolType().isEmpty();
            List<GroupMember> members = new ArrayList<>();
            for (DescribeGroupsResponseData.DescribedGroupMember member : group.members()) {
                List<TopicPartition> assignment = consumerProtocol ? decodeAssignment(member.memberAssignment()) : List.of();
                members.add(new GroupMember(member.memberId(), member.groupInstanceId(), member.clientId(), member.clientHost(),
                    assignment, null, -1));
            }
            return new GroupDescription(groupId, GroupDescription.CLASSIC, group.groupState(), group.protocolType(), group.protocolData(),
                coordinatorId, connection.address(), -1, -1, members);
        }
        throw new ClientException("the DescribeGroups response from " + connection.address() + " does not mention group " + groupId);
    }

    /**
     * The partitions of a classic consumer's assignment: {@code version (int16)} then
     * ConsumerProtocolAssignment read at that version (newer versions only add fields, so a
     * version above ours is read as our newest). Empty bytes (no assignment yet) and bytes that
     * are not a consumer protocol assignment give no partitions: another client's private data
     * must not stop the group from being described.
     */
    static List<TopicPartition> decodeAssignment(byte[] bytes) {
        if (bytes == null || bytes.length < Short.BYTES) {
            return List.of();
        }
        try {
            Reader reader = new Reader(ByteBuffer.wrap(bytes));
            short version = reader.readShort();
            if (version < 0) {
                return List.of();
            }
            short readable = (short) Math.min(version, ConsumerProtocolAssignment.HIGHEST_SUPPORTED_VERSION);
            ConsumerProtocolAssignment assignment = new ConsumerProtocolAssignment(reader, readable);
            List<TopicPartition> partitions = new ArrayList<>();
            for (ConsumerProtocolAssignment.TopicPartition topic : assignment.assignedPartitions()) {
                for (int partition : topic.partitions()) {
                    partitions.add(new TopicPartition(topic.topic(), partition));
                }
            }
            return partitions;
        } catch (ProtocolException | IllegalArgumentException e) {
            return List.of();
        }
    }

    // ---------------------------------------------------------------- offsets

    /**
     * Every offset the group has committed, by partition (OffsetFetch with null topics).
     *
     * @throws BrokerErrorException for a group-level or partition-level error
     */
    public Map<TopicPartition, Long> committedOffsets(String groupId) {
        return callCoordinator(groupId, "cannot fetch the committed offsets of group " + groupId, (connection, coordinatorId) -> {
            short version = connection.versions().version(ApiMessageType.OFFSET_FETCH);
            OffsetFetchRequestData request = new OffsetFetchRequestData();
            if (version >= 8) {
                request.groups().add(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(groupId).setTopics(null));
            } else {
                request.setGroupId(groupId).setTopics(null);
            }
            OffsetFetchResponseData response = connection.send(request, OffsetFetchResponseData.class);
            return version >= 8 ? groupOffsets(groupId, response) : legacyOffsets(groupId, response);
        });
    }

    private static Map<TopicPartition, Long> groupOffsets(String groupId, OffsetFetchResponseData response) {
        Map<TopicPartition, Long> offsets = new TreeMap<>();
        for (OffsetFetchResponseData.OffsetFetchResponseGroup group : response.groups()) {
            if (!groupId.equals(group.groupId())) {
                continue;
            }
            throwIfError(groupId, ErrorCode.forCode(group.errorCode()), null);
            for (OffsetFetchResponseData.OffsetFetchResponseTopics topic : group.topics()) {
                for (OffsetFetchResponseData.OffsetFetchResponsePartitions partition : topic.partitions()) {
                    TopicPartition key = new TopicPartition(topic.name(), partition.partitionIndex());
                    throwIfError(groupId, ErrorCode.forCode(partition.errorCode()), key);
                    if (partition.committedOffset() >= 0) {
                        offsets.put(key, partition.committedOffset());
                    }
                }
            }
        }
        return offsets;
    }

    private static Map<TopicPartition, Long> legacyOffsets(String groupId, OffsetFetchResponseData response) {
        throwIfError(groupId, ErrorCode.forCode(response.errorCode()), null);
        Map<TopicPartition, Long> offsets = new TreeMap<>();
        for (OffsetFetchResponseData.OffsetFetchResponseTopic topic : response.topics()) {
            for (OffsetFetchResponseData.OffsetFetchResponsePartition partition : topic.partitions()) {
                TopicPartition key = new TopicPartition(topic.name(), partition.partitionIndex());
                throwIfError(groupId, ErrorCode.forCode(partition.errorCode()), key);
                if (partition.committedOffset() >= 0) {
                    offsets.put(key, partition.committedOffset());
                }
            }
        }
        return offsets;
    }

    private static void throwIfError(String groupId, ErrorCode error, TopicPartition partition) {
        // GROUP_ID_NOT_FOUND: a group that does not exist has no offsets.
        if (error != ErrorCode.NONE && error != ErrorCode.GROUP_ID_NOT_FOUND) {
            throw new BrokerErrorException("cannot fetch the committed offsets of group " + groupId
                + (partition == null ? "" : " for " + partition), error, null);
        }
    }

    /**
     * Commits offsets for the group as an admin does (generation -1, no member id): the
     * coordinator accepts them only while the group has no active members.
     *
     * @throws BrokerErrorException for the first partition the coordinator refused (UNKNOWN_MEMBER_ID if the group is active)
     */
    public void commitOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        callCoordinator(groupId, "cannot commit offsets for group " + groupId, (connection, coordinatorId) -> {
            connection.versions().version(ApiMessageType.OFFSET_COMMIT);
            OffsetCommitRequestData request = new OffsetCommitRequestData().setGroupId(groupId).setGenerationIdOrMemberEpoch(-1).setMemberId("");
            Map<String, OffsetCommitRequestData.OffsetCommitRequestTopic> topics = new LinkedHashMap<>();
            for (Map.Entry<TopicPartition, Long> entry : new TreeMap<>(offsets).entrySet()) {
                topics.computeIfAbsent(entry.getKey().topic(), name -> {
                    OffsetCommitRequestData.OffsetCommitRequestTopic topic = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(name);
                    request.topics().add(topic);
                    return topic;
                }).partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(entry.getKey().partition())
                    .setCommittedOffset(entry.getValue())
                    .setCommittedMetadata(""));
            }
            OffsetCommitResponseData response = connection.send(request, OffsetCommitResponseData.class);
            int answered = 0;
            for (OffsetCommitResponseData.OffsetCommitResponseTopic topic : response.topics()) {
                for (OffsetCommitResponseData.OffsetCommitResponsePartition partition : topic.partitions()) {
                    answered++;
                    ErrorCode error = ErrorCode.forCode(partition.errorCode());
                    if (error != ErrorCode.NONE) {
                        throw new BrokerErrorException("cannot commit the offset of " + new TopicPartition(topic.name(), partition.partitionIndex())
                            + " for group " + groupId, error, null);
                    }
                }
            }
            if (answered != offsets.size()) {
                throw new ClientException("the OffsetCommit response from " + connection.address() + " answers " + answered + " of "
                    + offsets.size() + " partitions");
            }
            return null;
        });
    }

    // ---------------------------------------------------------------- delete

    /**
     * Deletes groups and their committed offsets; each group succeeds or fails on its own
     * (NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND, ...).
     *
     * @throws UnsupportedApiException if the coordinator does not support DeleteGroups
     */
    public List<GroupResult> deleteGroups(List<String> groupIds) {
        List<GroupResult> results = new ArrayList<>();
        for (String groupId : groupIds) {
            try {
                results.add(callCoordinator(groupId, "cannot delete group " + groupId, (connection, coordinatorId) -> deleteGroup(connection, groupId)));
            } catch (UnsupportedApiException e) {
                throw e;
            } catch (BrokerErrorException e) {
                results.add(new GroupResult(groupId, e.error(), null));
            }
        }
        return results;
    }

    private static GroupResult deleteGroup(KafkaConnection connection, String groupId) {
        short version = connection.versions().version(ApiMessageType.DELETE_GROUPS);
        DeleteGroupsRequestData request = new DeleteGroupsRequestData().setGroupsNames(new ArrayList<>(List.of(groupId)));
        DeleteGroupsResponseData response = connection.send(request, DeleteGroupsResponseData.class);
        for (DeleteGroupsResponseData.DeletableGroupResult result : response.results()) {
            if (groupId.equals(result.groupId())) {
                ErrorCode error = ErrorCode.forCode(result.errorCode());
                String message = version >= 3 ? result.errorMessage() : null;
                if (isCoordinatorError(error)) {
                    throw new BrokerErrorException("cannot delete group " + groupId, error, message);
                }
                return new GroupResult(groupId, error, message);
            }
        }
        throw new ClientException("the DeleteGroups response from " + connection.address() + " does not mention group " + groupId);
    }

    // ---------------------------------------------------------------- coordinator

    /**
     * Runs {@code call} against the group's coordinator. Coordinator errors and lost
     * connections forget the coordinator, back off and retry until the request timeout.
     */
    <T> T callCoordinator(String groupId, String attempted, CoordinatorCall<T> call) {
        long deadlineMs = cluster.time().hiResClockMs() + cluster.settings().requestTimeoutMs();
        while (true) {
            ClientException failure;
            try {
                int coordinatorId = coordinator(groupId);
                return call.call(cluster.connection(coordinatorId), coordinatorId);
            } catch (UnsupportedApiException e) {
                throw e;
            } catch (BrokerErrorException e) {
                if (!isCoordinatorError(e.error())) {
                    throw e;
                }
                failure = e;
            } catch (ClientException e) {
                failure = new ClientException(attempted + ": " + e.getMessage(), e);
            }
            coordinators.remove(groupId);
            if (cluster.time().hiResClockMs() >= deadlineMs) {
                throw failure;
            }
            cluster.backoff();
        }
    }

    static boolean isCoordinatorError(ErrorCode error) {
        return error == ErrorCode.NOT_COORDINATOR || error == ErrorCode.COORDINATOR_NOT_AVAILABLE || error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    }

    /** The coordinator's node id, from the cache or FindCoordinator; refreshes the metadata if the node is new. */
    private int coordinator(String groupId) {
        Integer known = coordinators.get(groupId);
        if (known != null) {
            return known;
        }
        KafkaConnection connection = cluster.anyConnection();
        short version = connection.versions().version(ApiMessageType.FIND_COORDINATOR);
        FindCoordinatorRequestData request = new FindCoordinatorRequestData().setKeyType(version >= 1 ? GROUP_KEY_TYPE : 0);
        if (version >= 4) {
            request.coordinatorKeys().add(groupId);
        } else {
            request.setKey(groupId);
        }
        FindCoordinatorResponseData response = connection.send(request, FindCoordinatorResponseData.class);
        ErrorCode error;
        String message;
        int nodeId;
        if (version >= 4) {
            FindCoordinatorResponseData.Coordinator found = response.coordinators().stream()
                .filter(coordinator -> groupId.equals(coordinator.key())).findFirst()
                .orElseThrow(() -> new ClientException("the FindCoordinator response from " + connection.address()
                    + " does not mention group " + groupId));
            error = ErrorCode.forCode(found.errorCode());
            message = found.errorMessage();
            nodeId = found.nodeId();
        } else {
            error = ErrorCode.forCode(response.errorCode());
            message = version >= 1 ? response.errorMessage() : null;
            nodeId = response.nodeId();
        }
        if (error != ErrorCode.NONE) {
            throw new BrokerErrorException("cannot find the coordinator of group " + groupId, error, message);
        }
        if (!cluster.brokers().containsKey(nodeId)) {
            cluster.metadata(List.of(), false);
        }
        coordinators.put(groupId, nodeId);
        return nodeId;
    }

    /** "Classic" or "Consumer" for a ListGroups type ("classic", "consumer"), as Kafka's tools print types; "-" if unknown. */
    public static String displayType(String type) {
        if (type == null || type.isEmpty()) {
            return "-";
        }
        return type.substring(0, 1).toUpperCase(Locale.ROOT) + type.substring(1).toLowerCase(Locale.ROOT);
    }
}
