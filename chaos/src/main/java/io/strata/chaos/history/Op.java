package io.strata.chaos.history;

import java.util.Objects;

/**
 * One event of a recorded history: a process invoking an operation, or that operation completing.
 *
 * <p>An operation is an {@link Type#INVOKE} followed, by the same process, by exactly one completion
 * ({@link Type#OK}, {@link Type#FAIL} or {@link Type#INFO}); a process has at most one operation in
 * flight (see {@link History} for the pairing). The completion repeats the invocation's value, filled in
 * with what the operation returned.
 *
 * <p>Value shape per {@link Function} (the class is checked on construction):
 * <ul>
 *   <li>{@code SEND} → {@link SendValue}{@code (partition, value, offset)}: offset is {@code -1} on the
 *       invoke, a fail and an info; an ok carries the acknowledged offset.</li>
 *   <li>{@code POLL} → {@link PollValue}{@code (readCommitted, messages)}: empty on the invoke; an ok
 *       carries the messages returned, in the order the consumer returned them.</li>
 *   <li>{@code TXN} → {@link TxnValue}{@code (readCommitted, ops)}: micro-ops, sends (offset {@code -1}
 *       until known) and polls (one per message read). Ok = committed, fail = aborted, info = unknown.</li>
 *   <li>{@code ASSIGN} → {@link AssignValue}{@code (group, generation, partitions)}: the assignment a
 *       consumer (the process) received for one generation of its group; only an ok counts.</li>
 *   <li>{@code DRAIN} → {@link DrainValue}{@code (readCommitted, messages, endOffsets)}: the final read of
 *       every partition from offset 0 to the end offset the draining consumer saw.</li>
 * </ul>
 *
 * <p>Meaning of outcomes follows Jepsen: fail = definitely did not happen, info = may or may not have
 * happened (a timeout, a crash). Checkers never count an info as a failure.
 *
 * <p>Immutable and thread-safe.
 *
 * @param process the id of the logical process (one client: producer, consumer, transactional producer)
 * @param type invoke or a completion
 * @param function what the operation does
 * @param value the operation's value, of the class {@link Function#valueClass()}
 * @param wallMs wall-clock time of the event, in milliseconds since the epoch (for humans)
 * @param monotonicNs monotonic time of the event in nanoseconds (for ordering and latencies)
 */
public record Op(int process, Type type, Function function, OpValue value, long wallMs, long monotonicNs) {

    /** Whether an event starts an operation or ends it, and how. */
    public enum Type {
        /** The operation starts. */
        INVOKE,
        /** It happened, with the value returned. */
        OK,
        /** It definitely did not happen. */
        FAIL,
        /** Unknown: it may or may not have happened. */
        INFO;

        /** @return the lower-case name used in the JSON history */
        public String jsonName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The operations a workload performs, each with the class of its value. */
    public enum Function {
        SEND(SendValue.class),
        POLL(PollValue.class),
        TXN(TxnValue.class),
        ASSIGN(AssignValue.class),
        DRAIN(DrainValue.class);

        private final Class<? extends OpValue> valueClass;

        Function(Class<? extends OpValue> valueClass) {
            this.valueClass = valueClass;
        }

        /** @return the class every value of this function has */
        public Class<? extends OpValue> valueClass() {
            return valueClass;
        }

        /** @return the lower-case name used in the JSON history */
        public String jsonName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public Op {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(function, "function");
        Objects.requireNonNull(value, "value");
        if (process < 0) {
            throw new IllegalArgumentException("process must be >= 0: process=" + process);
        }
        if (!function.valueClass().isInstance(value)) {
            throw new IllegalArgumentException("function " + function + " needs a " + function.valueClass().getSimpleName()
                    + ": value=" + value);
        }
    }

    /** @return whether this event is a completion (ok, fail or info) */
    public boolean isCompletion() {
        return type != Type.INVOKE;
    }
}
