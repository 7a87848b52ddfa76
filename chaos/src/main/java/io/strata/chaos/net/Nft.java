package io.strata.chaos.net;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Network faults between chaos nodes with nftables: a table {@code inet strata_chaos} inside each
 * node's namespace (never in the root namespace), with two base chains that accept by default:
 * <pre>
 *   ip netns exec NS nft add table inet strata_chaos
 *   ip netns exec NS nft add chain inet strata_chaos input  { type filter hook input priority 0; policy accept; }
 *   ip netns exec NS nft add chain inet strata_chaos output { type filter hook output priority 0; policy accept; }
 * </pre>
 * Each fault adds rules (X, Y: node addresses 10.77.RUN.NODE):
 * <ul>
 *   <li>{@link #partition}: in X's namespace {@code input ip saddr Y drop} and
 *       {@code output ip daddr Y drop}, and the same in Y's for X, for every X in one set and Y in
 *       the other: packets vanish both ways, connections time out.</li>
 *   <li>{@link #oneWay}: {@code output ip daddr TO drop} in FROM's namespace and
 *       {@code input ip saddr FROM drop} in TO's: FROM's packets never reach TO, TO's reach FROM.</li>
 *   <li>{@link #reject}: in X's input chain {@code ip saddr Y tcp flags & rst == rst accept},
 *       {@code ip saddr Y meta l4proto tcp reject with tcp reset}, {@code ip saddr Y drop}, and the
 *       same in Y's for X: TCP fails at once (connection refused / reset) instead of timing out.
 *       (A reject rule on the output side would swallow the peer's reset, so there is none.)</li>
 *   <li>{@link #loss}: {@code input iifname "eth0" numgen random mod 100 < P drop} and
 *       {@code output oifname "eth0" numgen random mod 100 < P drop} in the node's namespace:
 *       P percent of its packets on the chaos network are lost each way, the clients' too
 *       (P = 100 is a plain {@code drop}: numgen's range is 0..99).</li>
 * </ul>
 * {@link #heal} runs {@code nft flush table inet strata_chaos} in every namespace; {@link #close}
 * deletes the tables ({@code nft delete table inet strata_chaos}), which also vanish with the
 * namespaces. Traffic from the root namespace (the test's clients, at {@link ChaosBridge#ADDRESS})
 * is never matched by partition, one-way or reject rules.
 *
 * <p>Thread-safe: every method is synchronized; each one's commands run in order.
 */
public final class Nft implements AutoCloseable {
    /** The table's name inside every node namespace. */
    public static final String TABLE = "strata_chaos";
    /**
     * The pseudo node id of the root namespace (the test's clients at {@link ChaosBridge#ADDRESS}),
     * allowed in {@link #partition}, {@link #reject} and {@link #oneWay}: its rules go only into the
     * other side's namespace, as the root namespace's tables are never touched.
     */
    public static final int ROOT = 0;

    private final Map<Integer, NetNs> namespaces;

    /** Creates the table and chains in every namespace of {@code namespaces} (node id → namespace). */
    public Nft(Map<Integer, NetNs> namespaces) {
        if (namespaces.isEmpty()) {
            throw new IllegalArgumentException("no namespaces");
        }
        this.namespaces = Map.copyOf(new LinkedHashMap<>(namespaces));
        for (NetNs ns : this.namespaces.values()) {
            ns.run(List.of("nft", "add", "table", "inet", TABLE));
            ns.run(List.of("nft", "add", "chain", "inet", TABLE, "input",
                "{ type filter hook input priority 0; policy accept; }"));
            ns.run(List.of("nft", "add", "chain", "inet", TABLE, "output",
                "{ type filter hook output priority 0; policy accept; }"));
        }
    }

    /** Drops every packet between each node of {@code a} and each node of {@code b}, both ways. */
    public synchronized void partition(Set<Integer> a, Set<Integer> b) {
        checkDisjoint(a, b);
        for (int x : a) {
            for (int y : b) {
                blockBothWays(x, y, List.of("drop"));
                blockBothWays(y, x, List.of("drop"));
            }
        }
    }

    /** Drops every packet from {@code from} to {@code to}; packets from {@code to} to {@code from} still flow. */
    public synchronized void oneWay(int from, int to) {
        checkDisjoint(Set.of(from), Set.of(to));
        addRule(from, "output", List.of("ip", "daddr", address(to), "drop"));
        addRule(to, "input", List.of("ip", "saddr", address(from), "drop"));
    }

    /**
     * As {@link #partition}, but a TCP segment from the other side is answered with a reset, so
     * connections fail at once instead of timing out. The rules sit only in input chains, and the
     * resets themselves are let through (a reset from the peer is the answer to one's own SYN).
     */
    public synchronized void reject(Set<Integer> a, Set<Integer> b) {
        checkDisjoint(a, b);
        for (int x : a) {
            for (int y : b) {
                rejectFrom(x, y);
                rejectFrom(y, x);
            }
        }
    }

    /** Drops {@code percent} percent (1..100) of {@code node}'s packets on the chaos network, each way, at random. */
    public synchronized void loss(int node, int percent) {
        if (percent < 1 || percent > 100) {
            throw new IllegalArgumentException("percent must be between 1 and 100: percent=" + percent);
        }
        // numgen's range is 0..99, so "< 100" is refused: total loss is a plain drop.
        List<String> random = percent == 100 ? List.of("drop")
            : List.of("numgen", "random", "mod", "100", "<", Integer.toString(percent), "drop");
        addRule(node, "input", concat(List.of("iifname", "eth0"), random));
        addRule(node, "output", concat(List.of("oifname", "eth0"), random));
    }

    /** Removes every rule of every fault; the chains stay (and accept). Idempotent. */
    public synchronized void heal() {
        for (NetNs ns : namespaces.values()) {
            ns.run(List.of("nft", "flush", "table", "inet", TABLE));
        }
    }

    /** The rules now in {@code node}'s table, as {@code nft list table} prints them (for logs and tests). */
    public synchronized String list(int node) {
        return namespace(node).run(List.of("nft", "list", "table", "inet", TABLE));
    }

    /** Deletes the table in every namespace that still exists. Idempotent. */
    @Override
    public synchronized void close() {
        for (NetNs ns : namespaces.values()) {
            Commands.runAllowingFailure(ns.execCommand(List.of("nft", "delete", "table", "inet", TABLE)));
        }
    }

    /** In {@code self}'s input chain: resets from {@code peer} pass, its other TCP segments are rejected, the rest dropped. */
    private void rejectFrom(int self, int peer) {
        List<String> from = List.of("ip", "saddr", address(peer));
        addRule(self, "input", concat(from, List.of("tcp", "flags", "&", "rst", "==", "rst", "accept")));
        addRule(self, "input", concat(from, List.of("meta", "l4proto", "tcp", "reject", "with", "tcp", "reset")));
        addRule(self, "input", concat(from, List.of("drop")));
    }

    /** In {@code self}'s namespace: {@code verdict} on packets from and to {@code peer}. */
    private void blockBothWays(int self, int peer, List<String> verdict) {
        addRule(self, "input", concat(List.of("ip", "saddr", address(peer)), verdict));
        addRule(self, "output", concat(List.of("ip", "daddr", address(peer)), verdict));
    }

    private void addRule(int node, String chain, List<String> rule) {
        if (node == ROOT) {
            return; // the rule in the peer's namespace blocks the path on its own
        }
        namespace(node).run(concat(List.of("nft", "add", "rule", "inet", TABLE, chain), rule));
    }

    private String address(int node) {
        return node == ROOT ? ChaosBridge.ADDRESS : namespace(node).address();
    }

    private NetNs namespace(int node) {
        NetNs ns = namespaces.get(node);
        if (ns == null) {
            throw new IllegalArgumentException("unknown node: node=" + node + " known=" + namespaces.keySet());
        }
        return ns;
    }

    private void checkDisjoint(Set<Integer> a, Set<Integer> b) {
        Set<Integer> both = new HashSet<>(a);
        both.retainAll(b);
        if (a.isEmpty() || b.isEmpty() || !both.isEmpty()) {
            throw new IllegalArgumentException("node sets must be non-empty and disjoint: a=" + a + " b=" + b);
        }
        if (a.contains(ROOT) && b.contains(ROOT)) {
            throw new IllegalArgumentException("the root namespace cannot be on both sides: a=" + a + " b=" + b);
        }
        for (int node : a) {
            address(node);
        }
        for (int node : b) {
            address(node);
        }
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }
}
