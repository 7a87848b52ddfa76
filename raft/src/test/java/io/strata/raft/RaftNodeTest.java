package io.strata.raft;

import io.strata.common.Time;
import io.strata.protocol.ApiMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three {@link RaftNode}s on real threads and the real clock, connected by an in-process
 * network that round-trips every message through the wire format: elections, commits,
 * a graceful hand-over and a crashed leader.
 */
class RaftNodeTest {
    private static final long DEADLINE_MS = 30_000;
    private final Map<Integer, RaftNode> nodes = new ConcurrentHashMap<>();
    private final Map<Integer, MockLog> logs = new ConcurrentHashMap<>();
    private final Map<Integer, RaftSimulation.MemoryQuorumStateStore> stores = new ConcurrentHashMap<>();

    @AfterEach
    void stopAll() throws InterruptedException {
        for (RaftNode node : nodes.values()) {
            node.halt();
        }
    }

    private RaftNode start(int id) {
        MockLog log = logs.computeIfAbsent(id, i -> new MockLog());
        RaftSimulation.MemoryQuorumStateStore store = stores.computeIfAbsent(id, i -> new RaftSimulation.MemoryQuorumStateStore());
        RaftNode.RequestSender sender = (destination, api, version, request) -> {
            RaftNode peer = nodes.get(destination);
            if (peer == null) {
                return CompletableFuture.failedFuture(new IllegalStateException("node " + destination + " is down"));
            }
            ApiMessage wireRequest = RaftSimulation.roundTrip(new RaftMessage(id, destination, 0, request, true)).data();
            return peer.handleRequest(id, wireRequest)
                .thenApply(response -> RaftSimulation.roundTrip(new RaftMessage(destination, id, 0, response, false)).data());
        };
        RaftConfig fast = new RaftConfig(300, 300, 600, 600, 20, 1 << 20);
        RaftNode node = new RaftNode(id, Set.of(1, 2, 3), "cluster", fast, log, store, sender, Time.SYSTEM, new Random(id), new RaftClient.Listener() { });
        nodes.put(id, node);
        return node;
    }

    private static void waitFor(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (!condition.getAsBoolean()) {
            assertThat(System.currentTimeMillis()).as(what).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    private RaftNode leader() {
        return nodes.values().stream().filter(RaftNode::isLeader).findFirst().orElse(null);
    }

    private long appendAll(int count, String prefix) throws Exception {
        long last = -1;
        for (int i = 0; i < count; ) {
            RaftNode leader = leader();
            if (leader == null) {
                Thread.sleep(5);
                continue;
            }
            long offset = leader.append(List.of((prefix + i).getBytes(StandardCharsets.UTF_8))).get(10, TimeUnit.SECONDS);
            if (offset >= 0) {
                last = offset;
                i++;
            }
        }
        return last;
    }

    @Test
    void electsCommitsHandsOverAndSurvivesALeaderCrash() throws Exception {
        for (int id = 1; id <= 3; id++) {
            start(id);
        }
        waitFor("a leader", () -> leader() != null);
        long last = appendAll(100, "a");
        waitFor("all three commit the first 100", () -> nodes.values().stream().allMatch(node -> node.highWatermark() > last));

        RaftNode first = leader();
        int firstEpoch = first.epoch();
        first.close(); // graceful: resigns
        nodes.remove(first.localId());
        waitFor("a new leader after the hand-over", () -> leader() != null && leader().epoch() > firstEpoch);
        long afterHandOver = appendAll(50, "b");
        waitFor("the survivors commit", () -> nodes.values().stream().allMatch(node -> node.highWatermark() > afterHandOver));

        RaftNode returning = start(first.localId());
        waitFor("the returning node catches up", () -> returning.highWatermark() > afterHandOver);

        RaftNode second = leader();
        int secondEpoch = second.epoch();
        second.halt(); // a crash: no resignation
        nodes.remove(second.localId());
        waitFor("a new leader after the crash", () -> leader() != null && leader().epoch() > secondEpoch);
        long afterCrash = appendAll(50, "c");
        waitFor("the survivors commit after the crash", () -> nodes.values().stream().allMatch(node -> node.highWatermark() > afterCrash));

        // Every committed entry is the same on the surviving replicas.
        List<List<MockLog.Entry>> committed = new ArrayList<>();
        for (RaftNode node : nodes.values()) {
            committed.add(logs.get(node.localId()).entries().subList(0, (int) afterCrash + 1));
        }
        for (int i = 0; i <= afterCrash; i++) {
            MockLog.Entry entry = committed.get(0).get(i);
            for (List<MockLog.Entry> other : committed) {
                assertThat(other.get(i).sameAs(entry)).as("entry %d", i).isTrue();
            }
        }
    }
}
