package io.strata.server.replica;

/**
 * Stops the process at once, without shutdown hooks or a clean shutdown (Kafka's
 * {@code Exit.halt}): what a broker does when it cannot go on safely, e.g. when the log directory
 * of the metadata log, or the last online log directory, failed. A clean shutdown would write to
 * the failed disk (checkpoints, clean-shutdown markers) and claim a clean state it does not have.
 * Injected so that tests observe the halt instead of dying.
 */
@FunctionalInterface
public interface Halter {
    /** Kafka's exit status of a broker halted by a log directory failure. */
    int LOG_DIR_FAILURE_STATUS = 1;

    /** Halts the process with {@code status} (non-zero); {@code reason} was logged at ERROR before. */
    void halt(int status, String reason);

    /** The real one: {@link Runtime#halt}. */
    Halter RUNTIME = (status, reason) -> Runtime.getRuntime().halt(status);
}
