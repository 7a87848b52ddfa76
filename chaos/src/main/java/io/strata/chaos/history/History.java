package io.strata.chaos.history;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A whole history, its events in the order recorded, with each invocation paired to its completion.
 *
 * <p>Pairing: per process, an invoke must be followed by one completion of the same function before the
 * process invokes again; a completion without an invoke in flight, a second invoke while one is in flight,
 * or a completion of another function is an {@link IllegalArgumentException} naming the event index. An
 * invoke still in flight at the end is an operation with an unknown outcome (as if completed with info).
 *
 * <p>An event's index is its 0-based position; for a history read from a file, line = index + 1.
 *
 * <p>Immutable after construction; thread-safe.
 */
public final class History {
    private final List<Op> ops;
    private final List<Operation> operations;

    private History(List<Op> ops) {
        this.ops = Collections.unmodifiableList(new ArrayList<>(ops));
        this.operations = Collections.unmodifiableList(pair(this.ops));
    }

    /** @return a history of these events, paired */
    public static History of(List<Op> ops) {
        return new History(ops);
    }

    /** @return the history in a file written by {@link HistoryWriter}; see {@link HistoryReader} */
    public static History read(Path file) throws IOException {
        try (HistoryReader reader = HistoryReader.open(file)) {
            List<Op> ops = new ArrayList<>();
            reader.forEach(ops::add);
            return new History(ops);
        }
    }

    /** @return every event, in history order */
    public List<Op> ops() {
        return ops;
    }

    /** @return every operation, in the order of invocation */
    public List<Operation> operations() {
        return operations;
    }

    private static List<Operation> pair(List<Op> ops) {
        List<Operation> result = new ArrayList<>();
        Map<Integer, Integer> inFlightInvokeIndex = new HashMap<>();
        Map<Integer, Integer> slotOfInvoke = new HashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            Integer pending = inFlightInvokeIndex.get(op.process());
            if (op.type() == Op.Type.INVOKE) {
                if (pending != null) {
                    throw new IllegalArgumentException("process " + op.process() + " invokes at index " + i
                            + " while its invoke at index " + pending + " is in flight");
                }
                inFlightInvokeIndex.put(op.process(), i);
                slotOfInvoke.put(i, result.size());
                result.add(new Operation(i, op, -1, null));
                continue;
            }
            if (pending == null) {
                throw new IllegalArgumentException("completion at index " + i + " of process " + op.process()
                        + " without an invoke in flight");
            }
            Op invoke = ops.get(pending);
            if (invoke.function() != op.function()) {
                throw new IllegalArgumentException("completion at index " + i + " is a " + op.function()
                        + " but the invoke at index " + pending + " is a " + invoke.function());
            }
            inFlightInvokeIndex.remove(op.process());
            result.set(slotOfInvoke.remove(pending), new Operation(pending, invoke, i, op));
        }
        return result;
    }
}
