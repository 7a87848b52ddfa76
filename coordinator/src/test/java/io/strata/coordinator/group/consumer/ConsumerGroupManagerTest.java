package io.strata.coordinator.group.consumer;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ConsumerGroupDescribeResponseData;
import io.strata.protocol.message.ConsumerGroupHeartbeatRequestData;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** The consumer group state machine, driven directly on a fake clock (no threads, no sockets). */
class ConsumerGroupManagerTest {
    private final Harness harness = new Harness();
    private final UUID orders = harness.createTopic("orders", 6);

    private static ErrorCode error(ConsumerGroupHeartbeatResponseData response) {
        return ErrorCode.forCode(response.errorCode());
    }

    private static Set<Integer> partitions(Assignment assignment, UUID topic) {
        return new TreeSet<>(assignment.partitions(topic));
    }

    /** No partition is owned by two clients, from the clients' own point of view. */
    private static void assertDisjoint(Harness.Client... clients) {
        for (int i = 0; i < clients.length; i++) {
            for (int j = i + 1; j < clients.length; j++) {
                assertThat(clients[i].owned.intersects(clients[j].owned))
                    .as("%s owns %s and %s owns %s", clients[i].memberId, clients[i].owned, clients[j].memberId, clients[j].owned).isFalse();
            }
        }
    }

    /** Heartbeats every client a few rounds so revocations and assignments complete. */
    private static void settle(Harness.Client... clients) {
        for (int round = 0; round < 4; round++) {
            for (Harness.Client client : clients) {
                client.beat();
                assertDisjoint(clients);
            }
        }
    }

    @Test
    void firstMemberCreatesTheGroupAndGetsEveryPartitionAtEpochOne() {
        Harness.Client a = harness.client("g", "a", "orders");
        ConsumerGroupHeartbeatResponseData response = a.join();
        assertThat(error(response)).isEqualTo(ErrorCode.NONE);
        assertThat(response.memberId()).isEqualTo("a");
        assertThat(response.memberEpoch()).isEqualTo(1);
        assertThat(response.heartbeatIntervalMs()).isEqualTo(1000);
        assertThat(partitions(a.owned, orders)).containsExactly(0, 1, 2, 3, 4, 5);
        ConsumerGroup group = harness.group("g");
        assertThat(group.groupEpoch()).isEqualTo(1);
        assertThat(group.assignmentEpoch()).isEqualTo(1);
        assertThat(group.state()).isEqualTo(ConsumerGroup.State.STABLE);
    }

    @Test
    void aPartitionMovesOnlyAfterItsOwnerRevokedIt() {
        Harness.Client a = harness.client("g", "a", "orders");
        Harness.Client b = harness.client("g", "b", "orders");
        a.join();
        ConsumerGroupHeartbeatResponseData joined = b.join();
        // B is at the new epoch but gets nothing yet: A still owns everything.
        assertThat(joined.memberEpoch()).isEqualTo(2);
        assertThat(b.owned.isEmpty()).isTrue();
        assertThat(harness.group("g").member("b").state()).isEqualTo(MemberState.UNRELEASED_PARTITIONS);
        assertThat(harness.group("g").state()).isEqualTo(ConsumerGroup.State.RECONCILING);

        // A is told to shrink to its target; until it reports the revocation it stays at epoch 1.
        ConsumerGroupHeartbeatResponseData revoke = a.beatSlowly();
        assertThat(revoke.memberEpoch()).isEqualTo(1);
        assertThat(a.pending.size()).isEqualTo(3);
        assertThat(harness.group("g").member("a").state()).isEqualTo(MemberState.UNREVOKED_PARTITIONS);
        b.beat();
        assertThat(b.owned.isEmpty()).as("partitions A has not revoked stay with A").isTrue();
        assertDisjoint(a, b);

        a.adopt();
        assertThat(a.beat().memberEpoch()).isEqualTo(2);
        assertDisjoint(a, b);
        b.beat();
        assertDisjoint(a, b);
        assertThat(a.owned.size()).isEqualTo(3);
        assertThat(b.owned.size()).isEqualTo(3);
        assertThat(a.owned.union(b.owned).size()).isEqualTo(6);
        assertThat(harness.group("g").state()).isEqualTo(ConsumerGroup.State.STABLE);
    }

