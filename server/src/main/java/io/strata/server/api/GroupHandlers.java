package io.strata.server.api;

import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.group.OffsetAndMetadata;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DeleteGroupsRequestData;
import io.strata.protocol.message.DeleteGroupsResponseData;
import io.strata.protocol.message.DescribeGroupsRequestData;
import io.strata.protocol.message.DescribeGroupsResponseData;
import io.strata.protocol.message.FindCoordinatorRequestData;
import io.strata.protocol.message.FindCoordinatorResponseData;
import io.strata.protocol.message.HeartbeatRequestData;
import io.strata.protocol.message.HeartbeatResponseData;
import io.strata.protocol.message.JoinGroupRequestData;
import io.strata.protocol.message.JoinGroupResponseData;
import io.strata.protocol.message.LeaveGroupRequestData;
import io.strata.protocol.message.LeaveGroupResponseData;
import io.strata.protocol.message.ListGroupsRequestData;
import io.strata.protocol.message.ListGroupsResponseData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.OffsetCommitResponseData;
import io.strata.protocol.message.OffsetDeleteRequestData;
import io.strata.protocol.message.OffsetDeleteResponseData;
import io.strata.protocol.message.OffsetFetchRequestData;
import io.strata.protocol.message.OffsetFetchResponseData;
import io.strata.protocol.message.SyncGroupRequestData;
import io.strata.protocol.message.SyncGroupResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The classic group APIs: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups, OffsetDelete. Each
 * is a thin adapter between the wire format (per version) and the {@link GroupCoordinator}.
 */
final class GroupHandlers {
    private final BrokerContext context;
    private final InternalTopic offsetsTopic;

    GroupHandlers(BrokerContext context, InternalTopic offsetsTopic) {
        this.context = context;
        this.offsetsTopic = offsetsTopic;
    }

    void register(Map<ApiMessageType, ApiHandler> handlers) {
        handlers.put(ApiMessageType.FIND_COORDINATOR, this::findCoordinator);
        handlers.put(ApiMessageType.JOIN_GROUP, this::joinGroup);
        handlers.put(ApiMessageType.SYNC_GROUP, this::syncGroup);
        handlers.put(ApiMessageType.HEARTBEAT, this::heartbeat);
        handlers.put(ApiMessageType.LEAVE_GROUP, this::leaveGroup);
        handlers.put(ApiMessageType.OFFSET_COMMIT, this::offsetCommit);
        handlers.put(ApiMessageType.OFFSET_FETCH, this::offsetFetch);
        handlers.put(ApiMessageType.DESCRIBE_GROUPS, this::describeGroups);
        handlers.put(ApiMessageType.LIST_GROUPS, this::listGroups);
        handlers.put(ApiMessageType.DELETE_GROUPS, this::deleteGroups);
        handlers.put(ApiMessageType.OFFSET_DELETE, this::offsetDelete);
    }

    private GroupCoordinator coordinator() {
        return context.groupCoordinator();
    }

    // ---------------------------------------------------------------- FindCoordinator

    /** Where a coordinator key lives: its error, and the leader of its shard's partition when NONE. */
    private record CoordinatorLocation(ErrorCode error, int nodeId, String host, int port) {
        static CoordinatorLocation failed(ErrorCode error) {
            return new CoordinatorLocation(error, -1, "", -1);
        }
    }

    /**
     * FindCoordinator (v0-v6, batched from v4): the coordinator of a group or transactional id is
     * the leader of its shard's partition of {@code __consumer_offsets} / {@code __transaction_state},
     * answered with that broker's endpoint on the request's listener, as Kafka does. The first
     * request creates the topic (COORDINATOR_NOT_AVAILABLE meanwhile); a partition without a leader,
     * or a leader that is unregistered, fenced or without the listener, is COORDINATOR_NOT_AVAILABLE.
     */
    private void findCoordinator(Request request) {
        FindCoordinatorRequestData body = request.body(FindCoordinatorRequestData.class);
        short version = request.apiVersion();
        List<String> keys = version >= 4 ? body.coordinatorKeys() : List.of(body.key());
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        for (String key : keys) {
            CoordinatorLocation location = locate(body.keyType(), key, request.listenerName());
            ErrorCode error = location.error();
            if (version >= 4) {
                response.coordinators().add(new FindCoordinatorResponseData.Coordinator().setKey(key).setErrorCode(error.code())
                    .setNodeId(location.nodeId()).setHost(location.host()).setPort(location.port())
                    .setErrorMessage(error == ErrorCode.NONE ? null : error.name()));
            } else {
                response.setErrorCode(error.code()).setNodeId(location.nodeId()).setHost(location.host()).setPort(location.port())
                    .setErrorMessage(version >= 1 && error != ErrorCode.NONE ? error.name() : null);
            }
        }
        request.respond(response);
    }

