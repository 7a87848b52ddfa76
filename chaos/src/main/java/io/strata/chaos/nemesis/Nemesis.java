package io.strata.chaos.nemesis;

import java.util.Random;
import java.util.Set;

/**
 * One kind of fault. An instance holds at most one fault at a time: {@link #start} begins one (or declines,
 * saying why), {@link #heal} ends it.
 *
 * <p>Contract:
 * <ul>
 *   <li>{@link #start} picks its victims among {@link FaultBudget#eligible()} and impairs at most
 *       {@link FaultBudget#room()} nodes, so that the schedule never has more nodes impaired than the budget's
 *       maximum; it remembers its victims <em>before</em> acting, so that a start that throws half-way is still
 *       healed by {@link #heal}.</li>
 *   <li>{@link #heal} restores what the fault changed, judging by the cluster's observed state, not by what
 *       start claims to have done; it is idempotent and never throws for a fault that is absent (a second heal,
 *       a heal without start, a heal after a start that threw).</li>
 *   <li>Nemeses of one {@link #exclusiveGroup()} are never active together (the nftables faults share one
 *       table, which a heal flushes whole).</li>
 * </ul>
 * Not thread-safe: the schedule drives each nemesis from one thread.
 */
public interface Nemesis {

    /** The kind, as given on the command line (e.g. {@code kill}, {@code partition-bridge}). */
    String name();

    /** Starts a fault; @return what it did, or a skip with the reason. */
    Start start(Random random, FaultBudget budget) throws Exception;

    /** Ends the fault, if any; @return what it did (empty when there was nothing to heal). Idempotent. */
    String heal() throws Exception;

    /** The nodes the active fault impairs (empty when healed). */
    Set<Integer> impaired();

    /** The group of nemeses that must not be active together, or {@code null} for none. */
    default String exclusiveGroup() {
        return null;
    }

    /**
     * The outcome of {@link #start}.
     *
     * @param started whether a fault now runs
     * @param description what was done, or why nothing was
     */
    record Start(boolean started, String description) {
        public static Start started(String description) {
            return new Start(true, description);
        }

        public static Start skipped(String reason) {
            return new Start(false, reason);
        }
    }
}
