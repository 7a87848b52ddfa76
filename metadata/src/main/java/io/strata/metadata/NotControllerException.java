package io.strata.metadata;

/**
 * The operation reached a controller that is not (or stopped being) the active one; the
 * caller answers NOT_CONTROLLER, or retries at the active controller. Its outcome may still be
 * unknown: a write accepted by a leader that then lost leadership can be committed by the next.
 */
public final class NotControllerException extends RuntimeException {
    public NotControllerException(String message) {
        super(message, null, false, false);
    }
}
