package io.strata.chaos.checker;

import io.strata.chaos.history.History;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.PollValue;
import io.strata.chaos.history.TxnValue;
import java.util.List;

/**
 * Splits each consumer's reads into runs: uninterrupted sequences of reads by one process, in history
 * order, during which its position only moves forward. A run of a process ends when:
 * <ul>
 *   <li>it invokes or completes an {@code assign} (a rebalance, or a manual assign/seek);</li>
 *   <li>one of its polls completes with fail or info (the client may have reset its position);</li>
 *   <li>one of its transactions completes with fail or info (a read-process-write workload rewinds to
 *       the committed offsets after an abort);</li>
 *   <li>the history ends.</li>
 * </ul>
 * Reads are the messages of ok polls and the poll micro-ops of ok transactions. Drains are not runs of
 * any process (checkers treat each drained partition separately).
 *
 * <p>Stateless; thread-safe.
 */
final class ReadRuns {

    /** Receives reads and run ends. */
    interface Listener {
        void onRead(int process, String partition, long offset, long value, int opIndex, boolean readCommitted);

        /** The current run of {@code process} (on every partition) ended. */
        void onRunEnd(int process);

        /** The history ended; every open run ends. */
        void onHistoryEnd();
    }

    private ReadRuns() {
    }

    static void forEach(History history, Listener listener) {
        List<Op> ops = history.ops();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            switch (op.function()) {
                case ASSIGN -> listener.onRunEnd(op.process());
                case POLL -> {
                    if (op.type() == Op.Type.OK) {
                        PollValue poll = (PollValue) op.value();
                        for (Message m : poll.messages()) {
                            listener.onRead(op.process(), m.partition(), m.offset(), m.value(), i, poll.readCommitted());
                        }
                    } else if (op.isCompletion()) {
                        listener.onRunEnd(op.process());
                    }
                }
                case TXN -> {
                    if (op.type() == Op.Type.OK) {
                        TxnValue txn = (TxnValue) op.value();
                        for (MicroOp m : txn.ops()) {
                            if (m.kind() == MicroOp.Kind.POLL) {
                                listener.onRead(op.process(), m.partition(), m.offset(), m.value(), i, txn.readCommitted());
                            }
                        }
                    } else if (op.isCompletion()) {
                        listener.onRunEnd(op.process());
                    }
                }
                case SEND, DRAIN -> {
                    // not reads of a consumer's run
                }
            }
        }
        listener.onHistoryEnd();
    }
}
