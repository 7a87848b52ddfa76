package io.strata.raft;

/** A deadline on the quorum's clock. Not thread-safe. */
final class Timer {
    private long deadlineMs;

    Timer(long deadlineMs) {
        this.deadlineMs = deadlineMs;
    }

    static Timer never() {
        return new Timer(Long.MAX_VALUE);
    }

    boolean isExpired(long nowMs) {
        return nowMs >= deadlineMs;
    }

    long deadlineMs() {
        return deadlineMs;
    }

    void reset(long deadlineMs) {
        this.deadlineMs = deadlineMs;
    }
}
