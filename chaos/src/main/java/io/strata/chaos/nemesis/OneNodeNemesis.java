package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;

/**
 * A fault of one node chosen by a {@link Target} (kill -9, SIGSTOP): the node is remembered before the
 * fault is applied, so that a start that throws half-way is still healed, and the heal undoes it only if
 * the node is still in the state the fault left it in (a node restarted meanwhile is left alone).
 */
abstract class OneNodeNemesis implements Nemesis {
    private final String name;
    private final Target target;
    protected final ClusterControl cluster;
    private final List<TopicPartition> partitions;
    /** The impaired node, 0 when none. */
    private int victim;

    OneNodeNemesis(String name, Target target, ClusterControl cluster, List<TopicPartition> partitions) {
        this.name = name;
        this.target = target;
        this.cluster = cluster;
        this.partitions = List.copyOf(partitions);
    }

    /** The node state the fault leaves (the heal acts only in it). */
    abstract ClusterControl.NodeState faultState();

    /** Why {@code node} cannot take the fault now, or {@code null} when it can. */
    String refusal(int node) {
        return null;
    }

    /** Applies the fault to {@code node}; @return what was done, for the log */
    abstract String impair(int node) throws Exception;

    /** Undoes the fault of {@code node}, which is in {@link #faultState()}; @return what was done */
    abstract String restore(int node) throws Exception;

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Start start(Random random, FaultBudget budget) throws Exception {
        if (victim != 0) {
            throw new IllegalStateException(name + " already active: victim=" + victim);
        }
        String[] why = new String[1];
        OptionalInt node = target.pick(random, budget, cluster, partitions, why);
        if (node.isEmpty()) {
            return Start.skipped(why[0]);
        }
        String refusal = refusal(node.getAsInt());
        if (refusal != null) {
            return Start.skipped(refusal);
        }
        victim = node.getAsInt();
        return Start.started(impair(victim) + " (" + target.describe() + ")");
    }

    @Override
    public final String heal() throws Exception {
        if (victim == 0) {
            return "";
        }
        int node = victim;
        ClusterControl.NodeState state = cluster.state(node);
        if (state == faultState()) {
            String done = restore(node);
            victim = 0; // only now: a restore that throws is retried by the next heal
            return done;
        }
        victim = 0;
        return "node " + node + " was not " + faultState().name().toLowerCase(java.util.Locale.ROOT) + " (state " + state
            + "): nothing to undo";
    }

    @Override
    public final Set<Integer> impaired() {
        return victim == 0 ? Set.of() : Set.of(victim);
    }
}
