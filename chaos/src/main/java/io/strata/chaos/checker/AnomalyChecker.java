package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import java.util.List;

/**
 * A pure function of a history to the anomalies of one kind it contains. Implementations are stateless
 * and thread-safe; memory is linear in the history.
 */
public interface AnomalyChecker {
    /** @return the anomalies found, in a deterministic order; empty if none */
    List<Anomaly> check(History history);
}
