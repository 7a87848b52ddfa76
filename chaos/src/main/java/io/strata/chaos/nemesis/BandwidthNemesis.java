package io.strata.chaos.nemesis;

import java.util.List;
import java.util.Random;
import java.util.Set;

/** A bandwidth cap ({@code tc tbf}) on one node, each way: a seeded rate among {@link #RATES_KBIT}. */
public final class BandwidthNemesis implements Nemesis {
    /** From a crawl that starves replication to a link that merely slows it. */
    static final int[] RATES_KBIT = {128, 512, 2048};

    private final ClusterControl cluster;
    private int victim;

    public BandwidthNemesis(ClusterControl cluster) {
        this.cluster = cluster;
    }

    @Override
    public String name() {
        return "bandwidth";
    }

    @Override
    public Start start(Random random, FaultBudget budget) {
        if (victim != 0) {
            throw new IllegalStateException("bandwidth already active: victim=" + victim);
        }
        if (budget.room() < 1) {
            return Start.skipped("no room: impaired=" + FaultBudget.sorted(budget.impaired()) + " max=" + budget.maxImpaired());
        }
        List<Integer> eligible = budget.eligible();
        int node = eligible.get(random.nextInt(eligible.size()));
        int rateKbit = RATES_KBIT[random.nextInt(RATES_KBIT.length)];
        victim = node;
        cluster.limitBandwidth(node, rateKbit);
        return Start.started("bandwidth of node " + node + " capped at " + rateKbit + " kbit/s");
    }

    @Override
    public String heal() {
        if (victim == 0) {
            return "";
        }
        int node = victim;
        cluster.clearBandwidth(node);
        victim = 0;
        return "bandwidth cap on node " + node + " removed";
    }

    @Override
    public Set<Integer> impaired() {
        return victim == 0 ? Set.of() : Set.of(victim);
    }
}
