package io.strata.chaos.nemesis;

import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Random packet loss on one node's chaos network interface, each way, clients' packets included
 * ({@code Nft.loss}): a seeded {@value #PERCENT_MIN}..{@value #PERCENT_MAX} percent. In the {@code nft}
 * exclusive group.
 */
public final class LossNemesis implements Nemesis {
    static final int PERCENT_MIN = 10;
    static final int PERCENT_MAX = 40;

    private final ClusterControl cluster;
    private int victim;

    public LossNemesis(ClusterControl cluster) {
        this.cluster = cluster;
    }

    @Override
    public String name() {
        return "loss";
    }

    @Override
    public String exclusiveGroup() {
        return PartitionNemesis.NFT_GROUP;
    }

    @Override
    public Start start(Random random, FaultBudget budget) {
        if (victim != 0) {
            throw new IllegalStateException("loss already active: victim=" + victim);
        }
        if (budget.room() < 1) {
            return Start.skipped("no room: impaired=" + FaultBudget.sorted(budget.impaired()) + " max=" + budget.maxImpaired());
        }
        List<Integer> eligible = budget.eligible();
        int node = eligible.get(random.nextInt(eligible.size()));
        int percent = PERCENT_MIN + random.nextInt(PERCENT_MAX - PERCENT_MIN + 1);
        victim = node;
        cluster.loss(node, percent);
        return Start.started(percent + "% packet loss on node " + node);
    }

    @Override
    public String heal() {
        if (victim == 0) {
            return "";
        }
        int node = victim;
        cluster.healNetwork();
        victim = 0;
        return "loss on node " + node + " removed (network healed)";
    }

    @Override
    public Set<Integer> impaired() {
        return victim == 0 ? Set.of() : Set.of(victim);
    }
}
