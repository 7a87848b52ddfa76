package io.strata.metadata;

/**
 * The active controller's own elections (Kafka's keys and defaults).
 *
 * @param autoLeaderRebalanceEnable          {@code auto.leader.rebalance.enable}: elect preferred replicas periodically
 * @param leaderImbalanceCheckIntervalMs     {@code leader.imbalance.check.interval.seconds} in ms: how often
 * @param uncleanLeaderElectionCheckIntervalMs how often leaderless partitions of topics with {@code unclean.leader.election.enable}
 *                                           get an unclean election (Kafka's controller: 5 minutes, not configurable)
 */
public record ElectionSettings(boolean autoLeaderRebalanceEnable, long leaderImbalanceCheckIntervalMs, long uncleanLeaderElectionCheckIntervalMs) {
    /** Kafka's defaults: rebalance on, every 300 s; unclean elections looked for every 5 minutes. */
    public static final ElectionSettings DEFAULTS = new ElectionSettings(true, 300_000, 300_000);

    public ElectionSettings {
        if (leaderImbalanceCheckIntervalMs <= 0) {
            throw new IllegalArgumentException("leaderImbalanceCheckIntervalMs must be positive: leaderImbalanceCheckIntervalMs="
                + leaderImbalanceCheckIntervalMs);
        }
        if (uncleanLeaderElectionCheckIntervalMs <= 0) {
            throw new IllegalArgumentException("uncleanLeaderElectionCheckIntervalMs must be positive: uncleanLeaderElectionCheckIntervalMs="
                + uncleanLeaderElectionCheckIntervalMs);
        }
    }
}
