package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * A network partition between the nodes (never between the clients and a node: the clients keep talking to
 * whichever side they reach, as they would in a real split). Shapes, with the nodes they impair:
 * <ul>
 *   <li>{@link Shape#HALVES}: a random minority of {@code min(nodes / 2, room)} nodes against the rest;
 *       impairs the minority.</li>
 *   <li>{@link Shape#ISOLATE}: one random node against all others; impairs it.</li>
 *   <li>{@link Shape#BRIDGE}: two sides that cannot talk and one bridge node that talks to both (Jepsen's
 *       bridge); impairs the side picked as victims ({@code (nodes - 1) / 2} nodes, capped by room).</li>
 *   <li>{@link Shape#ONE_WAY}: one node's packets to every other node are dropped, theirs to it flow (it
 *       hears the leader but cannot answer); impairs it.</li>
 *   <li>{@link Shape#LEADER}: the leader of a random workload partition against all other nodes; impairs it.</li>
 *   <li>{@link Shape#RANDOM}: one of the above per start, chosen with the seeded random.</li>
 * </ul>
 * Every shape is in the {@code nft} exclusive group: its heal flushes every rule.
 */
public final class PartitionNemesis implements Nemesis {
    /** The shapes of partition. */
    public enum Shape { HALVES, ISOLATE, BRIDGE, ONE_WAY, LEADER, RANDOM }

    /** The exclusive group of every nftables fault. */
    public static final String NFT_GROUP = "nft";
    private static final Shape[] CONCRETE = {Shape.HALVES, Shape.ISOLATE, Shape.BRIDGE, Shape.ONE_WAY, Shape.LEADER};

    private final String name;
    private final Shape shape;
    private final ClusterControl cluster;
    private final List<TopicPartition> partitions;
    private Set<Integer> impaired = Set.of();
    private boolean active;

    public PartitionNemesis(String name, Shape shape, ClusterControl cluster, List<TopicPartition> partitions) {
        this.name = name;
        this.shape = shape;
        this.cluster = cluster;
        this.partitions = List.copyOf(partitions);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String exclusiveGroup() {
        return NFT_GROUP;
    }

    @Override
    public Start start(Random random, FaultBudget budget) {
        if (active) {
            throw new IllegalStateException(name + " already active: impaired=" + impaired);
        }
        Shape chosen = shape == Shape.RANDOM ? CONCRETE[random.nextInt(CONCRETE.length)] : shape;
        if (budget.room() < 1) {
            return Start.skipped(chosen + ": no room: impaired=" + FaultBudget.sorted(budget.impaired()) + " max=" + budget.maxImpaired());
        }
        List<Integer> eligible = new ArrayList<>(budget.eligible());
        Collections.shuffle(eligible, random);
        return switch (chosen) {
            case HALVES -> cut(budget, new TreeSet<>(eligible.subList(0, Math.min(budget.nodes() / 2, budget.room()))), "halves");
            case ISOLATE -> cut(budget, Set.of(eligible.get(0)), "isolate");
            case BRIDGE -> bridge(random, budget, eligible);
            case ONE_WAY -> oneWay(budget, eligible.get(0));
            case LEADER -> leader(random, budget);
            case RANDOM -> throw new IllegalStateException("RANDOM resolves to a concrete shape");
        };
    }

    private Start cut(FaultBudget budget, Set<Integer> minority, String what) {
        if (minority.isEmpty()) {
            return Start.skipped(what + ": no minority fits: nodes=" + budget.nodes() + " room=" + budget.room());
        }
        Set<Integer> majority = new TreeSet<>(budget.all());
        majority.removeAll(minority);
        activate(minority);
        cluster.partition(minority, majority);
        return Start.started(what + ": " + minority + " | " + majority);
    }

    private Start bridge(Random random, FaultBudget budget, List<Integer> shuffledEligible) {
        int sideSize = Math.min((budget.nodes() - 1) / 2, budget.room());
        if (budget.nodes() < 3 || sideSize < 1) {
            return Start.skipped("bridge: needs 3 nodes and room: nodes=" + budget.nodes() + " room=" + budget.room());
        }
        Set<Integer> victims = new TreeSet<>(shuffledEligible.subList(0, sideSize));
        List<Integer> rest = new ArrayList<>(budget.all());
        rest.removeAll(victims);
        // The first of the rest in seeded order is the bridge; the others form the far side.
        Collections.shuffle(rest, random);
        int bridgeNode = rest.get(0);
        Set<Integer> farSide = new TreeSet<>(rest.subList(1, rest.size()));
        activate(victims);
        cluster.partition(victims, farSide);
        return Start.started("bridge: " + victims + " | " + farSide + " via node " + bridgeNode);
    }

    private Start oneWay(FaultBudget budget, int from) {
        activate(Set.of(from));
        List<Integer> others = new ArrayList<>(budget.all());
        others.remove(Integer.valueOf(from));
        for (int to : others) {
            cluster.oneWay(from, to);
        }
        return Start.started("one-way: node " + from + " -/-> " + others + " (theirs to it flow)");
    }

    private Start leader(Random random, FaultBudget budget) {
        if (partitions.isEmpty()) {
            return Start.skipped("leader: no workload partitions");
        }
        TopicPartition partition = partitions.get(random.nextInt(partitions.size()));
        OptionalInt leader = cluster.leader(partition);
        if (leader.isEmpty()) {
            return Start.skipped("leader: leader of " + partition + " unknown");
        }
        if (budget.impaired().contains(leader.getAsInt())) {
            return Start.skipped("leader: leader of " + partition + " is node " + leader.getAsInt() + ", already impaired");
        }
        return cut(budget, Set.of(leader.getAsInt()), "leader of " + partition);
    }

    private void activate(Set<Integer> victims) {
        // Recorded before the rules go in: a start that throws half-way is still healed.
        impaired = Set.copyOf(victims);
        active = true;
    }

    @Override
    public String heal() {
        if (!active) {
            return "";
        }
        cluster.healNetwork();
        String healed = "network healed (was impairing " + FaultBudget.sorted(impaired) + ")";
        active = false;
        impaired = Set.of();
        return healed;
    }

    @Override
    public Set<Integer> impaired() {
        return impaired;
    }
}
