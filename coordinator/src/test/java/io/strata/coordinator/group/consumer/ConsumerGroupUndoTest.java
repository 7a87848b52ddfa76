package io.strata.coordinator.group.consumer;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ConsumerGroupHeartbeatResponseData;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A failed write of a consumer group undoes exactly that change in memory, without replaying
 * the partition: the state after the failure equals the state before the write, later writes
 * work, and a restart rebuilds the same state from the log.
 */
class ConsumerGroupUndoTest {
    private final Harness harness = new Harness();

    ConsumerGroupUndoTest() {
        harness.createTopic("orders", 6);
        harness.createTopic("payments", 3);
    }

    private static ErrorCode error(ConsumerGroupHeartbeatResponseData response) {
        return ErrorCode.forCode(response.errorCode());
    }

    /** Everything a group's records say, comparable across managers. */
    private static Map<String, Object> state(ConsumerGroup group) {
        Map<String, Object> state = new TreeMap<>();
        if (group == null) {
            return state;
        }
        state.put("groupEpoch", group.groupEpoch());
        state.put("assignmentEpoch", group.assignmentEpoch());
        state.put("metadataHash", group.metadataHash);
        state.put("members", new TreeMap<>(group.members()));
        state.put("target", new TreeMap<>(group.targetAssignment));
        state.put("regexes", new TreeMap<>(group.regexes));
        state.put("state", group.state());
        return state;
    }

    /** Members a and b reconciled, c joined and revoking: a group in the middle of traffic. */
    private List<Harness.Client> traffic() {
        Harness.Client a = harness.client("g", "a", "orders");
        Harness.Client b = harness.client("g", "b", "orders", "payments");
        a.join();
        b.join();
        for (int i = 0; i < 3; i++) {
            a.beat();
            b.beat();
        }
        Harness.Client c = harness.client("g", "c", "payments");
        c.join();
        a.beat();
        return List.of(a, b, c);
    }

    @Test
    void aFailedJoinIsUndoneWithoutAReplayAndLaterWritesWork() {
        List<Harness.Client> clients = traffic();
        Map<String, Object> before = state(harness.group("g"));
        int replays = harness.log.replays;

        harness.log.failNextAppend(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        Harness.Client d = harness.client("g", "d", "orders");
        assertThat(error(d.join())).isEqualTo(ErrorCode.NOT_COORDINATOR);
        assertThat(state(harness.group("g"))).isEqualTo(before);
        assertThat(harness.log.replays).as("no replay of the partition").isEqualTo(replays);
        assertThat(harness.manager.reloads()).isZero();

        assertThat(error(d.join())).isEqualTo(ErrorCode.NONE);
        for (int i = 0; i < 4; i++) {
            for (Harness.Client client : clients) {
                assertThat(error(client.beat())).isEqualTo(ErrorCode.NONE);
            }
            assertThat(error(d.beat())).isEqualTo(ErrorCode.NONE);
        }
        assertThat(harness.group("g").state()).isEqualTo(ConsumerGroup.State.STABLE);
        assertThat(harness.log.replays).isEqualTo(replays);

        Map<String, Object> live = state(harness.group("g"));
        harness.restart();
        assertThat(state(harness.group("g"))).isEqualTo(live);
    }

    @Test
    void aFailedWriteUndoesTheLaterWritesInFlightBuiltOnIt() {
        traffic();
        Map<String, Object> before = state(harness.group("g"));
        int replays = harness.log.replays;

        harness.log.holdAppends = true;
        harness.log.failNextAppend(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        AtomicReference<ConsumerGroupHeartbeatResponseData> joined = new AtomicReference<>();
        AtomicReference<ConsumerGroupHeartbeatResponseData> left = new AtomicReference<>();
        harness.manager.heartbeat(harness.client("g", "d", "orders").joinRequest(), Harness.VERSION, "d", "/h", joined::set);
        // A second change built on the first, appended after it; it fails as well (the leadership went).
        harness.log.failNextAppend(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        harness.manager.heartbeat(harness.client("g", "e", "payments").joinRequest(), Harness.VERSION, "e", "/h", left::set);
        assertThat(harness.group("g").member("e")).as("applied while in flight").isNotNull();
        harness.log.completeHeld();

        assertThat(error(joined.get())).isEqualTo(ErrorCode.NOT_COORDINATOR);
        assertThat(error(left.get())).isEqualTo(ErrorCode.NOT_COORDINATOR);
        assertThat(state(harness.group("g"))).isEqualTo(before);
        assertThat(harness.log.replays).isEqualTo(replays);
        Map<String, Object> live = state(harness.group("g"));
        harness.restart();
        assertThat(state(harness.group("g"))).isEqualTo(live);
    }

    @Test
    void aWriteUndoneAfterAnEarlierFailureButAppendedAfterAllRebuildsTheGroupFromTheLog() {
        List<Harness.Client> clients = traffic();
        harness.log.holdAppends = true;
        harness.log.failNextAppend(ErrorCode.REQUEST_TIMED_OUT);
        AtomicReference<ConsumerGroupHeartbeatResponseData> joined = new AtomicReference<>();
        AtomicReference<ConsumerGroupHeartbeatResponseData> beat = new AtomicReference<>();
        harness.manager.heartbeat(harness.client("g", "d", "orders").joinRequest(), Harness.VERSION, "d", "/h", joined::set);
        harness.manager.heartbeat(clients.get(0).heartbeatRequest(), Harness.VERSION, "a", "/h", beat::set);
        harness.log.completeHeld();

        assertThat(error(joined.get())).isEqualTo(ErrorCode.COORDINATOR_NOT_AVAILABLE);
        assertThat(harness.manager.reloads()).as("memory lacked the appended write: rebuilt").isEqualTo(1);
        Map<String, Object> live = state(harness.group("g"));
        harness.restart();
        assertThat(state(harness.group("g"))).isEqualTo(live);
    }
}
