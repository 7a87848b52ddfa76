package io.strata.chaos.nemesis;

import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * The nemesis kinds by their command-line names. {@code kill}, {@code pause} and {@code partition} are the
 * ones the short campaign of CI combines; {@code partition} picks a shape per fault.
 */
public final class Nemeses {
    private static final Map<String, String> DESCRIPTIONS = new LinkedHashMap<>();
    private static final Map<String, BiFunction<ClusterControl, List<TopicPartition>, Nemesis>> FACTORIES = new LinkedHashMap<>();

    static {
        add("kill", "kill -9 a random node, restart it at the heal",
            (c, p) -> new KillNemesis("kill", Target.RANDOM, c, p));
        add("kill-leader", "kill -9 the leader of a random workload partition, restart it at the heal",
            (c, p) -> new KillNemesis("kill-leader", Target.PARTITION_LEADER, c, p));
        add("kill-controller", "kill -9 the active controller, restart it at the heal",
            (c, p) -> new KillNemesis("kill-controller", Target.CONTROLLER, c, p));
        add("pause", "SIGSTOP a random node, SIGCONT at the heal",
            (c, p) -> new PauseNemesis("pause", Target.RANDOM, c, p));
        add("pause-leader", "SIGSTOP the leader of a random workload partition, SIGCONT at the heal",
            (c, p) -> new PauseNemesis("pause-leader", Target.PARTITION_LEADER, c, p));
        add("partition", "a network partition of a random shape (halves, isolate, bridge, one-way, leader)",
            (c, p) -> new PartitionNemesis("partition", PartitionNemesis.Shape.RANDOM, c, p));
        add("partition-halves", "a random minority cut from the majority",
            (c, p) -> new PartitionNemesis("partition-halves", PartitionNemesis.Shape.HALVES, c, p));
        add("partition-isolate", "one random node cut from all others",
            (c, p) -> new PartitionNemesis("partition-isolate", PartitionNemesis.Shape.ISOLATE, c, p));
        add("partition-bridge", "two sides that cannot talk, joined by one bridge node",
            (c, p) -> new PartitionNemesis("partition-bridge", PartitionNemesis.Shape.BRIDGE, c, p));
        add("partition-oneway", "one node's packets to the others dropped, theirs to it flow",
            (c, p) -> new PartitionNemesis("partition-oneway", PartitionNemesis.Shape.ONE_WAY, c, p));
        add("partition-leader", "the leader of a random workload partition cut from the other nodes",
            (c, p) -> new PartitionNemesis("partition-leader", PartitionNemesis.Shape.LEADER, c, p));
        add("loss", "random packet loss (10-40 %) on one node",
            (c, p) -> new LossNemesis(c));
        add("bandwidth", "a tc tbf bandwidth cap (128-2048 kbit/s) on one node",
            (c, p) -> new BandwidthNemesis(c));
    }

    private Nemeses() {
    }

    private static void add(String name, String description, BiFunction<ClusterControl, List<TopicPartition>, Nemesis> factory) {
        DESCRIPTIONS.put(name, description);
        FACTORIES.put(name, factory);
    }

    /** Every nemesis name, in a stable order. */
    public static Set<String> names() {
        return DESCRIPTIONS.keySet();
    }

    /** What the nemesis does, for {@code --help}. */
    public static String description(String name) {
        return DESCRIPTIONS.get(name);
    }

    /** One nemesis of kind {@code name} over {@code cluster}; leader nemeses pick from {@code partitions}. */
    public static Nemesis create(String name, ClusterControl cluster, List<TopicPartition> partitions) {
        BiFunction<ClusterControl, List<TopicPartition>, Nemesis> factory = FACTORIES.get(name);
        if (factory == null) {
            throw new IllegalArgumentException("unknown nemesis: " + name + "; known: " + names());
        }
        return factory.apply(cluster, partitions);
    }

    /** One nemesis per name, in the order given (a name given twice is refused). */
    public static List<Nemesis> create(List<String> names, ClusterControl cluster, List<TopicPartition> partitions) {
        if (Set.copyOf(names).size() != names.size()) {
            throw new IllegalArgumentException("a nemesis named twice: " + names);
        }
        List<Nemesis> nemeses = new ArrayList<>();
        for (String name : names) {
            nemeses.add(create(name, cluster, partitions));
        }
        return nemeses;
    }
}
