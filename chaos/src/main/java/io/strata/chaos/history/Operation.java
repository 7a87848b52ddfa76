package io.strata.chaos.history;

import java.util.Objects;

/**
 * An invocation paired with its completion, as {@link History} pairs them.
 *
 * @param invokeIndex the invocation's index in the history (its 0-based line number)
 * @param invoke the invocation
 * @param completionIndex the completion's index, or {@code -1} if the history ends before it
 * @param completion the completion, or {@code null} if the history ends before it
 */
public record Operation(int invokeIndex, Op invoke, int completionIndex, Op completion) {
    public Operation {
        Objects.requireNonNull(invoke, "invoke");
        if ((completion == null) != (completionIndex < 0)) {
            throw new IllegalArgumentException("completion and completionIndex disagree: completionIndex=" + completionIndex);
        }
    }

    /** @return the outcome: the completion's type, or {@link Op.Type#INFO} for an operation never completed */
    public Op.Type outcome() {
        return completion == null ? Op.Type.INFO : completion.type();
    }

    /** @return the completion's value if there is one, else the invocation's */
    public OpValue value() {
        return completion == null ? invoke.value() : completion.value();
    }

    /** @return the process */
    public int process() {
        return invoke.process();
    }

    /** @return the function */
    public Op.Function function() {
        return invoke.function();
    }

    /** @return the index reported for this operation: its completion's, else its invocation's */
    public int index() {
        return completion == null ? invokeIndex : completionIndex;
    }
}
