package io.strata.storage.cleaner;

/**
 * Stops a cleaning pass that must not finish: its partition was paused or deleted, the log
 * changed under it, or the cleaner is shutting down. Not a failure: the partition stays
 * cleanable and the pass's files are removed.
 */
public final class LogCleaningAbortedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LogCleaningAbortedException(String message) {
        super(message, null, false, false);
    }
}
