package io.strata.server.api;

/** Names of the internal topics coordinators keep their state in. */
public final class InternalTopics {
    public static final String CONSUMER_OFFSETS = "__consumer_offsets";
    public static final String TRANSACTION_STATE = "__transaction_state";

    private InternalTopics() {
    }
}