    @Test
    void aLeavingMemberBumpsTheEpochAndItsPartitionsGoToTheOthers() {
        Harness.Client a = harness.client("g", "a", "orders");
        Harness.Client b = harness.client("g", "b", "orders");
        a.join();
        b.join();
        settle(a, b);
        int epoch = harness.group("g").groupEpoch();
        ConsumerGroupHeartbeatResponseData left = b.leave(-1);
        assertThat(error(left)).isEqualTo(ErrorCode.NONE);
        assertThat(left.memberEpoch()).isEqualTo(-1);
        assertThat(harness.group("g").groupEpoch()).isEqualTo(epoch + 1);
        assertThat(harness.group("g").member("b")).isNull();
        a.beat();
        assertThat(partitions(a.owned, orders)).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(error(b.leave(-1))).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aMemberWhoseSessionExpiresIsRemoved() {
        Harness.Client a = harness.client("g", "a", "orders");
        Harness.Client b = harness.client("g", "b", "orders");
        a.join();
        b.join();
        settle(a, b);
        for (int i = 0; i < 15; i++) {
            harness.timer.advance(900);
            a.beat(); // B stopped heartbeating (crashed)
        }
        assertThat(harness.group("g").member("b")).isNull();
        assertThat(partitions(a.owned, orders)).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(error(b.beat())).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
        assertThat(b.owned.isEmpty()).isTrue();
        // The crashed member rejoins with epoch 0 and gets partitions again.
        b.join();
        settle(a, b);
        assertThat(b.owned.size()).isEqualTo(3);
    }

    @Test
    void aMemberThatDoesNotRevokeWithinItsRebalanceTimeoutIsFenced() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.rebalanceTimeoutMs = 3000;
        Harness.Client b = harness.client("g", "b", "orders");
        a.join();
        b.join();
        a.beatSlowly(); // A must revoke 3 partitions but never finishes
        for (int i = 0; i < 4; i++) {
            harness.timer.advance(900);
            a.beatSlowly();
            b.beat();
        }
        assertThat(error(a.last)).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
        assertThat(harness.group("g").member("a")).isNull();
        b.beat();
        assertThat(partitions(b.owned, orders)).containsExactly(0, 1, 2, 3, 4, 5);
    }

    @Test
    void epochsAreValidatedAndALostResponseIsTolerated() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.join();
        ConsumerGroupHeartbeatRequestData ahead = a.heartbeatRequest().setMemberEpoch(5);
        assertThat(error(harness.send(ahead))).isEqualTo(ErrorCode.FENCED_MEMBER_EPOCH);

