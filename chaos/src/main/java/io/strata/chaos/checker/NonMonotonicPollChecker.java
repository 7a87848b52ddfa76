package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Non-monotonic poll: within one run of a consumer (see {@link ReadRuns}: an uninterrupted assignment,
 * ended by assigns, rebalances and failed or unknown polls/txns), a partition's offset not greater than
 * the previous offset the run read from that partition. Both isolation levels count.
 *
 * <p>One anomaly per backward (or repeated) step; the run continues from the new offset.
 */
public final class NonMonotonicPollChecker implements AnomalyChecker {

    @Override
    public List<Anomaly> check(History history) {
        List<Anomaly> anomalies = new ArrayList<>();
        Map<Integer, Map<String, long[]>> lastByProcess = new HashMap<>();
        ReadRuns.forEach(history, new ReadRuns.Listener() {
            @Override
            public void onRead(int process, String partition, long offset, long value, int opIndex, boolean readCommitted) {
                Map<String, long[]> last = lastByProcess.computeIfAbsent(process, p -> new HashMap<>());
                long[] previous = last.get(partition);
                if (previous == null) {
                    last.put(partition, new long[] {offset, value, opIndex});
                    return;
                }
                if (offset <= previous[0]) {
                    anomalies.add(new Anomaly(Anomaly.Kind.NON_MONOTONIC_POLL, partition, List.of(previous[0], offset),
                            List.of(previous[1], value), List.of((int) previous[2], opIndex), "process " + process
                                    + " read offset " + offset + " after offset " + previous[0] + " in one run"));
                }
                previous[0] = offset;
                previous[1] = value;
                previous[2] = opIndex;
            }

            @Override
            public void onRunEnd(int process) {
                lastByProcess.remove(process);
            }

            @Override
            public void onHistoryEnd() {
                lastByProcess.clear();
            }
        });
        return anomalies;
    }
}
