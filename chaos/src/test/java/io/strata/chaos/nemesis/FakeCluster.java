package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A {@link ClusterControl} without processes or network: it keeps each node's state, the dropped links
 * (directed), lossy and throttled nodes, and after every fault checks that no more nodes are impaired than
 * {@code maxImpaired} (a node is impaired when stopped, paused, lossy, throttled, or when the nodes it can
 * exchange packets with both ways — itself included, dead ones not — are not a majority). Violations and every
 * call are recorded for the test to assert on. Leaders: partition p of any topic is led by node
 * {@code p % nodes + 1}, the controller is node 1. Not thread-safe (the schedule runs in the test's thread).
 */
final class FakeCluster implements ClusterControl {
    private final int nodes;
    private final int maxImpaired;
    private final Map<Integer, NodeState> states = new TreeMap<>();
    private final Set<List<Integer>> dropped = new HashSet<>();
    private final Set<Integer> lossy = new TreeSet<>();
    private final Set<Integer> throttled = new TreeSet<>();
    final List<String> calls = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    /** The most nodes {@link #directlyImpaired()} at once so far. */
    int maxDirectlyImpaired;
    /** When set, the next kill9 kills the node and then throws, as a harness step that crashes half-way. */
    boolean failNextKillAfterKilling;

    FakeCluster(int nodes, int maxImpaired) {
        this.nodes = nodes;
        this.maxImpaired = maxImpaired;
        for (int node = 1; node <= nodes; node++) {
            states.put(node, NodeState.RUNNING);
        }
    }

    @Override
    public int nodes() {
        return nodes;
    }

    @Override
    public NodeState state(int node) {
        return states.get(node);
    }

    @Override
    public void kill9(int node) {
        require(node, states.get(node) != NodeState.STOPPED, "kill9");
        states.put(node, NodeState.STOPPED);
        check("kill9 " + node);
        if (failNextKillAfterKilling) {
            failNextKillAfterKilling = false;
            throw new IllegalStateException("simulated harness failure after killing node " + node);
        }
    }

    @Override
    public void start(int node) {
        require(node, states.get(node) == NodeState.STOPPED, "start");
        states.put(node, NodeState.RUNNING);
        calls.add("start " + node);
    }

    @Override
    public void pause(int node) {
        require(node, states.get(node) == NodeState.RUNNING, "pause");
        states.put(node, NodeState.PAUSED);
        check("pause " + node);
    }

    @Override
    public void resume(int node) {
        require(node, states.get(node) == NodeState.PAUSED, "resume");
        states.put(node, NodeState.RUNNING);
        calls.add("resume " + node);
    }

    @Override
    public void partition(Set<Integer> a, Set<Integer> b) {
        for (int x : a) {
            for (int y : b) {
                dropped.add(List.of(x, y));
                dropped.add(List.of(y, x));
            }
        }
        check("partition " + new TreeSet<>(a) + " " + new TreeSet<>(b));
    }

    @Override
    public void oneWay(int from, int to) {
        dropped.add(List.of(from, to));
        check("oneWay " + from + " " + to);
    }

    @Override
    public void loss(int node, int percent) {
        if (percent < 1 || percent > 100) {
            violations.add("loss percent out of range: " + percent);
        }
        lossy.add(node);
        check("loss " + node + " " + percent);
    }

    @Override
    public void healNetwork() {
        dropped.clear();
        lossy.clear();
        calls.add("healNetwork");
    }

    @Override
    public void limitBandwidth(int node, int rateKbit) {
        throttled.add(node);
        check("limitBandwidth " + node + " " + rateKbit);
    }

    @Override
    public void clearBandwidth(int node) {
        throttled.remove(node);
        calls.add("clearBandwidth " + node);
    }

    @Override
    public OptionalInt leader(TopicPartition partition) {
        return OptionalInt.of(partition.partition() % nodes + 1);
    }

    @Override
    public OptionalInt activeController() {
        return OptionalInt.of(1);
    }

    /** The nodes impaired now, as the class javadoc defines them. */
    Set<Integer> impaired() {
        Set<Integer> impaired = new TreeSet<>();
        for (int node = 1; node <= nodes; node++) {
            if (states.get(node) != NodeState.RUNNING || lossy.contains(node) || throttled.contains(node)) {
                impaired.add(node);
            }
        }
        for (int node = 1; node <= nodes; node++) {
            int reachable = 0;
            for (int peer = 1; peer <= nodes; peer++) {
                boolean alive = states.get(peer) == NodeState.RUNNING;
                if (alive && !dropped.contains(List.of(node, peer)) && !dropped.contains(List.of(peer, node))) {
                    reachable++;
                }
            }
            if (reachable <= nodes / 2) {
                impaired.add(node);
            }
        }
        return impaired;
    }

    /**
     * The nodes a fault hit directly: not running, lossy, throttled, or cut by the network alone from a majority
     * (counting dead peers as reachable). Unlike {@link #impaired()} it does not spread to nodes left in a
     * minority by others' faults, so it measures a budget set beyond the quorum.
     */
    Set<Integer> directlyImpaired() {
        Set<Integer> direct = new TreeSet<>();
        for (int node = 1; node <= nodes; node++) {
            int reachable = 0;
            for (int peer = 1; peer <= nodes; peer++) {
                if (!dropped.contains(List.of(node, peer)) && !dropped.contains(List.of(peer, node))) {
                    reachable++;
                }
            }
            if (states.get(node) != NodeState.RUNNING || lossy.contains(node) || throttled.contains(node) || reachable <= nodes / 2) {
                direct.add(node);
            }
        }
        return direct;
    }

    /** Whether every node runs and no fault is left. */
    boolean clean() {
        return states.values().stream().allMatch(state -> state == NodeState.RUNNING) && dropped.isEmpty() && lossy.isEmpty()
            && throttled.isEmpty();
    }

    private void check(String call) {
        calls.add(call);
        maxDirectlyImpaired = Math.max(maxDirectlyImpaired, directlyImpaired().size());
        Set<Integer> impaired = impaired();
        if (impaired.size() > maxImpaired) {
            violations.add("after " + call + ": impaired " + impaired + " > " + maxImpaired);
        }
    }

    private void require(int node, boolean legal, String move) {
        if (!legal) {
            throw new IllegalStateException("cannot " + move + " node " + node + ": state=" + states.get(node));
        }
    }
}
