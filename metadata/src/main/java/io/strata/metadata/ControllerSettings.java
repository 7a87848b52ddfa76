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
 */
public record ControllerSettings(int nodeId, int defaultPartitions, short defaultReplicationFactor, boolean deleteTopicEnable,
                                 Map<String, String> topicDefaults) {
}
