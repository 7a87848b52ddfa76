package io.strata.coordinator.group.consumer;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded random runs of one group: members join, heartbeat, revoke slowly, leave, crash,
 * restart as static members, topics grow, and the coordinator restarts. Checked after every
 * event: no partition is owned by two live members (as the clients see it), a client owns
 * nothing the coordinator does not count as its, and no request hit a coordinator bug. At the
 * end, with churn stopped, the group converges: Stable, every partition owned, balanced.
 * A seed that ever fails stays in the list for good (1000 further seeds of 800 events passed
 * when this was written).
 */
class ConsumerGroupSimulationTest {
    private static final int SESSION_TIMEOUT_MS = 10_000;

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
    void randomRunsKeepOwnershipExclusiveAndConverge(long seed) {
        new Run(seed).execute(600);
    }

    private static final class Run {
        private final Random random;
        private final long seed;
        private final Harness harness = new Harness();
        private final List<Harness.Client> live = new ArrayList<>();
        private final Map<Harness.Client, Long> lastBeatMs = new HashMap<>();
        private int nextMemberId;
        private int topicPartitions = 12;

        Run(long seed) {
            this.seed = seed;
            this.random = new Random(seed);
            harness.createTopic("t", topicPartitions);
        }

        void execute(int events) {
            for (int event = 0; event < events; event++) {
                step(event);
                heartbeatOverdue();
                checkInvariants("seed " + seed + " event " + event);
            }
            converge();
        }

        private void step(int event) {
            int choice = random.nextInt(100);
            if (live.size() < 2 || choice < 8 && live.size() < 6) {
                join(random.nextInt(3) == 0 ? "instance-" + random.nextInt(4) : null);
            } else if (choice < 55) {
                beat(pick(), random.nextInt(4) != 0);
            } else if (choice < 70) {
                pick().adopt();
            } else if (choice < 74) {
                Harness.Client leaving = pick();
                leaving.leave(-1);
                live.remove(leaving);
            } else if (choice < 77) {
                live.remove(pick()); // crashed: stops heartbeating, its session expires
            } else if (choice < 80) {
                restartStatic();
            } else if (choice < 82) {
                topicPartitions += 1 + random.nextInt(3);
                harness.createTopic("t", topicPartitions);
            } else if (choice < 84) {
                restartCoordinator();
            } else {
                harness.timer.advance(100 + random.nextInt(900));
            }
        }

        private Harness.Client pick() {
            return live.get(random.nextInt(live.size()));
        }

        private void join(String instanceId) {
            if (instanceId != null) {
                for (Harness.Client client : live) {
                    if (instanceId.equals(client.instanceId)) {
                        return;
                    }
                }
            }
            Harness.Client client = harness.client("g", "m" + nextMemberId++, "t");
            client.instanceId = instanceId;
            ConsumerGroupHeartbeatResponseData response = client.join();
            ErrorCode error = ErrorCode.forCode(response.errorCode());
            assertThat(error).as("seed %d join", seed).isIn(ErrorCode.NONE, ErrorCode.UNRELEASED_INSTANCE_ID);
            if (error == ErrorCode.NONE) {
                live.add(client);
                lastBeatMs.put(client, harness.time.milliseconds());
            }
        }

        private void beat(Harness.Client client, boolean adopt) {
            ConsumerGroupHeartbeatResponseData response = adopt ? client.beat() : client.beatSlowly();
            ErrorCode error = ErrorCode.forCode(response.errorCode());
            assertThat(error).as("seed %d heartbeat of %s", seed, client.memberId).isIn(ErrorCode.NONE, ErrorCode.FENCED_MEMBER_EPOCH,
                ErrorCode.UNKNOWN_MEMBER_ID);
            lastBeatMs.put(client, harness.time.milliseconds());
            if (error != ErrorCode.NONE) {
                assertThat(client.join().errorCode()).isEqualTo(ErrorCode.NONE.code());
            }
        }

