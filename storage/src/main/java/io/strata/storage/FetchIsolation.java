package io.strata.storage;

/** How far a read may go: the log end (replicas), the high watermark (consumers), or the last stable offset (read_committed). */
public enum FetchIsolation {
    LOG_END, HIGH_WATERMARK, TXN_COMMITTED
}
