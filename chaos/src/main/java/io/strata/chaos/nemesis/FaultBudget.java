package io.strata.chaos.nemesis;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * How many more nodes a new fault may impair: the cluster's {@code nodes}, those already impaired by active
 * faults, and the most that may be impaired at once ({@code maxImpaired}, by default what the metadata quorum
 * tolerates, {@code (nodes - 1) / 2}). A node is impaired when killed, paused, cut from the majority, lossy
 * or throttled.
 *
 * @param nodes the cluster size
 * @param impaired the nodes impaired now
 * @param maxImpaired the most nodes impaired at once
 */
public record FaultBudget(int nodes, Set<Integer> impaired, int maxImpaired) {
    public FaultBudget {
        impaired = Set.copyOf(impaired);
        if (nodes < 1 || maxImpaired < 0) {
            throw new IllegalArgumentException("nodes must be >= 1 and maxImpaired >= 0: nodes=" + nodes + " maxImpaired=" + maxImpaired);
        }
    }

    /** The number of nodes the metadata quorum can lose and still elect a leader. */
    public static int quorumTolerance(int nodes) {
        return (nodes - 1) / 2;
    }

    /** How many more nodes may be impaired. */
    public int room() {
        return Math.max(0, maxImpaired - impaired.size());
    }

    /** The nodes not impaired, ascending (a stable order for seeded choices). */
    public List<Integer> eligible() {
        List<Integer> eligible = new ArrayList<>();
        for (int node = 1; node <= nodes; node++) {
            if (!impaired.contains(node)) {
                eligible.add(node);
            }
        }
        return eligible;
    }

    /** Every node, ascending. */
    public List<Integer> all() {
        List<Integer> all = new ArrayList<>();
        for (int node = 1; node <= nodes; node++) {
            all.add(node);
        }
        return all;
    }

    static Set<Integer> sorted(Set<Integer> nodes) {
        return new TreeSet<>(nodes);
    }
}