    private CoordinatorLocation locate(byte keyType, String key, String listenerName) {
        if (keyType != 0 && keyType != 1 || key == null || key.isEmpty()) {
            return CoordinatorLocation.failed(ErrorCode.INVALID_REQUEST);
        }
        InternalTopic topic = keyType == 0 ? offsetsTopic : context.transactionStateTopic();
        if (!topic.ensureReady()) {
            return CoordinatorLocation.failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
        }
        int shard = keyType == 0 ? coordinator().partitionFor(key) : context.transactionCoordinator().partitionFor(key);
        MetadataImage image = context.image();
        TopicImage topicImage = image.topic(topic.name());
        io.strata.metadata.PartitionRegistration partition = topicImage == null ? null : topicImage.partition(shard);
        BrokerRegistration leader = partition == null || !partition.hasLeader() ? null : image.brokers().get(partition.leader());
        BrokerRegistration.Endpoint endpoint = leader == null || leader.fenced() ? null : leader.endpoint(listenerName);
        if (endpoint == null) {
            return CoordinatorLocation.failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
        }
        return new CoordinatorLocation(ErrorCode.NONE, leader.id(), endpoint.host(), endpoint.port());
    }

    // ---------------------------------------------------------------- membership

    private void joinGroup(Request request) {
        JoinGroupRequestData body = request.body(JoinGroupRequestData.class);
        short version = request.apiVersion();
        String host = request.clientAddress() == null ? "" : "/" + request.clientAddress().getAddress().getHostAddress();
        coordinator().joinGroup(body, version, request.header().clientId() == null ? "" : request.header().clientId(), host)
            .whenComplete((response, error) -> {
                JoinGroupResponseData answer = error != null
                    ? new JoinGroupResponseData().setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()).setMemberId(body.memberId()).setGenerationId(-1)
                    : response;
                if (version < 7 && answer.protocolName() == null) {
                    answer.setProtocolName("");
                }
                if (version < 7) {
                    answer.setProtocolType(null);
                }
                if (answer.leader() == null) {
                    answer.setLeader("");
                }
                request.respond(answer);
            });
    }

    private void syncGroup(Request request) {
        SyncGroupRequestData body = request.body(SyncGroupRequestData.class);
        short version = request.apiVersion();
        coordinator().syncGroup(body).whenComplete((response, error) -> {
            SyncGroupResponseData answer = error != null ? new SyncGroupResponseData().setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()) : response;
            if (version < 5) {
                answer.setProtocolType(null).setProtocolName(null);
            }
            if (answer.assignment() == null) {
                answer.setAssignment(new byte[0]);
            }
            request.respond(answer);
        });
    }

    private void heartbeat(Request request) {
        HeartbeatRequestData body = request.body(HeartbeatRequestData.class);
        coordinator().heartbeat(body.groupId(), body.memberId(), body.groupInstanceId(), body.generationId())
            .whenComplete((error, failure) -> request.respond(new HeartbeatResponseData()
                .setErrorCode((failure != null ? ErrorCode.UNKNOWN_SERVER_ERROR : error).code())));
    }

    private void leaveGroup(Request request) {
        LeaveGroupRequestData body = request.body(LeaveGroupRequestData.class);
        short version = request.apiVersion();
        List<String[]> identities = new ArrayList<>();
        if (version >= 3) {
            for (LeaveGroupRequestData.MemberIdentity member : body.members()) {
                identities.add(new String[] {member.memberId(), member.groupInstanceId()});
            }
        } else {
            identities.add(new String[] {body.memberId(), null});
        }
        coordinator().leaveGroup(body.groupId(), identities).whenComplete((errors, failure) -> {
            LeaveGroupResponseData response = new LeaveGroupResponseData();
            if (failure != null) {
                request.respond(response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()));
                return;
            }
            if (version >= 3) {
                boolean groupLevel = errors.stream().anyMatch(e -> e == ErrorCode.NOT_COORDINATOR || e == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
                if (groupLevel) {
                    response.setErrorCode(errors.get(0).code());
                } else {
                    for (int i = 0; i < identities.size(); i++) {
                        response.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId(identities.get(i)[0])
                            .setGroupInstanceId(identities.get(i)[1]).setErrorCode(errors.get(i).code()));
                    }
                }
            } else {
                response.setErrorCode(errors.get(0).code());
            }
            request.respond(response);
        });
    }

    // ---------------------------------------------------------------- offsets

    /**
     * OffsetCommit. From v10 topics are named by id (KIP-848's topic ids): each id is resolved
     * against the current image before the commit, an unknown id answers UNKNOWN_TOPIC_ID for its
     * partitions (as Kafka), and the response names topics by id again.
     */
    private void offsetCommit(Request request) {
        OffsetCommitRequestData body = request.body(OffsetCommitRequestData.class);
        short version = request.apiVersion();
        List<OffsetCommitResponseData.OffsetCommitResponseTopic> unknownIds = new ArrayList<>();
        Map<String, java.util.UUID> idsByName = new LinkedHashMap<>();
        if (version >= 10) {
            MetadataImage image = context.image();
            List<OffsetCommitRequestData.OffsetCommitRequestTopic> known = new ArrayList<>();
            for (OffsetCommitRequestData.OffsetCommitRequestTopic topic : body.topics()) {
                TopicImage byId = image.topic(topic.topicId());
                if (byId == null) {
                    OffsetCommitResponseData.OffsetCommitResponseTopic unknown = new OffsetCommitResponseData.OffsetCommitResponseTopic()
                        .setTopicId(topic.topicId());
                    topic.partitions().forEach(partition -> unknown.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
                        .setPartitionIndex(partition.partitionIndex()).setErrorCode(ErrorCode.UNKNOWN_TOPIC_ID.code())));
                    unknownIds.add(unknown);
                } else {
                    known.add(topic.setName(byId.name()));
                    idsByName.put(byId.name(), byId.id());
                }
            }
            body.setTopics(known);
        }
        coordinator().commitOffsets(body, version).whenComplete((results, failure) -> {
            OffsetCommitResponseData response = new OffsetCommitResponseData();
            Map<String, OffsetCommitResponseData.OffsetCommitResponseTopic> topics = new LinkedHashMap<>();
            if (failure != null) {
                results = new ArrayList<>();
                for (OffsetCommitRequestData.OffsetCommitRequestTopic topic : body.topics()) {
                    for (OffsetCommitRequestData.OffsetCommitRequestPartition partition : topic.partitions()) {
                        results.add(new GroupCoordinator.CommitResult(topic.name(), partition.partitionIndex(), ErrorCode.UNKNOWN_SERVER_ERROR));
                    }
                }
            }
            for (GroupCoordinator.CommitResult result : results) {
                topics.computeIfAbsent(result.topic(), name -> {
                    OffsetCommitResponseData.OffsetCommitResponseTopic topic = new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(name)
                        .setTopicId(idsByName.getOrDefault(name, Uuids.ZERO));
                    response.topics().add(topic);
                    return topic;
                }).partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
                    .setPartitionIndex(result.partition()).setErrorCode(result.error().code()));
            }
            response.topics().addAll(unknownIds);
            request.respond(response);
        });
    }

    private void offsetFetch(Request request) {
        OffsetFetchRequestData body = request.body(OffsetFetchRequestData.class);
        short version = request.apiVersion();
        if (version >= 7 && body.requireStable()) {
            // KIP-447: while a group has offsets in an open transaction, a consumer asking for stable offsets must wait.
            List<String> groupIds = version >= 8 ? body.groups().stream().map(OffsetFetchRequestData.OffsetFetchRequestGroup::groupId).toList()
                : List.of(body.groupId());
            List<CompletableFuture<Boolean>> pending = groupIds.stream().map(coordinator()::hasPendingTransactionalOffsets).toList();
            CompletableFuture.allOf(pending.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
                boolean unstable = failure == null && pending.stream().anyMatch(CompletableFuture::join);
                if (unstable) {
                    respondUnstable(request, body, version);
                } else {
                    fetchOffsets(request, body, version);
                }
            });
            return;
        }
        fetchOffsets(request, body, version);
    }

    private static void respondUnstable(Request request, OffsetFetchRequestData body, short version) {
        OffsetFetchResponseData response = new OffsetFetchResponseData();
        if (version >= 8) {
            for (OffsetFetchRequestData.OffsetFetchRequestGroup group : body.groups()) {
                OffsetFetchResponseData.OffsetFetchResponseGroup groupResponse = new OffsetFetchResponseData.OffsetFetchResponseGroup()
                    .setGroupId(group.groupId());
                if (group.topics() != null) {
                    for (OffsetFetchRequestData.OffsetFetchRequestTopics topic : group.topics()) {
                        OffsetFetchResponseData.OffsetFetchResponseTopics topicResponse = new OffsetFetchResponseData.OffsetFetchResponseTopics()
                            .setName(topic.name()).setTopicId(topic.topicId());
                        for (int partition : topic.partitionIndexes()) {
                            topicResponse.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(partition)
                                .setCommittedOffset(-1).setMetadata("").setErrorCode(ErrorCode.UNSTABLE_OFFSET_COMMIT.code()));
                        }
                        groupResponse.topics().add(topicResponse);
                    }
                } else {
                    groupResponse.setErrorCode(ErrorCode.UNSTABLE_OFFSET_COMMIT.code());
                }
                response.groups().add(groupResponse);
            }
        } else if (body.topics() != null) {
            for (OffsetFetchRequestData.OffsetFetchRequestTopic topic : body.topics()) {
                OffsetFetchResponseData.OffsetFetchResponseTopic topicResponse = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(topic.name());
                for (int partition : topic.partitionIndexes()) {
                    topicResponse.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition().setPartitionIndex(partition)
                        .setCommittedOffset(-1).setMetadata("").setErrorCode(ErrorCode.UNSTABLE_OFFSET_COMMIT.code()));
                }
                response.topics().add(topicResponse);
            }
        } else {
            response.setErrorCode(ErrorCode.UNSTABLE_OFFSET_COMMIT.code());
        }
        request.respond(response);
    }

    private void fetchOffsets(Request request, OffsetFetchRequestData body, short version) {
        if (version >= 8) {
            List<CompletableFuture<OffsetFetchResponseData.OffsetFetchResponseGroup>> groups = new ArrayList<>();
            MetadataImage image = context.image();
            boolean byId = version >= 10;
            for (OffsetFetchRequestData.OffsetFetchRequestGroup group : body.groups()) {
                Map<String, List<Integer>> requested = null;
                List<OffsetFetchResponseData.OffsetFetchResponseTopics> unknownIds = new ArrayList<>();
                if (group.topics() != null) {
                    requested = new LinkedHashMap<>();
                    for (OffsetFetchRequestData.OffsetFetchRequestTopics topic : group.topics()) {
                        String name = byId ? nameOf(image, topic.topicId()) : topic.name();
                        if (name == null) {
                            unknownIds.add(unknownTopicId(topic));
                        } else {
                            requested.put(name, topic.partitionIndexes());
                        }
                    }
                }
                groups.add(coordinator().fetchOffsets(group.groupId(), requested, group.memberId(), group.memberEpoch()).handle((fetched, failure) -> {
                    OffsetFetchResponseData.OffsetFetchResponseGroup answer = groupResponse(group.groupId(),
                        failure != null ? new GroupCoordinator.FetchedOffsets(ErrorCode.UNKNOWN_SERVER_ERROR, Map.of()) : fetched, byId ? image : null);
                    if (answer.errorCode() == ErrorCode.NONE.code()) {
                        answer.topics().addAll(unknownIds);
                    }
                    return answer;
                }));
            }
            CompletableFuture.allOf(groups.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
                OffsetFetchResponseData response = new OffsetFetchResponseData();
                groups.forEach(group -> response.groups().add(group.join()));
                request.respond(response);
            });
            return;
        }
        Map<String, List<Integer>> requested = null;
        if (body.topics() != null) {
            requested = new LinkedHashMap<>();
            for (OffsetFetchRequestData.OffsetFetchRequestTopic topic : body.topics()) {
                requested.put(topic.name(), topic.partitionIndexes());
            }
        }
        coordinator().fetchOffsets(body.groupId(), requested).whenComplete((fetched, failure) -> {
            GroupCoordinator.FetchedOffsets result = failure != null ? new GroupCoordinator.FetchedOffsets(ErrorCode.UNKNOWN_SERVER_ERROR, Map.of()) : fetched;
            OffsetFetchResponseData response = new OffsetFetchResponseData();
            if (version >= 2) {
                response.setErrorCode(result.error().code());
            }
            for (Map.Entry<String, Map<Integer, OffsetAndMetadata>> topic : result.offsets().entrySet()) {
                OffsetFetchResponseData.OffsetFetchResponseTopic topicResponse = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(topic.getKey());
                for (Map.Entry<Integer, OffsetAndMetadata> partition : topic.getValue().entrySet()) {
                    OffsetAndMetadata offset = partition.getValue();
                    topicResponse.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition().setPartitionIndex(partition.getKey())
                        .setCommittedOffset(offset == null ? -1 : offset.offset())
                        .setCommittedLeaderEpoch(offset == null || version < 5 ? -1 : offset.leaderEpoch())
                        .setMetadata(offset == null ? "" : offset.metadata())
                        .setErrorCode(version < 2 ? result.error().code() : ErrorCode.NONE.code()));
                }
                response.topics().add(topicResponse);
            }
            request.respond(response);
        });
    }

    private static String nameOf(MetadataImage image, java.util.UUID topicId) {
        TopicImage topic = image.topic(topicId);
        return topic == null ? null : topic.name();
    }

    private static OffsetFetchResponseData.OffsetFetchResponseTopics unknownTopicId(OffsetFetchRequestData.OffsetFetchRequestTopics topic) {
        OffsetFetchResponseData.OffsetFetchResponseTopics unknown = new OffsetFetchResponseData.OffsetFetchResponseTopics().setTopicId(topic.topicId());
        for (int partition : topic.partitionIndexes()) {
            unknown.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(partition)
                .setCommittedOffset(-1).setMetadata("").setErrorCode(ErrorCode.UNKNOWN_TOPIC_ID.code()));
        }
        return unknown;
    }

    /**
     * One group's OffsetFetch answer. With {@code idsFrom} (v10+) every topic is named by its id
     * in that image; committed offsets of a topic that no longer exists have no id to give and
     * are left out, as Kafka leaves them out of a topic-id response.
     */
    private static OffsetFetchResponseData.OffsetFetchResponseGroup groupResponse(String groupId, GroupCoordinator.FetchedOffsets fetched,
                                                                                  MetadataImage idsFrom) {
        OffsetFetchResponseData.OffsetFetchResponseGroup group = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(groupId)
            .setErrorCode(fetched.error().code());
        for (Map.Entry<String, Map<Integer, OffsetAndMetadata>> topic : fetched.offsets().entrySet()) {
            OffsetFetchResponseData.OffsetFetchResponseTopics topicResponse = new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(topic.getKey());
            if (idsFrom != null) {
                TopicImage current = idsFrom.topic(topic.getKey());
                if (current == null) {
                    continue;
                }
                topicResponse.setTopicId(current.id());
            }
            for (Map.Entry<Integer, OffsetAndMetadata> partition : topic.getValue().entrySet()) {
                OffsetAndMetadata offset = partition.getValue();
                topicResponse.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(partition.getKey())
                    .setCommittedOffset(offset == null ? -1 : offset.offset()).setCommittedLeaderEpoch(offset == null ? -1 : offset.leaderEpoch())
                    .setMetadata(offset == null ? "" : offset.metadata()).setErrorCode(ErrorCode.NONE.code()));
            }
            group.topics().add(topicResponse);
        }
        return group;
    }

    // ---------------------------------------------------------------- describe, list, delete

    private void describeGroups(Request request) {
        DescribeGroupsRequestData body = request.body(DescribeGroupsRequestData.class);
        short version = request.apiVersion();
        List<CompletableFuture<DescribeGroupsResponseData.DescribedGroup>> described = new ArrayList<>();
        for (String groupId : body.groups()) {
            described.add(coordinator().describeGroup(groupId));
        }
        CompletableFuture.allOf(described.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
            DescribeGroupsResponseData response = new DescribeGroupsResponseData();
            for (int i = 0; i < described.size(); i++) {
                DescribeGroupsResponseData.DescribedGroup group = described.get(i).isCompletedExceptionally()
                    ? new DescribeGroupsResponseData.DescribedGroup().setGroupId(body.groups().get(i)).setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code())
                        .setGroupState("").setProtocolType("").setProtocolData("")
                    : described.get(i).join();
                group.setAuthorizedOperations(version >= 3 && body.includeAuthorizedOperations() ? AuthorizedOperations.GROUP : AuthorizedOperations.OMITTED);
                if (version < 6) {
                    group.setErrorMessage(null);
                    if (group.errorCode() == ErrorCode.GROUP_ID_NOT_FOUND.code()) {
                        group.setErrorCode(ErrorCode.NONE.code()); // before v6 a group that is not there is described as Dead
                    }
                }
                response.groups().add(group);
            }
            request.respond(response);
        });
    }

    private void listGroups(Request request) {
        ListGroupsRequestData body = request.body(ListGroupsRequestData.class);
        short version = request.apiVersion();
        coordinator().listGroups(version >= 4 ? body.statesFilter() : List.of(), version >= 5 ? body.typesFilter() : List.of())
            .whenComplete((groups, failure) -> {
                ListGroupsResponseData response = new ListGroupsResponseData();
                if (failure != null) {
                    request.respond(response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()));
                    return;
                }
                for (ListGroupsResponseData.ListedGroup group : groups) {
                    if (version < 4) {
                        group.setGroupState("");
                    }
                    if (version < 5) {
                        group.setGroupType("");
                    }
                    response.groups().add(group);
                }
                request.respond(response);
            });
    }

    private void deleteGroups(Request request) {
        DeleteGroupsRequestData body = request.body(DeleteGroupsRequestData.class);
        List<CompletableFuture<ErrorCode>> results = new ArrayList<>();
        for (String groupId : body.groupsNames()) {
            results.add(coordinator().deleteGroup(groupId));
        }
        CompletableFuture.allOf(results.toArray(new CompletableFuture[0])).whenComplete((done, failure) -> {
            DeleteGroupsResponseData response = new DeleteGroupsResponseData();
            for (int i = 0; i < results.size(); i++) {
                ErrorCode error = results.get(i).isCompletedExceptionally() ? ErrorCode.UNKNOWN_SERVER_ERROR : results.get(i).join();
                response.results().add(new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(body.groupsNames().get(i))
                    .setErrorCode(error.code()));
            }
            request.respond(response);
        });
    }

    private void offsetDelete(Request request) {
        OffsetDeleteRequestData body = request.body(OffsetDeleteRequestData.class);
        Map<String, List<Integer>> partitions = new LinkedHashMap<>();
        for (OffsetDeleteRequestData.OffsetDeleteRequestTopic topic : body.topics()) {
            List<Integer> indexes = new ArrayList<>();
            topic.partitions().forEach(partition -> indexes.add(partition.partitionIndex()));
            partitions.put(topic.name(), indexes);
        }
        coordinator().deleteOffsets(body.groupId(), partitions).whenComplete((errors, failure) -> {
            OffsetDeleteResponseData response = new OffsetDeleteResponseData();
            if (failure != null) {
                request.respond(response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()));
                return;
            }
            if (errors.containsKey("")) {
                request.respond(response.setErrorCode(errors.get("").get(-1).code()));
                return;
            }
            for (Map.Entry<String, Map<Integer, ErrorCode>> topic : errors.entrySet()) {
                OffsetDeleteResponseData.OffsetDeleteResponseTopic topicResponse = new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(topic.getKey());
                topic.getValue().forEach((partition, error) -> topicResponse.partitions().add(
                    new OffsetDeleteResponseData.OffsetDeleteResponsePartition().setPartitionIndex(partition).setErrorCode(error.code())));
                response.topics().add(topicResponse);
            }
            request.respond(response);
        });
    }
}
