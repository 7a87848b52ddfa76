package io.strata.storage;

/**
 * An index file failed its sanity check. Index files are not checksummed; the caller reacts by
 * rebuilding the index from the segment's log file.
 */
public class CorruptIndexException extends RuntimeException {
    public CorruptIndexException(String message) {
        super(message);
    }

    public CorruptIndexException(String message, Throwable cause) {
        super(message, cause);
    }
}
