package io.strata.coordinator.group.consumer;

import io.strata.protocol.ErrorCode;

/**
 * A request the coordinator refuses, with the Kafka error code and message the client gets.
 * Thrown while handling a request (before any state changes) and turned into the response
 * at one place, {@link ConsumerGroupManager}'s entry points; never used for bugs.
 */
public final class ApiError extends RuntimeException {
    private final ErrorCode error;

    public ApiError(ErrorCode error, String message) {
        super(message, null, false, false);
        this.error = error;
    }

    public ErrorCode error() {
        return error;
    }
}
