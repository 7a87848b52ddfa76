package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;

/** kill -9 of one node (random, a partition's leader or the active controller); the heal starts it again. */
public final class KillNemesis implements Nemesis {
    private final String name;
    private final Target target;
    private final ClusterControl cluster;
    private final List<TopicPartition> partitions;
    /** The killed node, 0 when none; set before the kill so that a kill that throws is still healed. */
    private int victim;

    public KillNemesis(String name, Target target, ClusterControl cluster, List<TopicPartition> partitions) {
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
    public Start start(Random random, FaultBudget budget) throws Exception {
        if (victim != 0) {
            throw new IllegalStateException(name + " already active: victim=" + victim);
        }
        String[] why = new String[1];
        OptionalInt node = target.pick(random, budget, cluster, partitions, why);
        if (node.isEmpty()) {
            return Start.skipped(why[0]);
        }
        victim = node.getAsInt();
        cluster.kill9(victim);
        return Start.started("kill -9 node " + victim + " (" + target.describe() + ")");
    }

    @Override
    public String heal() throws Exception {
        if (victim == 0) {
            return "";
        }
        int node = victim;
        if (cluster.state(node) == ClusterControl.NodeState.STOPPED) {
            cluster.start(node);
            victim = 0;
            return "restarted node " + node;
        }
        victim = 0;
        return "node " + node + " was not stopped (state " + cluster.state(node) + "): nothing to restart";
    }

    @Override
    public Set<Integer> impaired() {
        return victim == 0 ? Set.of() : Set.of(victim);
    }
}
