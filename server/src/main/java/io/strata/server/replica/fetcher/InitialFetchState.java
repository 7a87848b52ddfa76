package io.strata.server.replica.fetcher;

import java.util.Objects;
import java.util.UUID;

/**
 * What the metadata image says about a partition this broker follows: fetch from {@code leaderId}
 * in {@code leaderEpoch}, into {@code log}, starting at the log's end offset.
 */
public record InitialFetchState(UUID topicId, int leaderId, int leaderEpoch, FollowerLog log) {
    public InitialFetchState {
        Objects.requireNonNull(topicId, "topicId");
        Objects.requireNonNull(log, "log");
        if (leaderId < 0 || leaderEpoch < 0) {
            throw new IllegalArgumentException("invalid initial fetch state of " + log.topicPartition() + ": leaderId=" + leaderId
                + ", leaderEpoch=" + leaderEpoch);
        }
    }
}
