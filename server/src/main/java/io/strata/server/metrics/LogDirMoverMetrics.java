package io.strata.server.metrics;

import io.strata.server.replica.LogDirMover;
import io.strata.server.replica.ReplicaManager;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The mover of replicas between log dirs (AlterReplicaLogDirs), read at scrape time:
 * <pre>
 *   kafka_server_replicaalterlogdirsmanager_maxlag   ReplicaAlterLogDirsManager MaxLag (clientId=ReplicaAlterLogDirs)
 *   strata_log_dir_moves                             moves running (future logs being filled)
 *   strata_log_dir_move_copied_bytes_total           bytes copied into future logs
 *   strata_log_dir_moves_completed_total             moves swapped in
 *   strata_log_dir_moves_aborted_total               moves stopped before the swap
 *   strata_log_dir_move_failures_total               copies or swaps that failed (logged, retried)
 * </pre>
 * Left out until the replica manager has its mover.
 *
 * <p>Thread-safety: the mover's counters are thread-safe; a scrape may run on any thread.
 */
public final class LogDirMoverMetrics implements MetricsCollector {
    private final Supplier<ReplicaManager> replicaManager;

    public LogDirMoverMetrics(Supplier<ReplicaManager> replicaManager) {
        this.replicaManager = Objects.requireNonNull(replicaManager, "replicaManager");
    }

    @Override
    public void collect(List<MetricFamily> out) {
        ReplicaManager manager = replicaManager.get();
        LogDirMover mover = manager == null ? null : manager.logDirMover();
        if (mover == null) {
            return;
        }
        out.add(MetricFamily.gauge("kafka_server_replicaalterlogdirsmanager_maxlag",
            "Largest offset lag of a future log behind its partition's current log end (moves between log dirs).", "client_id")
            .add(mover.maxLag(), "ReplicaAlterLogDirs"));
        out.add(MetricFamily.gauge("strata_log_dir_moves", "Partitions moving between log dirs now (AlterReplicaLogDirs).").add(mover.moving()));
        out.add(MetricFamily.counter("strata_log_dir_move_copied_bytes_total", "Bytes copied into future logs.").add(mover.bytesCopied()));
        out.add(MetricFamily.counter("strata_log_dir_moves_completed_total", "Moves between log dirs swapped in.").add(mover.completed()));
        out.add(MetricFamily.counter("strata_log_dir_moves_aborted_total", "Moves between log dirs stopped before the swap.")
            .add(mover.aborted()));
        out.add(MetricFamily.counter("strata_log_dir_move_failures_total", "Copies or swaps of a move between log dirs that failed"
            + " (each logged and retried).").add(mover.failures()));
    }
}