        private void restartStatic() {
            Harness.Client old = null;
            for (Harness.Client client : live) {
                if (client.instanceId != null) {
                    old = client;
                }
            }
            if (old == null) {
                return;
            }
            old.leave(-2);
            live.remove(old);
            Harness.Client restarted = harness.client("g", "m" + nextMemberId++, "t");
            restarted.instanceId = old.instanceId;
            assertThat(restarted.join().errorCode()).as("seed %d static rejoin", seed).isEqualTo(ErrorCode.NONE.code());
            live.add(restarted);
            lastBeatMs.put(restarted, harness.time.milliseconds());
        }

        private void restartCoordinator() {
            ConsumerGroup before = harness.group("g");
            Map<String, ConsumerGroupMember> members = before == null ? Map.of() : Map.copyOf(before.members());
            int epoch = before == null ? 0 : before.groupEpoch();
            harness.restart();
            ConsumerGroup after = harness.group("g");
            assertThat(after == null ? Map.of() : after.members()).as("seed %d members after restart", seed).isEqualTo(members);
            assertThat(after == null ? 0 : after.groupEpoch()).isEqualTo(epoch);
            for (Harness.Client client : live) {
                lastBeatMs.put(client, harness.time.milliseconds());
            }
        }

        /** Live clients heartbeat well within their session, as the real client's background thread does. */
        private void heartbeatOverdue() {
            for (Harness.Client client : new ArrayList<>(live)) {
                if (harness.time.milliseconds() - lastBeatMs.get(client) > SESSION_TIMEOUT_MS / 3) {
                    beat(client, true);
                }
            }
        }

        private void checkInvariants(String where) {
            ConsumerGroup group = harness.group("g");
            for (int i = 0; i < live.size(); i++) {
                Harness.Client client = live.get(i);
                for (int j = i + 1; j < live.size(); j++) {
                    assertThat(client.owned.intersects(live.get(j).owned)).as("%s: %s and %s both own a partition: %s / %s", where,
                        client.memberId, live.get(j).memberId, client.owned, live.get(j).owned).isFalse();
                }
                ConsumerGroupMember member = group == null ? null : group.member(client.memberId);
                if (member != null) {
                    assertThat(client.owned.isSubsetOf(member.assignedPartitions().union(member.partitionsPendingRevocation())))
                        .as("%s: %s owns %s but the coordinator counts %s", where, client.memberId, client.owned, member).isTrue();
                }
            }
        }

        private void converge() {
            for (int round = 0; round < 8; round++) {
                for (Harness.Client client : new ArrayList<>(live)) {
                    beat(client, true);
                }
                harness.timer.advance(SESSION_TIMEOUT_MS / 4);
            }
            // By now the sessions of crashed members expired; the live ones pick their partitions up.
            for (int round = 0; round < 4; round++) {
                for (Harness.Client client : new ArrayList<>(live)) {
                    beat(client, true);
                }
            }
            checkInvariants("seed " + seed + " end");
            ConsumerGroup group = harness.group("g");
            assertThat(group.members().keySet()).as("seed %d", seed).containsExactlyInAnyOrderElementsOf(
                live.stream().map(client -> client.memberId).toList());
            assertThat(group.state()).as("seed %d: epoch %d, assignment epoch %d, members %s, targets %s", seed, group.groupEpoch(), group.assignmentEpoch(), group.members(), group.targetAssignment).isEqualTo(ConsumerGroup.State.STABLE);
            Assignment all = Assignment.EMPTY;
            int min = Integer.MAX_VALUE;
            int max = 0;
            for (Harness.Client client : live) {
                all = all.union(client.owned);
                min = Math.min(min, client.owned.size());
                max = Math.max(max, client.owned.size());
            }
            UUID topic = harness.topics().topic("t").id();
            assertThat(all.partitions(topic)).as("seed %d: every partition is owned", seed).hasSize(topicPartitions);
            assertThat(max - min).as("seed %d: balanced", seed).isLessThanOrEqualTo(1);
        }
    }
}
