package io.strata.chaos.checker;

import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.History;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.PollValue;
import io.strata.chaos.history.SendValue;
import io.strata.chaos.history.TxnValue;
import java.util.List;

/**
 * Every place a history shows a record at an offset: acknowledged sends (of plain sends that completed ok,
 * and of any transaction completion that reports an offset: an aborted record still occupies its offset),
 * ok polls, polls inside transactions (whatever the transaction's outcome: the reads happened) and ok drains.
 * Visited in history order of the completion.
 *
 * <p>Stateless; thread-safe.
 */
final class Observations {

    /** Where an observation comes from. */
    enum Source {
        ACK,
        POLL,
        TXN_POLL,
        DRAIN
    }

    /** Receives one observation. */
    interface Visitor {
        void accept(String partition, long offset, long value, int opIndex, Source source, boolean readCommitted);
    }

    private Observations() {
    }

    static void forEach(History history, Visitor visitor) {
        List<Op> ops = history.ops();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (!op.isCompletion()) {
                continue;
            }
            boolean ok = op.type() == Op.Type.OK;
            switch (op.function()) {
                case SEND -> {
                    SendValue send = (SendValue) op.value();
                    if (ok && send.offset() >= 0) {
                        visitor.accept(send.partition(), send.offset(), send.value(), i, Source.ACK, false);
                    }
                }
                case POLL -> {
                    PollValue poll = (PollValue) op.value();
                    if (ok) {
                        messages(poll.messages(), i, Source.POLL, poll.readCommitted(), visitor);
                    }
                }
                case TXN -> {
                    TxnValue txn = (TxnValue) op.value();
                    for (MicroOp m : txn.ops()) {
                        if (m.kind() == MicroOp.Kind.POLL) {
                            visitor.accept(m.partition(), m.offset(), m.value(), i, Source.TXN_POLL, txn.readCommitted());
                        } else if (m.offset() >= 0) {
                            visitor.accept(m.partition(), m.offset(), m.value(), i, Source.ACK, false);
                        }
                    }
                }
                case DRAIN -> {
                    DrainValue drain = (DrainValue) op.value();
                    if (ok) {
                        messages(drain.messages(), i, Source.DRAIN, drain.readCommitted(), visitor);
                    }
                }
                case ASSIGN -> {
                    // an assignment shows no record
                }
            }
        }
    }

    private static void messages(List<Message> messages, int opIndex, Source source, boolean readCommitted,
            Visitor visitor) {
        for (Message m : messages) {
            visitor.accept(m.partition(), m.offset(), m.value(), opIndex, source, readCommitted);
        }
    }
}
