package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs every checker of docs/chaos-plan.md ("Checker: anomalies") over one history, in the plan's order.
 * Stateless; thread-safe.
 */
public final class Checker implements AnomalyChecker {
    private final List<AnomalyChecker> checkers = List.of(
            new LostWriteChecker(),
            new DuplicateChecker(),
            new InconsistentOffsetChecker(),
            new FailedWriteReadChecker(),
            new NonMonotonicPollChecker(),
            new UnexpectedGapChecker(),
            new AbortedReadChecker(),
            new IntermediateReadChecker(),
            new WriteCycleChecker(),
            new ReadCycleChecker(),
            new SplitOwnershipChecker());

    /** @return every anomaly of every kind, grouped by checker in the plan's order */
    @Override
    public List<Anomaly> check(History history) {
        List<Anomaly> anomalies = new ArrayList<>();
        for (AnomalyChecker checker : checkers) {
            anomalies.addAll(checker.check(history));
        }
        return anomalies;
    }
}
