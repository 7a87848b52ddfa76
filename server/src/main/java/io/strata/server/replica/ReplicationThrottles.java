package io.strata.server.replica;

import io.strata.metadata.ConfigResource;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.MetadataPublisher;
import io.strata.storage.LogConfig;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Keeps this broker's two {@link ReplicationQuotaManager}s' throttled partitions in step with the
 * topic configs {@code leader.replication.throttled.replicas} and
 * {@code follower.replication.throttled.replicas} of every topic in the metadata image (Kafka's
 * {@code TopicConfigHandler} for these keys): on each image, every topic whose configs changed
 * (all of them on the first image) is re-applied, and a deleted topic loses its throttle.
 *
 * <p>The values were validated when written ({@code ThrottledReplicaListValidator}); an entry that
 * still does not parse throws, and the metadata publisher reports it as any publisher failure.
 *
 * <p>Thread-safety: runs on the metadata publishing thread; the quota managers are thread-safe.
 */
public final class ReplicationThrottles implements MetadataPublisher {
    private final int brokerId;
    private final ReplicationQuotaManager leader;
    private final ReplicationQuotaManager follower;

    public ReplicationThrottles(int brokerId, ReplicationQuotaManager leader, ReplicationQuotaManager follower) {
        this.brokerId = brokerId;
        this.leader = Objects.requireNonNull(leader, "leader");
        this.follower = Objects.requireNonNull(follower, "follower");
        if (leader.side() != ReplicationQuotaManager.Side.LEADER || follower.side() != ReplicationQuotaManager.Side.FOLLOWER) {
            throw new IllegalArgumentException("quota managers in the wrong roles: leader=" + leader.side() + ", follower=" + follower.side());
        }
    }

    @Override
    public void publish(MetadataImage previous, MetadataImage current) {
        for (String topic : current.topicsByName().keySet()) {
            ConfigResource resource = ConfigResource.topic(topic);
            Map<String, String> configs = current.configs(resource);
            if (previous != null && previous.topicsByName().containsKey(topic) && previous.configs(resource).equals(configs)) {
                continue;
            }
            leader.applyTopicConfig(topic, throttledReplicas(configs, LogConfig.LEADER_THROTTLED_REPLICAS), brokerId);
            follower.applyTopicConfig(topic, throttledReplicas(configs, LogConfig.FOLLOWER_THROTTLED_REPLICAS), brokerId);
        }
        if (previous != null) {
            for (String topic : previous.topicsByName().keySet()) {
                if (!current.topicsByName().containsKey(topic)) {
                    leader.removeThrottle(topic);
                    follower.removeThrottle(topic);
                }
            }
        }
    }

    private static List<String> throttledReplicas(Map<String, String> configs, String key) {
        String value = configs.getOrDefault(key, "").trim();
        return value.isEmpty() ? List.of() : List.of(value.split("\\s*,\\s*", -1));
    }
}
