package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.OptionalInt;
import java.util.Set;

/**
 * What the nemeses do to a cluster, as a small interface so that the schedule and every nemesis run against a
 * fake in unit tests; {@link ChaosClusterControl} is the real one over a {@code ChaosCluster}. Nodes are
 * numbered 1..{@link #nodes()}.
 *
 * <p>Implementations must be thread-safe (the campaign heals from its own thread after the schedule).
 */
public interface ClusterControl {

    /** A node's process state. */
    enum NodeState { RUNNING, PAUSED, STOPPED }

    int nodes();

    NodeState state(int node);

    /** SIGKILL; the node must be running or paused. */
    void kill9(int node) throws Exception;

    /** Starts a stopped node with its data. */
    void start(int node) throws Exception;

    /** SIGSTOP; the node must be running. */
    void pause(int node);

    /** SIGCONT; the node must be paused. */
    void resume(int node);

    /** Drops every packet between each node of {@code a} and each of {@code b}, both ways. */
    void partition(Set<Integer> a, Set<Integer> b);

    /** Drops every packet from {@code from} to {@code to}. */
    void oneWay(int from, int to);

    /** Drops {@code percent} percent of {@code node}'s packets each way. */
    void loss(int node, int percent);

    /** Removes every partition, one-way and loss rule. Idempotent. */
    void healNetwork();

    /** Caps {@code node}'s bandwidth each way. */
    void limitBandwidth(int node, int rateKbit);

    /** Removes {@code node}'s bandwidth cap. Idempotent. */
    void clearBandwidth(int node);

    /** The leader of {@code partition} as the cluster's metadata says now, if known. */
    OptionalInt leader(TopicPartition partition);

    /** The active controller (the metadata quorum's leader) now, if known. */
    OptionalInt activeController();
}
