package io.strata.server.api;

import io.strata.metadata.NotControllerException;
import io.strata.protocol.ErrorCode;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/** The error code a client gets when a controller operation failed: NOT_CONTROLLER (retriable) when no active controller took it. */
final class ControllerErrors {
    private ControllerErrors() {
    }

    static ErrorCode of(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof NotControllerException) {
            return ErrorCode.NOT_CONTROLLER;
        }
        if (cause instanceof TimeoutException) {
            return ErrorCode.REQUEST_TIMED_OUT;
        }
        return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
}
