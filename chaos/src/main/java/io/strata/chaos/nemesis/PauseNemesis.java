package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.List;

/** SIGSTOP of one node (random or a partition's leader): its sockets stay open and silent; the heal sends SIGCONT. */
public final class PauseNemesis extends OneNodeNemesis {

    public PauseNemesis(String name, Target target, ClusterControl cluster, List<TopicPartition> partitions) {
        super(name, target, cluster, partitions);
    }

    @Override
    ClusterControl.NodeState faultState() {
        return ClusterControl.NodeState.PAUSED;
    }

    @Override
    String refusal(int node) {
        ClusterControl.NodeState state = cluster.state(node);
        return state == ClusterControl.NodeState.RUNNING ? null : "node " + node + " is " + state;
    }

    @Override
    String impair(int node) {
        cluster.pause(node);
        return "SIGSTOP node " + node;
    }

    @Override
    String restore(int node) {
        cluster.resume(node);
        return "SIGCONT node " + node;
    }
}
