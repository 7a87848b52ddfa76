package io.strata.metadata;

import java.util.Map;

/**
 * What the controller needs from the broker configuration.
 *
 * @param nodeId                  this node's id
 * @param defaultPartitions       {@code num.partitions}
 * @param defaultReplicationFactor {@code default.replication.factor}
 * @param deleteTopicEnable       {@code delete.topic.enable}
 * @param topicDefaults           topic-key defaults derived from the broker's log settings
 * @param clusterId               the cluster's id (a registration naming another is refused), or null not to check
 * @param brokerSessionTimeoutMs  {@code broker.session.timeout.ms}: a broker without a heartbeat this long is fenced
 */
public record ControllerSettings(int nodeId, int defaultPartitions, short defaultReplicationFactor, boolean deleteTopicEnable,
                                 Map<String, String> topicDefaults, String clusterId, long brokerSessionTimeoutMs) {
    /** Kafka's default session timeout (9 s). */
    public static final long DEFAULT_BROKER_SESSION_TIMEOUT_MS = 9_000;

    public ControllerSettings(int nodeId, int defaultPartitions, short defaultReplicationFactor, boolean deleteTopicEnable,
                              Map<String, String> topicDefaults) {
        this(nodeId, defaultPartitions, defaultReplicationFactor, deleteTopicEnable, topicDefaults, null, DEFAULT_BROKER_SESSION_TIMEOUT_MS);
    }
}
