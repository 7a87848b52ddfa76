package io.strata.chaos.history;

/** The value of an {@link Op}; one record per {@link Op.Function}. Implementations are immutable. */
public sealed interface OpValue permits SendValue, PollValue, TxnValue, AssignValue, DrainValue {
}
