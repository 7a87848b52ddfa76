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
 * @param maxIdleIntervalMs       {@code metadata.max.idle.interval.ms}: how often the active controller appends a NoOpRecord; 0 never
 * @param disconnectFenceMs       {@code strata.broker.disconnect.fence.ms} (a Strata addition): a broker whose heartbeat
 *                                connection closed is fenced after this long without a new heartbeat; 0 only sessions expire
 */
public record ControllerSettings(int nodeId, int defaultPartitions, short defaultReplicationFactor, boolean deleteTopicEnable,
                                 Map<String, String> topicDefaults, String clusterId, long brokerSessionTimeoutMs, long maxIdleIntervalMs,
                                 long disconnectFenceMs) {
    /** Kafka's default session timeout (9 s). */
    public static final long DEFAULT_BROKER_SESSION_TIMEOUT_MS = 9_000;

    public ControllerSettings {
        if (maxIdleIntervalMs < 0) {
            throw new IllegalArgumentException("maxIdleIntervalMs must be 0 (no NoOp records) or positive: maxIdleIntervalMs=" + maxIdleIntervalMs);
        }
        if (disconnectFenceMs < 0) {
            throw new IllegalArgumentException("disconnectFenceMs must be 0 (off) or positive: disconnectFenceMs=" + disconnectFenceMs);
        }
    }

    /** Without the dead-broker fast path (Kafka's behaviour: only sessions expire). */
    public ControllerSettings(int nodeId, int defaultPartitions, short defaultReplicationFactor, boolean deleteTopicEnable,
                              Map<String, String> topicDefaults, String clusterId, long brokerSessionTimeoutMs, long maxIdleIntervalMs) {
        this(nodeId, defaultPartitions, defaultReplicationFactor, deleteTopicEnable, topicDefaults, clusterId, brokerSessionTimeoutMs, maxIdleIntervalMs, 0);
    }

    /** Without NoOp records. */
    public ControllerSettings(int nodeId, int defaultPartitions, short defaultReplicationFactor, boolean deleteTopicEnable,
                              Map<String, String> topicDefaults, String clusterId, long brokerSessionTimeoutMs) {
        this(nodeId, defaultPartitions, defaultReplicationFactor, deleteTopicEnable, topicDefaults, clusterId, brokerSessionTimeoutMs, 0);
    }

    public ControllerSettings(int nodeId, int defaultPartitions, short defaultReplicationFactor, boolean deleteTopicEnable,
                              Map<String, String> topicDefaults) {
        this(nodeId, defaultPartitions, defaultReplicationFactor, deleteTopicEnable, topicDefaults, null, DEFAULT_BROKER_SESSION_TIMEOUT_MS);
    }
}
