package io.strata.chaos.workload;

import io.strata.chaos.history.HistoryWriter;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.OpValue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * Records operations into the run's history and hands out what must be unique in a run: process ids (a fresh
 * one after every {@code info}, since a process has one operation in flight) and record values (never sent
 * twice, even after a failure). Thread-safe.
 *
 * <p>A history that cannot be written makes the run worthless: the {@link IOException} is rethrown unchecked.
 */
public final class Recorder {
    private final HistoryWriter writer;
    private final LongSupplier wallMs;
    private final LongSupplier monotonicNs;
    private final AtomicInteger nextProcess = new AtomicInteger();
    private final AtomicLong nextValue = new AtomicLong();
    private final AtomicLongArray counts = new AtomicLongArray(Op.Type.values().length);

    public Recorder(HistoryWriter writer, LongSupplier wallMs, LongSupplier monotonicNs) {
        this.writer = writer;
        this.wallMs = wallMs;
        this.monotonicNs = monotonicNs;
    }

    /** A recorder on the system clocks. */
    public static Recorder of(HistoryWriter writer) {
        return new Recorder(writer, System::currentTimeMillis, System::nanoTime);
    }

    /** A process id never handed out before in this run. */
    public int newProcess() {
        return nextProcess.getAndIncrement();
    }

    /** A record value never handed out before in this run. */
    public long nextValue() {
        return nextValue.getAndIncrement();
    }

    public void invoke(int process, Op.Function function, OpValue value) {
        record(process, Op.Type.INVOKE, function, value);
    }

    public void ok(int process, Op.Function function, OpValue value) {
        record(process, Op.Type.OK, function, value);
    }

    public void fail(int process, Op.Function function, OpValue value) {
        record(process, Op.Type.FAIL, function, value);
    }

    public void info(int process, Op.Function function, OpValue value) {
        record(process, Op.Type.INFO, function, value);
    }

    /** How many ops of this type were recorded. */
    public long count(Op.Type type) {
        return counts.get(type.ordinal());
    }

    private void record(int process, Op.Type type, Op.Function function, OpValue value) {
        try {
            writer.write(new Op(process, type, function, value, wallMs.getAsLong(), monotonicNs.getAsLong()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the history: process=" + process + " type=" + type
                    + " function=" + function, e);
        }
        counts.incrementAndGet(type.ordinal());
    }
}
