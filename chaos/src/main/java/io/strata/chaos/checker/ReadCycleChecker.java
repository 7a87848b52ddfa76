package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * G1c (circular information flow): committed transactions whose ww and wr edges ({@link
 * TxnDependencyGraph}) form a cycle containing at least one wr edge, e.g. two transactions each reading
 * the other's write. A cycle of ww edges only is {@link WriteCycleChecker}'s G0. Found with Tarjan's SCC;
 * one anomaly per strongly connected component.
 */
public final class ReadCycleChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        TxnDependencyGraph graph = new TxnDependencyGraph(history);
        List<int[]> components = graph.cycles(true);
        int[] componentOf = new int[graph.nodeCount()];
        Arrays.fill(componentOf, -1);
        for (int c = 0; c < components.size(); c++) {
            for (int node : components.get(c)) {
                componentOf[node] = c;
            }
        }
        boolean[] hasReadEdge = new boolean[components.size()];
        graph.wrEdges().forEach((from, to) -> {
            if (componentOf[from] >= 0 && componentOf[from] == componentOf[to]) {
                hasReadEdge[componentOf[from]] = true;
            }
        });
        List<Anomaly> anomalies = new ArrayList<>();
        for (int c = 0; c < components.size(); c++) {
            if (hasReadEdge[c]) {
                List<Integer> ops = CycleReport.opsOf(graph, components.get(c));
                anomalies.add(new Anomaly(Anomaly.Kind.CYCLE_G1C, null, List.of(), List.of(), ops,
                        "committed txns at indices " + ops + " depend on each other through reads (ww+wr cycle)"));
            }
        }
        return anomalies;
    }
}
