package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;

/** SIGSTOP of one node (random or a partition's leader): its sockets stay open and silent; the heal sends SIGCONT. */
public final class PauseNemesis implements Nemesis {
    private final String name;
    private final Target target;
    private final ClusterControl cluster;
    private final List<TopicPartition> partitions;
    /** The paused node, 0 when none; set before the signal so that a pause that throws is still healed. */
    private int victim;

    public PauseNemesis(String name, Target target, ClusterControl cluster, List<TopicPartition> partitions) {
        this.name = name;
        this.target = target;
        this.cluster = cluster;
        this.partitions = List.copyOf(partitions);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Start start(Random random, FaultBudget budget) {
        if (victim != 0) {
            throw new IllegalStateException(name + " already active: victim=" + victim);
        }
        String[] why = new String[1];
        OptionalInt node = target.pick(random, budget, cluster, partitions, why);
        if (node.isEmpty()) {
            return Start.skipped(why[0]);
        }
        if (cluster.state(node.getAsInt()) != ClusterControl.NodeState.RUNNING) {
            return Start.skipped("node " + node.getAsInt() + " is " + cluster.state(node.getAsInt()));
        }
        victim = node.getAsInt();
        cluster.pause(victim);
        return Start.started("SIGSTOP node " + victim + " (" + target.describe() + ")");
    }

    @Override
    public String heal() {
        if (victim == 0) {
            return "";
        }
        int node = victim;
        if (cluster.state(node) == ClusterControl.NodeState.PAUSED) {
            cluster.resume(node);
            victim = 0;
            return "SIGCONT node " + node;
        }
        victim = 0;
        return "node " + node + " was not paused (state " + cluster.state(node) + "): nothing to resume";
    }

    @Override
    public Set<Integer> impaired() {
        return victim == 0 ? Set.of() : Set.of(victim);
    }
}
