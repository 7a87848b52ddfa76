package io.strata.chaos.nemesis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Runs nemeses in alternating periods, every choice drawn from one {@link Random} seeded with the run's seed:
 * <pre>
 *   repeat until the run's time is up:
 *     fault period:   start k = 1 + random(maxConcurrent) nemeses, drawn in a shuffled order (a nemesis that
 *                     declines — no room in the budget, no known leader — is logged SKIP and the next is
 *                     tried; two of one exclusive group are never active together); wait a seeded
 *                     faultMs in [faultMsMin, faultMsMax]; heal them in reverse order
 *     healthy period: wait a seeded healMs in [healMsMin, healMsMax]
 * </pre>
 * Each start is offered a {@link FaultBudget} with the nodes active faults impair and {@code maxImpaired}, so
 * no more nodes are impaired at once than that (by default what the quorum tolerates). With a fake cluster
 * and clock the schedule, and so its log, is a function of the seed; against a real cluster the leader
 * lookups make the victims depend on the cluster too.
 *
 * <p>A start or heal that throws is logged ERROR (with the exception) and the nemesis is healed; the schedule
 * goes on. {@link #healAll} ends every fault and restores every node (the end of a run).
 *
 * <p>Not thread-safe: one thread calls {@link #run} and then {@link #healAll}.
 */
public final class NemesisSchedule {

    /**
     * The schedule's limits.
     *
     * @param faultMsMin shortest fault period
     * @param faultMsMax longest fault period
     * @param healMsMin shortest healthy period
     * @param healMsMax longest healthy period
     * @param maxConcurrent most faults active at once
     * @param maxImpaired most nodes impaired at once
     */
    public record Config(long faultMsMin, long faultMsMax, long healMsMin, long healMsMax, int maxConcurrent, int maxImpaired) {
        public Config {
            if (faultMsMin < 0 || faultMsMax < faultMsMin || healMsMin < 0 || healMsMax < healMsMin) {
                throw new IllegalArgumentException("periods must satisfy 0 <= min <= max: fault=" + faultMsMin + ".." + faultMsMax
                    + " heal=" + healMsMin + ".." + healMsMax);
            }
            if (maxConcurrent < 1 || maxImpaired < 0) {
                throw new IllegalArgumentException("maxConcurrent must be >= 1 and maxImpaired >= 0: maxConcurrent=" + maxConcurrent
                    + " maxImpaired=" + maxImpaired);
            }
        }

        /** 5–15 s faults, 5–10 s healthy, two faults at once, as many nodes impaired as the quorum of {@code nodes} tolerates. */
        public static Config defaults(int nodes) {
            return new Config(5_000, 15_000, 5_000, 10_000, 2, FaultBudget.quorumTolerance(nodes));
        }
    }

    private final List<Nemesis> nemeses;
    private final Config config;
    private final ClusterControl cluster;
    private final NemesisLog log;
    private final ScheduleClock clock;
    private final Random random;
    private final List<Nemesis> active = new ArrayList<>();
    /** Nodes found not running while no fault held them. */
    private final Set<Integer> unexpectedlyDown = new HashSet<>();
    private long startNanos;

    public NemesisSchedule(List<Nemesis> nemeses, Config config, long seed, ClusterControl cluster, NemesisLog log, ScheduleClock clock) {
        if (nemeses.isEmpty()) {
            throw new IllegalArgumentException("no nemeses");
        }
        this.nemeses = List.copyOf(nemeses);
        this.config = config;
        this.cluster = cluster;
        this.log = log;
        this.clock = clock;
        this.random = new Random(seed);
        this.startNanos = clock.nanoTime();
    }

    /** Runs fault and healthy periods for {@code duration}; every fault it started is healed when it returns. */
    public void run(Duration duration) throws InterruptedException {
        startNanos = clock.nanoTime();
        long endNanos = startNanos + duration.toNanos();
        try {
            while (endNanos - clock.nanoTime() > 0) {
                startFaults();
                sleepUntilOr(endNanos, between(config.faultMsMin(), config.faultMsMax()));
                healActive();
                sleepUntilOr(endNanos, between(config.healMsMin(), config.healMsMax()));
            }
        } finally {
            healActive();
        }
    }

    /** The nemeses active now (for tests). */
    List<Nemesis> active() {
        return List.copyOf(active);
    }

    /**
     * Heals every nemesis (active or not: heals are idempotent) and then restores every node as observed: network
     * rules flushed, bandwidth caps removed, paused nodes resumed, stopped nodes started. Logs each step; an error
     * is logged and the rest still runs. @return whether every step succeeded
     */
    public boolean healAll() {
        boolean ok = true;
        for (Nemesis nemesis : nemeses) {
            ok &= heal(nemesis);
        }
        active.clear();
        unexpectedlyDown.clear();
        ok &= restore("network", () -> cluster.healNetwork());
        for (int node = 1; node <= cluster.nodes(); node++) {
            int n = node;
            ok &= restore("bandwidth of node " + n, () -> cluster.clearBandwidth(n));
            ClusterControl.NodeState state;
            try {
                state = cluster.state(n);
            } catch (RuntimeException e) {
                log.add(event("cluster", NemesisEvent.Type.ERROR, "state of node " + n + ": " + e));
                ok = false;
                continue;
            }
            if (state == ClusterControl.NodeState.PAUSED) {
                ok &= restore("SIGCONT node " + n, () -> cluster.resume(n));
                log.add(event("cluster", NemesisEvent.Type.HEAL, "node " + n + " was paused: SIGCONT"));
            } else if (state == ClusterControl.NodeState.STOPPED) {
                ok &= restore("start node " + n, () -> cluster.start(n));
                log.add(event("cluster", NemesisEvent.Type.HEAL, "node " + n + " was stopped: started"));
            }
        }
        return ok;
    }

    private void startFaults() {
        noticeUnexpectedlyDown();
        int wanted = 1 + random.nextInt(config.maxConcurrent());
        List<Nemesis> order = new ArrayList<>(nemeses);
        Collections.shuffle(order, random);
        int started = 0;
        for (Nemesis nemesis : order) {
            if (started == wanted || active.size() >= config.maxConcurrent()) {
                break;
            }
            if (active.contains(nemesis) || groupBusy(nemesis)) {
                continue;
            }
            try {
                Nemesis.Start start = nemesis.start(random, budget());
                if (start.started()) {
                    active.add(nemesis);
                    started++;
                    log.add(event(nemesis.name(), NemesisEvent.Type.START, start.description()
                        + " impairing " + FaultBudget.sorted(nemesis.impaired())));
                } else {
                    log.add(event(nemesis.name(), NemesisEvent.Type.SKIP, start.description()));
                }
            } catch (Exception e) {
                log.add(event(nemesis.name(), NemesisEvent.Type.ERROR, "start threw " + e + "; healing"));
                heal(nemesis);
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private FaultBudget budget() {
        Set<Integer> impaired = new HashSet<>();
        for (Nemesis nemesis : active) {
            impaired.addAll(nemesis.impaired());
        }
        impaired.addAll(unexpectedlyDown);
        return new FaultBudget(cluster.nodes(), impaired, config.maxImpaired());
    }

    /**
     * Before a fault period: a node not running while no fault holds it exited by itself (a crash of the server,
     * worth an ERROR line); it counts against the budget until it runs again (at the latest after {@link #healAll}).
     */
    private void noticeUnexpectedlyDown() {
        Set<Integer> held = new HashSet<>();
        for (Nemesis nemesis : active) {
            held.addAll(nemesis.impaired());
        }
        for (int node = 1; node <= cluster.nodes(); node++) {
            boolean down = !held.contains(node) && cluster.state(node) != ClusterControl.NodeState.RUNNING;
            if (down && unexpectedlyDown.add(node)) {
                log.add(event("cluster", NemesisEvent.Type.ERROR, "node " + node + " is " + cluster.state(node)
                    + " though no fault holds it (exited by itself?)"));
            } else if (!down) {
                unexpectedlyDown.remove(node);
            }
        }
    }

    private boolean groupBusy(Nemesis candidate) {
        String group = candidate.exclusiveGroup();
        if (group == null) {
            return false;
        }
        for (Nemesis nemesis : active) {
            if (group.equals(nemesis.exclusiveGroup())) {
                return true;
            }
        }
        return false;
    }

    private void healActive() {
        for (int i = active.size() - 1; i >= 0; i--) {
            heal(active.get(i));
        }
        active.clear();
    }

    /** Heals one nemesis, logging what it did or what it threw; @return whether it did not throw. */
    private boolean heal(Nemesis nemesis) {
        try {
            String healed = nemesis.heal();
            if (!healed.isEmpty()) {
                log.add(event(nemesis.name(), NemesisEvent.Type.HEAL, healed));
            }
            return true;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.add(event(nemesis.name(), NemesisEvent.Type.ERROR, "heal threw " + e));
            return false;
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private boolean restore(String what, Step step) {
        try {
            step.run();
            return true;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.add(event("cluster", NemesisEvent.Type.ERROR, what + " threw " + e));
            return false;
        }
    }

    private void sleepUntilOr(long endNanos, long periodMs) throws InterruptedException {
        long nanos = Math.min(periodMs * 1_000_000L, endNanos - clock.nanoTime());
        clock.sleepNanos(Math.max(0, nanos));
    }

    private long between(long minMs, long maxMs) {
        return minMs + (long) (random.nextDouble() * (maxMs - minMs + 1));
    }

    private NemesisEvent event(String nemesis, NemesisEvent.Type type, String description) {
        return new NemesisEvent((clock.nanoTime() - startNanos) / 1_000_000, clock.wallMs(), nemesis, type, description);
    }
}
