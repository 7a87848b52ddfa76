package io.strata.raft;

/**
 * The quorum's timing, with Kafka's keys and defaults ({@code controller.quorum.*}).
 *
 * @param electionTimeoutMs    {@code controller.quorum.election.timeout.ms} (1000): how long an
 *                             unattached voter waits before it asks for (pre-)votes; each wait
 *                             is randomised in {@code [t, 2t)} so that voters rarely collide
 * @param electionBackoffMaxMs {@code controller.quorum.election.backoff.max.ms} (1000): the
 *                             longest pause before retrying a lost election
 * @param fetchTimeoutMs       {@code controller.quorum.fetch.timeout.ms} (2000): a follower
 *                             that has not fetched successfully for this long starts an
 *                             election; a leader not fetched from by a majority for 1.5 times
 *                             this long resigns (check-quorum)
 * @param requestTimeoutMs     {@code controller.quorum.request.timeout.ms} (2000)
 * @param retryBackoffMs       {@code controller.quorum.retry.backoff.ms} (20): the pause
 *                             before resending a failed or empty request
 * @param fetchMaxBytes        the most record bytes one Fetch response carries
 * @param fetchSnapshotMaxBytes the most snapshot bytes one FetchSnapshot response carries (a
 *                             chunk; Kafka uses the same 8 MiB as for Fetch)
 */
public record RaftConfig(int electionTimeoutMs, int electionBackoffMaxMs, int fetchTimeoutMs, int requestTimeoutMs,
                         int retryBackoffMs, int fetchMaxBytes, int fetchSnapshotMaxBytes) {
    public static final RaftConfig DEFAULTS = new RaftConfig(1000, 1000, 2000, 2000, 20, 8 * 1024 * 1024);

    /** Snapshot chunks as large as Fetch responses. */
    public RaftConfig(int electionTimeoutMs, int electionBackoffMaxMs, int fetchTimeoutMs, int requestTimeoutMs, int retryBackoffMs,
                      int fetchMaxBytes) {
        this(electionTimeoutMs, electionBackoffMaxMs, fetchTimeoutMs, requestTimeoutMs, retryBackoffMs, fetchMaxBytes, fetchMaxBytes);
    }

    /** The same timings with snapshot chunks of at most {@code maxBytes}. */
    public RaftConfig withFetchSnapshotMaxBytes(int maxBytes) {
        return new RaftConfig(electionTimeoutMs, electionBackoffMaxMs, fetchTimeoutMs, requestTimeoutMs, retryBackoffMs, fetchMaxBytes, maxBytes);
    }

    public RaftConfig {
        if (electionTimeoutMs <= 0 || electionBackoffMaxMs <= 0 || fetchTimeoutMs <= 0 || requestTimeoutMs <= 0
            || retryBackoffMs <= 0 || fetchMaxBytes <= 0 || fetchSnapshotMaxBytes <= 0) {
            throw new IllegalArgumentException("quorum timings and sizes must be positive: " + this);
        }
    }

    /** How long a leader may go without fetches from a majority before it resigns. */
    public long checkQuorumTimeoutMs() {
        return fetchTimeoutMs * 3L / 2;
    }
}
