package io.strata.chaos.workload;

import io.strata.chaos.history.Op;
import io.strata.chaos.history.OpValue;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An invoked operation awaiting its completion, which is recorded exactly once: by the workload thread that ran
 * it, or as info by {@code stop()} when that thread is stuck past the stop timeout (whichever comes first).
 * Thread-safe.
 */
final class PendingOp {
    private final Recorder recorder;
    private final int process;
    private final Op.Function function;
    private final OpValue invokeValue;
    private final AtomicBoolean completed = new AtomicBoolean();

    private PendingOp(Recorder recorder, int process, Op.Function function, OpValue invokeValue) {
        this.recorder = recorder;
        this.process = process;
        this.function = function;
        this.invokeValue = invokeValue;
    }

    /** Records the invoke and returns the pending op. */
    static PendingOp invoke(Recorder recorder, int process, Op.Function function, OpValue value) {
        recorder.invoke(process, function, value);
        return new PendingOp(recorder, process, function, value);
    }

    /** Records the completion unless one was recorded already; returns whether this call recorded it. */
    boolean complete(Op.Type type, OpValue value) {
        if (type == Op.Type.INVOKE) {
            throw new IllegalArgumentException("a completion cannot be an invoke: process=" + process);
        }
        if (!completed.compareAndSet(false, true)) {
            return false;
        }
        switch (type) {
            case OK -> recorder.ok(process, function, value);
            case FAIL -> recorder.fail(process, function, value);
            default -> recorder.info(process, function, value);
        }
        return true;
    }

    /** Records info with the invoke's value (the op's thread is stuck), unless completed already. */
    boolean abandon() {
        return complete(Op.Type.INFO, invokeValue);
    }

    boolean isCompleted() {
        return completed.get();
    }
}
