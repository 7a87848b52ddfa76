package io.strata.server.api;

import io.strata.metadata.ControllerRefusedException;
import io.strata.metadata.NotControllerException;
import io.strata.protocol.ErrorCode;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The error code a client gets when a controller operation failed: NOT_CONTROLLER (retriable)
 * when no active controller took it, the refusal's own code for a {@link ControllerRefusedException}.
 */
final class ControllerErrors {
    private ControllerErrors() {
    }

    static ErrorCode of(Throwable failure) {
        Throwable cause = unwrap(failure);
        if (cause instanceof ControllerRefusedException refused) {
            return refused.error();
        }
        if (cause instanceof NotControllerException) {
            return ErrorCode.NOT_CONTROLLER;
        }
        if (cause instanceof TimeoutException) {
            return ErrorCode.REQUEST_TIMED_OUT;
        }
        return ErrorCode.UNKNOWN_SERVER_ERROR;
    }

    /** The message for the client: the failure's own, without the wrapping of a future. */
    static String message(Throwable failure) {
        return unwrap(failure).getMessage();
    }

    private static Throwable unwrap(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
