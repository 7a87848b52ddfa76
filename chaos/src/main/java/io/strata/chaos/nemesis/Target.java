package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.OptionalInt;
import java.util.Random;

/** Whom a single-node fault hits: any node, the leader of a workload partition, or the active controller. */
public enum Target {
    RANDOM,
    PARTITION_LEADER,
    CONTROLLER;

    /**
     * The victim, or empty when none fits the budget (the reason then in {@code why[0]}).
     *
     * @param partitions the workload partitions a {@link #PARTITION_LEADER} target picks from
     */
    OptionalInt pick(Random random, FaultBudget budget, ClusterControl cluster, List<TopicPartition> partitions, String[] why) {
        if (budget.room() < 1) {
            why[0] = "no room: impaired=" + FaultBudget.sorted(budget.impaired()) + " max=" + budget.maxImpaired();
            return OptionalInt.empty();
        }
        List<Integer> eligible = budget.eligible();
        switch (this) {
            case RANDOM -> {
                return OptionalInt.of(eligible.get(random.nextInt(eligible.size())));
            }
            case PARTITION_LEADER -> {
                if (partitions.isEmpty()) {
                    why[0] = "no workload partitions";
                    return OptionalInt.empty();
                }
                TopicPartition partition = partitions.get(random.nextInt(partitions.size()));
                return eligibleOrWhy(cluster.leader(partition), eligible, "leader of " + partition, why);
            }
            case CONTROLLER -> {
                return eligibleOrWhy(cluster.activeController(), eligible, "active controller", why);
            }
            default -> throw new IllegalStateException("unknown target: " + this);
        }
    }

    private static OptionalInt eligibleOrWhy(OptionalInt node, List<Integer> eligible, String what, String[] why) {
        if (node.isEmpty()) {
            why[0] = what + " unknown";
            return OptionalInt.empty();
        }
        if (!eligible.contains(node.getAsInt())) {
            why[0] = what + " is node " + node.getAsInt() + ", already impaired";
            return OptionalInt.empty();
        }
        return node;
    }

    /** The suffix of a nemesis name for this target. */
    String describe() {
        return switch (this) {
            case RANDOM -> "random node";
            case PARTITION_LEADER -> "partition leader";
            case CONTROLLER -> "active controller";
        };
    }
}
