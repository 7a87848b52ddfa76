package io.strata.chaos.checker;

import io.strata.chaos.history.AssignValue;
import io.strata.chaos.history.DrainValue;
import io.strata.chaos.history.History;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.OpValue;
import io.strata.chaos.history.PollValue;
import io.strata.chaos.history.SendValue;
import io.strata.chaos.history.TxnValue;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Builds histories for tests: each method appends an invoke and its completion; returns the completion's index. */
final class HistoryBuilder {
    static final int DRAINER = 99;

    private final List<Op> ops = new ArrayList<>();
    private long clock;

    static Message m(String partition, long offset, long value) {
        return new Message(partition, offset, value);
    }

    int invoke(int process, Op.Function function, OpValue value) {
        return add(process, Op.Type.INVOKE, function, value);
    }

    int complete(int process, Op.Type type, Op.Function function, OpValue value) {
        return add(process, type, function, value);
    }

    int send(int process, String partition, long value, Op.Type outcome, long offset) {
        invoke(process, Op.Function.SEND, new SendValue(partition, value, -1));
        return complete(process, outcome, Op.Function.SEND, new SendValue(partition, value, outcome == Op.Type.OK ? offset : -1));
    }

    int ack(int process, String partition, long value, long offset) {
        return send(process, partition, value, Op.Type.OK, offset);
    }

    int poll(int process, boolean readCommitted, Message... messages) {
        invoke(process, Op.Function.POLL, new PollValue(readCommitted, List.of()));
        return complete(process, Op.Type.OK, Op.Function.POLL, new PollValue(readCommitted, Arrays.asList(messages)));
    }

    int failedPoll(int process, Op.Type outcome) {
        invoke(process, Op.Function.POLL, new PollValue(true, List.of()));
        return complete(process, outcome, Op.Function.POLL, new PollValue(true, List.of()));
    }

    int txn(int process, Op.Type outcome, MicroOp... microOps) {
        List<MicroOp> sends = new ArrayList<>();
        for (MicroOp m : microOps) {
            if (m.kind() == MicroOp.Kind.SEND) {
                sends.add(MicroOp.send(m.partition(), -1, m.value()));
            }
        }
        invoke(process, Op.Function.TXN, new TxnValue(true, sends));
        return complete(process, outcome, Op.Function.TXN, new TxnValue(true, Arrays.asList(microOps)));
    }

    int assign(int process, String group, int generation, String... partitions) {
        AssignValue value = new AssignValue(group, generation, Arrays.asList(partitions));
        invoke(process, Op.Function.ASSIGN, value);
        return complete(process, Op.Type.OK, Op.Function.ASSIGN, value);
    }

    int drain(boolean readCommitted, Map<String, Long> endOffsets, Message... messages) {
        invoke(DRAINER, Op.Function.DRAIN, new DrainValue(readCommitted, List.of(), Map.of()));
        return complete(DRAINER, Op.Type.OK, Op.Function.DRAIN, new DrainValue(readCommitted, Arrays.asList(messages), endOffsets));
    }

    History build() {
        return History.of(ops);
    }

    List<Op> ops() {
        return ops;
    }

    private int add(int process, Op.Type type, Op.Function function, OpValue value) {
        clock++;
        ops.add(new Op(process, type, function, value, 1_764_640_000_000L + clock, clock * 1_000));
        return ops.size() - 1;
    }
}
