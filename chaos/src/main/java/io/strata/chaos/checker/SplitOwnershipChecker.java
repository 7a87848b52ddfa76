package io.strata.chaos.checker;

import io.strata.chaos.history.AssignValue;
import io.strata.chaos.history.History;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.Operation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Split ownership: two consumers (processes) of one group assigned one partition in the same generation.
 * Only ok assigns count (an info assign may never have been delivered). Assignments are few (one per
 * consumer per rebalance), so plain maps do.
 *
 * <p>One anomaly per (group, generation, partition), naming the first two owners.
 */
public final class SplitOwnershipChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        Map<String, int[]> firstOwner = new HashMap<>();
        Set<String> reported = new HashSet<>();
        List<Anomaly> anomalies = new ArrayList<>();
        for (Operation operation : history.operations()) {
            if (operation.function() != Op.Function.ASSIGN || operation.outcome() != Op.Type.OK) {
                continue;
            }
            AssignValue assign = (AssignValue) operation.value();
            for (String partition : assign.partitions()) {
                String key = assign.group() + '\u0000' + assign.generation() + '\u0000' + partition;
                int[] owner = firstOwner.putIfAbsent(key, new int[] {operation.process(), operation.index()});
                if (owner != null && owner[0] != operation.process() && reported.add(key)) {
                    anomalies.add(new Anomaly(Anomaly.Kind.SPLIT_OWNERSHIP, partition, List.of(), List.of(),
                            List.of(owner[1], operation.index()), "group " + assign.group() + " generation "
                                    + assign.generation() + " assigned it to processes " + owner[0] + " and "
                                    + operation.process()));
                }
            }
        }
        return anomalies;
    }
}
