package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import java.util.ArrayList;
import java.util.List;

/**
 * G0 (write cycle): committed transactions whose ww and process-order edges ({@link TxnDependencyGraph}) form
 * a cycle: one producer's writes are ordered one way in one partition and the other way in another, or a
 * later transaction's writes lie below an earlier one's. Found with Tarjan's SCC; one
 * anomaly per strongly connected component.
 */
public final class WriteCycleChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        TxnDependencyGraph graph = new TxnDependencyGraph(history);
        List<Anomaly> anomalies = new ArrayList<>();
        for (int[] component : graph.cycles(false)) {
            List<Integer> ops = CycleReport.opsOf(graph, component);
            anomalies.add(new Anomaly(Anomaly.Kind.CYCLE_G0, null, List.of(), List.of(), ops,
                    "committed txns at indices " + ops + " order each other's writes against their order (ww/process-order cycle)"));
        }
        return anomalies;
    }
}
