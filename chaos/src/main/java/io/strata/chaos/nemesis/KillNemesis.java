package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.List;

/** kill -9 of one node (random, a partition's leader or the active controller); the heal starts it again. */
public final class KillNemesis extends OneNodeNemesis {

    public KillNemesis(String name, Target target, ClusterControl cluster, List<TopicPartition> partitions) {
        super(name, target, cluster, partitions);
    }

    @Override
    ClusterControl.NodeState faultState() {
        return ClusterControl.NodeState.STOPPED;
    }

    @Override
    String impair(int node) throws Exception {
        cluster.kill9(node);
        return "kill -9 node " + node;
    }

    @Override
    String restore(int node) throws Exception {
        cluster.start(node);
        return "restarted node " + node;
    }
}
