package io.strata.chaos.checker;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Shared reporting of a cycle's transactions. Stateless. */
final class CycleReport {
    private CycleReport() {
    }

    /** @return the history indices of the component's transactions, ascending */
    static List<Integer> opsOf(TxnDependencyGraph graph, int[] component) {
        List<Integer> ops = new ArrayList<>();
        for (int node : component) {
            ops.add(graph.txn(node).index());
        }
        Collections.sort(ops);
        return ops;
    }
}
