package io.strata.chaos.history;

/** A line of a history file that is not a valid op (bad input, not a bug); names the 1-based line. */
public final class HistoryFormatException extends RuntimeException {
    private final long lineNumber;

    public HistoryFormatException(long lineNumber, String message, Throwable cause) {
        super("line " + lineNumber + ": " + message, cause);
        this.lineNumber = lineNumber;
    }

    /** @return the 1-based line number of the malformed line */
    public long lineNumber() {
        return lineNumber;
    }
}
