package io.strata.coordinator.group.consumer;

import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One shard's consumer groups on a fake clock, an in-memory log and an in-memory topic list,
 * with simulated clients that follow the consumer protocol. Single-threaded, deterministic.
 */
final class Harness {
    static final short VERSION = 1;
    final MockTime time = new MockTime();
    ManualTimer timer = new ManualTimer(time);
    final InMemoryRecordLog log = new InMemoryRecordLog();
    final ConsumerGroupSettings settings;
    final Map<String, Boolean> classicGroups = new HashMap<>();
    final List<String> removedClassicGroups = new ArrayList<>();
    private final List<TopicsView.Topic> topicList = new ArrayList<>();
    private TopicsView topics = TopicsView.EMPTY;
    ConsumerGroupManager manager;

    Harness() {
        this(new ConsumerGroupSettings(1000, 10_000, 100, ConsumerGroupSettings.DEFAULT_ASSIGNORS));
    }

    Harness(ConsumerGroupSettings settings) {
        this.settings = settings;
        this.manager = newManager();
        manager.onLoaded();
    }

    private ConsumerGroupManager newManager() {
        ClassicGroups classic = new ClassicGroups() {
            @Override
            public Boolean isEmpty(String groupId) {
                return classicGroups.get(groupId);
            }

            @Override
            public void remove(String groupId) {
                classicGroups.remove(groupId);
                removedClassicGroups.add(groupId);
            }
        };
        return new ConsumerGroupManager(0, settings, time, timer, log, () -> topics, classic);
    }

    /** A coordinator restart: a fresh manager (and timers) that replays the log. */
    void restart() {
        timer = new ManualTimer(time);
        manager = newManager();
        log.replay(manager::replay);
        manager.onLoaded();
    }

    UUID createTopic(String name, int partitions) {
        UUID id = UUID.nameUUIDFromBytes(name.getBytes());
        topicList.removeIf(topic -> topic.name().equals(name));
        topicList.add(new TopicsView.Topic(id, name, partitions));
        topics = TopicsView.of(topics.version() + 1, topicList);
        return id;
    }

    TopicsView topics() {
        return topics;
    }

    ConsumerGroupHeartbeatResponseData send(ConsumerGroupHeartbeatRequestData request) {
        return send(request, VERSION);
    }

    ConsumerGroupHeartbeatResponseData send(ConsumerGroupHeartbeatRequestData request, short version) {
        AtomicReference<ConsumerGroupHeartbeatResponseData> response = new AtomicReference<>();
        manager.heartbeat(request, version, "client-" + request.memberId(), "/127.0.0.1", response::set);
        return response.get();
    }

    ConsumerGroup group(String groupId) {
        return manager.group(groupId);
    }

    Client client(String groupId, String memberId, String... topicNames) {
        return new Client(groupId, memberId, List.of(topicNames));
    }

    /** A consumer following the protocol: joins with epoch 0, reports what it owns, adopts assignments. */
    final class Client {
        final String groupId;
        final String memberId;
        String instanceId;
        List<String> topicNames;
        String regex;
        String assignor;
        int rebalanceTimeoutMs = 300_000;
        int epoch;
        Assignment owned = Assignment.EMPTY;
        /** The last assignment received and not adopted yet (slow revocation), or null. */
        Assignment pending;
        ConsumerGroupHeartbeatResponseData last;

        Client(String groupId, String memberId, List<String> topicNames) {
            this.groupId = groupId;
            this.memberId = memberId;
            this.topicNames = topicNames;
        }

        ConsumerGroupHeartbeatRequestData joinRequest() {
            return new ConsumerGroupHeartbeatRequestData().setGroupId(groupId).setMemberId(memberId).setMemberEpoch(0)
                .setInstanceId(instanceId).setRebalanceTimeoutMs(rebalanceTimeoutMs).setSubscribedTopicNames(regex == null ? topicNames : null)
                .setSubscribedTopicRegex(regex).setServerAssignor(assignor).setTopicPartitions(new ArrayList<>());
        }

        ConsumerGroupHeartbeatRequestData heartbeatRequest() {
            return new ConsumerGroupHeartbeatRequestData().setGroupId(groupId).setMemberId(memberId).setMemberEpoch(epoch)
                .setInstanceId(instanceId).setTopicPartitions(ownedPartitions());
        }

        private List<ConsumerGroupHeartbeatRequestData.TopicPartitions> ownedPartitions() {
            List<ConsumerGroupHeartbeatRequestData.TopicPartitions> partitions = new ArrayList<>();
            for (Map.Entry<UUID, SortedSet<Integer>> topic : owned.partitions().entrySet()) {
                partitions.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(topic.getKey())
                    .setPartitions(new ArrayList<>(topic.getValue())));
            }
            return partitions;
        }

        /** Joins (epoch 0) and adopts the assignment at once. */
        ConsumerGroupHeartbeatResponseData join() {
            owned = Assignment.EMPTY;
            pending = null;
            return receive(send(joinRequest()), true);
        }

        /** Heartbeats reporting what it owns and adopts any new assignment at once. */
        ConsumerGroupHeartbeatResponseData beat() {
            return receive(send(heartbeatRequest()), true);
        }

        /** Heartbeats but keeps owning its old partitions (its revocation callback has not finished). */
        ConsumerGroupHeartbeatResponseData beatSlowly() {
            return receive(send(heartbeatRequest()), false);
        }

        /** Finishes a slow reconciliation: now owns the last assignment received. */
        void adopt() {
            if (pending != null) {
                owned = pending;
                pending = null;
            }
        }

        ConsumerGroupHeartbeatResponseData leave(int leaveEpoch) {
            ConsumerGroupHeartbeatResponseData response = send(new ConsumerGroupHeartbeatRequestData().setGroupId(groupId)
                .setMemberId(memberId).setMemberEpoch(leaveEpoch).setInstanceId(instanceId));
            owned = Assignment.EMPTY;
            epoch = 0;
            last = response;
            return response;
        }

        private ConsumerGroupHeartbeatResponseData receive(ConsumerGroupHeartbeatResponseData response, boolean adopt) {
            last = response;
            ErrorCode error = ErrorCode.forCode(response.errorCode());
            if (error == ErrorCode.FENCED_MEMBER_EPOCH || error == ErrorCode.UNKNOWN_MEMBER_ID) {
                owned = Assignment.EMPTY; // lost: must rejoin with epoch 0
                pending = null;
                epoch = 0;
                return response;
            }
            if (error != ErrorCode.NONE) {
                return response;
            }
            epoch = response.memberEpoch();
            if (response.assignment() != null) {
                Map<UUID, List<Integer>> partitions = new HashMap<>();
                for (var topic : response.assignment().topicPartitions()) {
                    partitions.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).addAll(topic.partitions());
                }
                pending = Assignment.of(partitions);
            }
            if (adopt) {
                adopt(); // a reconciliation still running from an earlier response finishes too
            }
            return response;
        }
    }
}