        Harness.Client b = harness.client("g", "b", "orders");
        b.join();
        a.beat(); // told to revoke; revokes at once
        a.beat(); // reports the revocation and moves to epoch 2
        assertThat(a.epoch).isEqualTo(2);
        // The response to A was lost: A retries with epoch 1 owning a subset of its assignment: accepted.
        ConsumerGroupHeartbeatResponseData retried = harness.send(a.heartbeatRequest().setMemberEpoch(1));
        assertThat(error(retried)).isEqualTo(ErrorCode.NONE);
        assertThat(retried.memberEpoch()).isEqualTo(2);
        // An older epoch, or the previous one with partitions outside the assignment, is fenced.
        assertThat(error(harness.send(a.heartbeatRequest().setMemberEpoch(1).setTopicPartitions(List.of(
            new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(orders).setPartitions(List.of(0, 1, 2, 3, 4, 5)))))))
            .isEqualTo(ErrorCode.FENCED_MEMBER_EPOCH);
    }

    @Test
    void aFencedMemberRejoinsWithEpochZeroAndTheSameMemberId() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.join();
        a.beat();
        ConsumerGroupHeartbeatResponseData rejoined = a.join();
        assertThat(error(rejoined)).isEqualTo(ErrorCode.NONE);
        assertThat(rejoined.memberEpoch()).isEqualTo(1);
        assertThat(partitions(a.owned, orders)).containsExactly(0, 1, 2, 3, 4, 5);
    }

    @Test
    void requestsAreValidatedAsKafkaDoes() {
        ConsumerGroupHeartbeatRequestData valid = harness.client("g", "a", "orders").joinRequest();
        assertThat(error(harness.send(copy(valid).setGroupId("")))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setMemberId("")))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setInstanceId("")))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setRackId("")))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setRebalanceTimeoutMs(-1)))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setTopicPartitions(null)))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setSubscribedTopicNames(null)))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setMemberEpoch(-2)))).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(error(harness.send(copy(valid).setMemberEpoch(-3)))).isEqualTo(ErrorCode.INVALID_REQUEST);
        ConsumerGroupHeartbeatResponseData unsupported = harness.send(copy(valid).setServerAssignor("sticky"));
        assertThat(error(unsupported)).isEqualTo(ErrorCode.UNSUPPORTED_ASSIGNOR);
        assertThat(unsupported.errorMessage()).contains("uniform, range");
        assertThat(error(harness.send(copy(valid).setSubscribedTopicNames(null).setSubscribedTopicRegex("orders[")))).isEqualTo(
            ErrorCode.INVALID_REGULAR_EXPRESSION);
        assertThat(harness.group("g")).as("no invalid request created the group").isNull();
        // Version 0: the coordinator generates the member id of a joining member.
        ConsumerGroupHeartbeatResponseData generated = harness.send(copy(valid).setMemberId(""), (short) 0);
        assertThat(error(generated)).isEqualTo(ErrorCode.NONE);
        assertThat(generated.memberId()).isNotEmpty();
    }

    private static ConsumerGroupHeartbeatRequestData copy(ConsumerGroupHeartbeatRequestData request) {
        return new ConsumerGroupHeartbeatRequestData().setGroupId(request.groupId()).setMemberId(request.memberId())
            .setMemberEpoch(request.memberEpoch()).setInstanceId(request.instanceId()).setRackId(request.rackId())
            .setRebalanceTimeoutMs(request.rebalanceTimeoutMs()).setSubscribedTopicNames(request.subscribedTopicNames())
            .setSubscribedTopicRegex(request.subscribedTopicRegex()).setServerAssignor(request.serverAssignor())
            .setTopicPartitions(request.topicPartitions());
    }

    @Test
    void unknownGroupsAndMembersAreRefused() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.epoch = 3;
        assertThat(error(a.beat())).isEqualTo(ErrorCode.GROUP_ID_NOT_FOUND);
        assertThat(error(harness.send(a.heartbeatRequest().setMemberEpoch(-1)))).isEqualTo(ErrorCode.GROUP_ID_NOT_FOUND);
        harness.client("g", "b", "orders").join();
        a.epoch = 3;
        assertThat(error(a.beat())).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
    }

    @Test
    void theGroupSizeIsBounded() {
        Harness small = new Harness(new ConsumerGroupSettings(1000, 10_000, 2, ConsumerGroupSettings.DEFAULT_ASSIGNORS));
        small.createTopic("orders", 6);
        small.client("g", "a", "orders").join();
        small.client("g", "b", "orders").join();
        assertThat(error(small.client("g", "c", "orders").join())).isEqualTo(ErrorCode.GROUP_MAX_SIZE_REACHED);
    }

    @Test
    void aStaticMemberThatLeavesTemporarilyKeepsItsPartitionsAndGetsThemBackWithoutARebalance() {
        Harness.Client a = harness.client("g", "a1", "orders");
        a.instanceId = "instance-a";
        Harness.Client b = harness.client("g", "b", "orders");
        a.join();
        b.join();
        settle(a, b);
        // Another process may not take the instance id while its owner is active.
        Harness.Client thief = harness.client("g", "thief", "orders");
        thief.instanceId = "instance-a";
        assertThat(error(thief.join())).isEqualTo(ErrorCode.UNRELEASED_INSTANCE_ID);

        Assignment aPartitions = a.owned;
        int epoch = harness.group("g").groupEpoch();
        assertThat(error(a.leave(-2))).isEqualTo(ErrorCode.NONE);
        assertThat(harness.group("g").member("a1").memberEpoch()).isEqualTo(-2);
        assertThat(harness.group("g").groupEpoch()).as("a temporary leave does not rebalance").isEqualTo(epoch);
        settle(b);
        assertThat(b.owned.intersects(aPartitions)).as("nobody takes the partitions of a static member that left temporarily").isFalse();

        // The restarted instance (new member id) takes over A's partitions, still at the same group epoch.
        Harness.Client restarted = harness.client("g", "a2", "orders");
        restarted.instanceId = "instance-a";
        ConsumerGroupHeartbeatResponseData rejoined = restarted.join();
        assertThat(error(rejoined)).isEqualTo(ErrorCode.NONE);
        assertThat(restarted.owned).isEqualTo(aPartitions);
        assertThat(harness.group("g").groupEpoch()).isEqualTo(epoch);
        assertThat(harness.group("g").member("a1")).isNull();
        assertThat(harness.group("g").staticMember("instance-a").memberId()).isEqualTo("a2");
        settle(restarted, b);
        assertThat(harness.group("g").state()).isEqualTo(ConsumerGroup.State.STABLE);
        // The old member id is fenced.
        a.epoch = rejoined.memberEpoch();
        assertThat(error(harness.send(a.heartbeatRequest()))).isEqualTo(ErrorCode.FENCED_INSTANCE_ID);
    }

    @Test
    void aStaticMemberThatDoesNotComeBackWithinItsSessionIsRemoved() {
        Harness.Client a = harness.client("g", "a1", "orders");
        a.instanceId = "instance-a";
        Harness.Client b = harness.client("g", "b", "orders");
        a.join();
        b.join();
        settle(a, b);
        a.leave(-2);
        for (int i = 0; i < 12; i++) {
            harness.timer.advance(1000);
            b.beat();
        }
        assertThat(harness.group("g").staticMember("instance-a")).isNull();
        assertThat(partitions(b.owned, orders)).containsExactly(0, 1, 2, 3, 4, 5);
    }

    @Test
    void aRegexSubscriptionPicksUpNewTopicsAndIgnoresInternalOnes() {
        harness.createTopic("__consumer_offsets", 50);
        UUID metricsA = harness.createTopic("metrics-a", 2);
        Harness.Client a = harness.client("g", "a");
        a.regex = "metrics-.*";
        a.join();
        assertThat(a.owned.partitions().keySet()).containsExactly(metricsA);
        int epoch = harness.group("g").groupEpoch();
        UUID metricsB = harness.createTopic("metrics-b", 3);
        a.beat();
        assertThat(harness.group("g").groupEpoch()).isEqualTo(epoch + 1);
        assertThat(partitions(a.owned, metricsB)).containsExactly(0, 1, 2);
        assertThat(harness.group("g").regexes.get("metrics-.*").topics()).containsExactly("metrics-a", "metrics-b");
        // The partition count of a subscribed topic changes: the group rebalances too.
        harness.createTopic("metrics-a", 4);
        a.beat();
        assertThat(partitions(a.owned, metricsA)).containsExactly(0, 1, 2, 3);
    }

    @Test
    void pathologicalRegexesAreMatchedInLinearTimeAgainstLongTopicNames() {
        // On "aaa...a-000" java.util.regex backtracks for hours on these (JDK 17 memoizes the
        // plain (a+)+$, not these); RE2/J, which Kafka uses, takes time linear in the name.
        // 200 topics of the longest legal name (249 characters).
        for (int i = 0; i < 200; i++) {
            harness.createTopic("a".repeat(249 - 4) + String.format("-%03d", i), 1);
        }
        UUID matching = harness.createTopic("a".repeat(249), 1);
        List<String> regexes = List.of("((a+)+)+$", "(.*a){12}", "(a+)+$");
        for (int i = 0; i < regexes.size(); i++) {
            Harness.Client client = harness.client("g" + i, "a");
            client.regex = regexes.get(i);
            ConsumerGroupHeartbeatResponseData response = assertTimeoutPreemptively(Duration.ofSeconds(10), client::join,
                "resolving " + client.regex + " must take linear time");
            assertThat(error(response)).isEqualTo(ErrorCode.NONE);
            assertThat(client.owned.partitions().keySet()).as(client.regex).containsExactly(matching);
        }
    }

    @Test
    void aRegexRe2RefusesGetsInvalidRegularExpressionAsInKafka() {
        // Backreferences and lookaround compile in java.util.regex but not in RE2/J, which Kafka uses.
        for (String regex : List.of("(orders)\\1", "orders(?=-eu)", "orders.*+")) {
            Harness.Client a = harness.client("g", "a");
            a.regex = regex;
            ConsumerGroupHeartbeatResponseData response = a.join();
            assertThat(error(response)).as(regex).isEqualTo(ErrorCode.INVALID_REGULAR_EXPRESSION);
            assertThat(response.errorMessage()).as(regex).startsWith("SubscribedTopicRegex `" + regex + "` is not a valid regular expression: ");
        }
        assertThat(harness.group("g")).as("no invalid request created the group").isNull();
    }

    @Test
    void subscribingToATopicThatDoesNotExistYetAssignsItOnceCreated() {
        Harness.Client a = harness.client("g", "a", "later");
        a.join();
        assertThat(a.owned.isEmpty()).isTrue();
        UUID later = harness.createTopic("later", 2);
        a.beat();
        assertThat(partitions(a.owned, later)).containsExactly(0, 1);
    }

    @Test
    void theGroupSurvivesACoordinatorRestartWithItsEpochs() {
        Harness.Client a = harness.client("g", "a", "orders");
        Harness.Client b = harness.client("g", "b", "orders");
        b.regex = "ord.*";
        a.join();
        b.join();
        settle(a, b);
        ConsumerGroup before = harness.group("g");
        int groupEpoch = before.groupEpoch();
        Map<String, ConsumerGroupMember> members = Map.copyOf(before.members());
        harness.restart();
        ConsumerGroup after = harness.group("g");
        assertThat(after.groupEpoch()).isEqualTo(groupEpoch);
        assertThat(after.assignmentEpoch()).isEqualTo(before.assignmentEpoch());
        assertThat(after.members()).isEqualTo(members);
        assertThat(after.regexes).containsKey("ord.*");
        // The members carry on with their epochs; nothing moves.
        ConsumerGroupHeartbeatResponseData response = a.beat();
        assertThat(error(response)).isEqualTo(ErrorCode.NONE);
        assertThat(response.memberEpoch()).isEqualTo(a.epoch);
        b.beat();
        assertThat(harness.group("g").groupEpoch()).isEqualTo(groupEpoch);
        assertDisjoint(a, b);
    }

    @Test
    void aFailedWriteUndoesTheChangeAndReportsTheError() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.join();
        harness.log.failNextAppend(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        Harness.Client b = harness.client("g", "b", "orders");
        assertThat(error(b.join())).isEqualTo(ErrorCode.NOT_COORDINATOR);
        assertThat(harness.group("g").member("b")).as("the failed join is not in memory").isNull();
        assertThat(harness.group("g").groupEpoch()).isEqualTo(1);
        assertThat(error(b.join())).isEqualTo(ErrorCode.NONE);
    }

    @Test
    void aResponseWaitsForTheWriteItDependsOn() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.join();
        harness.log.holdAppends = true;
        AtomicReference<ConsumerGroupHeartbeatResponseData> joined = new AtomicReference<>();
        AtomicReference<ConsumerGroupHeartbeatResponseData> revoke = new AtomicReference<>();
        AtomicReference<ConsumerGroupHeartbeatResponseData> unchanged = new AtomicReference<>();
        harness.manager.heartbeat(harness.client("g", "b", "orders").joinRequest(), Harness.VERSION, "b", "/h", joined::set);
        harness.manager.heartbeat(a.heartbeatRequest(), Harness.VERSION, "a", "/h", revoke::set);
        int records = harness.log.records.size();
        harness.manager.heartbeat(a.heartbeatRequest(), Harness.VERSION, "a", "/h", unchanged::set);
        assertThat(joined.get()).isNull();
        assertThat(revoke.get()).isNull();
        assertThat(unchanged.get()).as("an answer that wrote nothing still waits for the state it reflects").isNull();
        harness.log.completeHeld();
        assertThat(harness.log.records.size()).isGreaterThan(records);
        assertThat(joined.get()).isNotNull();
        assertThat(revoke.get()).isNotNull();
        assertThat(unchanged.get()).isNotNull();
        assertThat(unchanged.get().memberEpoch()).isEqualTo(1);
    }

    @Test
    void aGroupIdOfAClassicGroupWithMembersCannotBeUsedButAnEmptyOneIsTakenOver() {
        harness.classicGroups.put("busy", false);
        assertThat(error(harness.client("busy", "a", "orders").join())).isEqualTo(ErrorCode.GROUP_ID_NOT_FOUND);
        harness.classicGroups.put("offsets-only", true);
        assertThat(error(harness.client("offsets-only", "a", "orders").join())).isEqualTo(ErrorCode.NONE);
        assertThat(harness.removedClassicGroups).containsExactly("offsets-only");
        assertThat(harness.log.records.get(0)[1]).as("the classic group's tombstone is written first").isNull();
    }

    @Test
    void anEmptyConsumerGroupYieldsToAClassicJoinButANonEmptyOneDoesNot() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.join();
        List<ErrorCode> results = new ArrayList<>();
        harness.manager.yieldToClassicGroup("g", results::add);
        a.leave(-1);
        harness.manager.yieldToClassicGroup("g", results::add);
        assertThat(results).containsExactly(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ErrorCode.NONE);
        assertThat(harness.manager.has("g")).isFalse();
        harness.restart();
        assertThat(harness.manager.has("g")).as("the deletion is durable").isFalse();
    }

    @Test
    void offsetCommitsAreValidatedAgainstMemberEpochs() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.join();
        ConsumerGroupManager manager = harness.manager;
        assertThat(manager.validateOffsetCommit("g", "a", a.epoch, (short) 9, false)).isEqualTo(ErrorCode.NONE);
        assertThat(manager.validateOffsetCommit("g", "a", a.epoch - 1, (short) 9, false)).isEqualTo(ErrorCode.STALE_MEMBER_EPOCH);
        assertThat(manager.validateOffsetCommit("g", "a", a.epoch - 1, (short) 3, true)).isEqualTo(ErrorCode.ILLEGAL_GENERATION);
        assertThat(manager.validateOffsetCommit("g", "a", a.epoch, (short) 8, false)).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
        assertThat(manager.validateOffsetCommit("g", "zz", a.epoch, (short) 9, false)).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
        assertThat(manager.validateOffsetCommit("g", "", -1, (short) 9, false)).as("admin commit to a non-empty group")
            .isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
        assertThat(manager.validateOffsetFetch("g", null, -1)).isEqualTo(ErrorCode.NONE);
        assertThat(manager.validateOffsetFetch("g", "a", a.epoch + 1)).isEqualTo(ErrorCode.STALE_MEMBER_EPOCH);
        assertThat(manager.validateDelete("g")).isEqualTo(ErrorCode.NON_EMPTY_GROUP);
        a.leave(-1);
        assertThat(manager.validateOffsetCommit("g", "", -1, (short) 9, false)).isEqualTo(ErrorCode.NONE);
        assertThat(manager.validateDelete("g")).isEqualTo(ErrorCode.NONE);
    }

    @Test
    void aCommitWithAnOlderEpochIsAcceptedForPartitionsTheMemberAlreadyOwnedThen() {
        Harness.Client a = harness.client("g", "a", "orders");
        Harness.Client b = harness.client("g", "b", "orders");
        a.join();
        b.join();
        settle(a, b);
        harness.client("g", "c", "orders").join(); // epoch 3: a and b give partitions to c
        a.beat();
        a.beat();
        ConsumerGroupMember member = harness.group("g").member("a");
        assertThat(member.memberEpoch()).isEqualTo(3);
        int kept = member.assignedPartitions().partitions(orders).first();
        assertThat(member.assignmentEpochs().epoch(orders, kept)).isEqualTo(1);
        ConsumerGroupManager manager = harness.manager;
        // A commit sent at epoch 2 while the member moved to 3: its partitions did not change hands (KIP-1251).
        assertThat(manager.validateOffsetCommit("g", "a", 2, (short) 9, false, "orders", kept)).isEqualTo(ErrorCode.NONE);
        assertThat(manager.validateOffsetCommit("g", "a", 0, (short) 9, false, "orders", kept)).isEqualTo(ErrorCode.STALE_MEMBER_EPOCH);
        int notOwned = -1;
        for (int partition = 0; partition < 6; partition++) {
            if (!member.assignedPartitions().contains(orders, partition)) {
                notOwned = partition;
            }
        }
        assertThat(manager.validateOffsetCommit("g", "a", 2, (short) 9, false, "orders", notOwned)).isEqualTo(ErrorCode.STALE_MEMBER_EPOCH);
        assertThat(manager.validateOffsetCommit("g", "a", 4, (short) 9, false, "orders", kept)).isEqualTo(ErrorCode.STALE_MEMBER_EPOCH);
        assertThat(manager.validateOffsetCommit("g", "a", 2, (short) 9, false, "unknown-topic", 0)).isEqualTo(ErrorCode.STALE_MEMBER_EPOCH);
        // The epochs are persisted with the assignment.
        harness.restart();
        assertThat(harness.group("g").member("a").assignmentEpochs()).isEqualTo(member.assignmentEpochs());
    }

    @Test
    void describeShowsMembersAssignmentsAndTargets() {
        Harness.Client a = harness.client("g", "a", "orders");
        a.assignor = "range";
        a.join();
        harness.client("g", "b", "orders").join();
        ConsumerGroupDescribeResponseData.DescribedGroup described = harness.manager.describe("g");
        assertThat(described.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(described.groupState()).isEqualTo("Reconciling");
        assertThat(described.assignorName()).isEqualTo("range");
        assertThat(described.groupEpoch()).isEqualTo(2);
        assertThat(described.members()).hasSize(2);
        ConsumerGroupDescribeResponseData.Member member = described.members().get(0);
        assertThat(member.memberId()).isEqualTo("a");
        assertThat(member.memberType()).isEqualTo((byte) 1);
        assertThat(member.assignment().topicPartitions().get(0).topicName()).isEqualTo("orders");
        assertThat(member.targetAssignment().topicPartitions().get(0).partitions()).containsExactly(0, 1, 2);
        assertThat(ErrorCode.forCode(harness.manager.describe("nope").errorCode())).isEqualTo(ErrorCode.GROUP_ID_NOT_FOUND);
    }

    @Test
    void listedGroupsCarryTheConsumerTypeAndState() {
        harness.client("g", "a", "orders").join();
        var listed = harness.manager.list(List.of());
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).groupType()).isEqualTo("consumer");
        assertThat(listed.get(0).protocolType()).isEqualTo("consumer");
        assertThat(listed.get(0).groupState()).isEqualTo("Stable");
        assertThat(harness.manager.list(List.of("empty"))).isEmpty();
    }
}
