package io.strata.metadata;

import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.ProducerIdsRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.RemoveTopicRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The whole cluster state as of one offset of the metadata log: topics and partitions,
 * dynamic configurations, finalized features, registered brokers and the next producer id.
 * Immutable: the controller's and the brokers' readers hold an image and never see it
 * change; applying records produces a new image that is published atomically.
 */
public final class MetadataImage {
    public static final MetadataImage EMPTY = new MetadataImage(-1L, Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), 0L);

    private final long offset;
    private final Map<String, TopicImage> topicsByName;
    private final Map<UUID, TopicImage> topicsById;
    private final Map<ConfigResource, Map<String, String>> configs;
    private final Map<String, Short> features;
    private final Map<Integer, BrokerRegistration> brokers;
    private final long nextProducerId;

    private MetadataImage(long offset, Map<String, TopicImage> topicsByName, Map<UUID, TopicImage> topicsById,
                          Map<ConfigResource, Map<String, String>> configs, Map<String, Short> features,
                          Map<Integer, BrokerRegistration> brokers, long nextProducerId) {
        this.offset = offset;
        this.topicsByName = topicsByName;
        this.topicsById = topicsById;
        this.configs = configs;
        this.features = features;
        this.brokers = brokers;
        this.nextProducerId = nextProducerId;
    }

    /** The offset of the last metadata record reflected here (-1 for the empty image). */
    public long offset() {
        return offset;
    }

    public TopicImage topic(String name) {
        return topicsByName.get(name);
    }

    public TopicImage topic(UUID id) {
        return topicsById.get(id);
    }

    public Map<String, TopicImage> topicsByName() {
        return topicsByName;
    }

    public Map<UUID, TopicImage> topicsById() {
        return topicsById;
    }

    /** Dynamic settings of a resource (empty if none). */
    public Map<String, String> configs(ConfigResource resource) {
        return configs.getOrDefault(resource, Map.of());
    }

    public Map<String, Short> features() {
        return features;
    }

    public Map<Integer, BrokerRegistration> brokers() {
        return brokers;
    }

    public long nextProducerId() {
        return nextProducerId;
    }

    /** This image at another offset (an image applied before its batch's offsets were known). */
    public MetadataImage withOffset(long newOffset) {
        return newOffset == offset ? this : new MetadataImage(newOffset, topicsByName, topicsById, configs, features, brokers, nextProducerId);
    }

    /** Applies records read from (or just written to) the log; {@code lastOffset} is the offset of the last one. */
    public MetadataImage apply(List<ApiMessage> records, long lastOffset) {
        Builder builder = new Builder(this);
        for (ApiMessage record : records) {
            builder.apply(record);
        }
        return builder.build(lastOffset);
    }

    /** Copy-on-write builder: copies each map only when first changed. */
    private static final class Builder {
        private final MetadataImage base;
        private Map<String, TopicImage> byName;
        private Map<UUID, TopicImage> byId;
        private Map<ConfigResource, Map<String, String>> configs;
        private Map<String, Short> features;
        private Map<Integer, BrokerRegistration> brokers;
        private long nextProducerId;

        Builder(MetadataImage base) {
            this.base = base;
            this.nextProducerId = base.nextProducerId;
        }

        private Map<String, TopicImage> byName() {
            if (byName == null) {
                byName = new HashMap<>(base.topicsByName);
                byId = new HashMap<>(base.topicsById);
            }
            return byName;
        }

        private void putTopic(TopicImage topic) {
            byName().put(topic.name(), topic);
            byId.put(topic.id(), topic);
        }

        private TopicImage topicById(UUID id) {
            byName();
            TopicImage topic = byId.get(id);
            if (topic == null) {
                throw new IllegalStateException("metadata record refers to unknown topic id " + id);
            }
            return topic;
        }

        void apply(ApiMessage record) {
            if (record instanceof TopicRecord topic) {
                putTopic(new TopicImage(topic.name(), topic.topicId(), Map.of()));
            } else if (record instanceof PartitionRecord partition) {
                TopicImage topic = topicById(partition.topicId());
                Map<Integer, PartitionRegistration> partitions = new HashMap<>(topic.partitions());
                partitions.put(partition.partitionId(), new PartitionRegistration(toArray(partition.replicas()), toArray(partition.isr()),
                    partition.leader(), partition.leaderEpoch(), partition.partitionEpoch()));
                putTopic(new TopicImage(topic.name(), topic.id(), partitions));
            } else if (record instanceof PartitionChangeRecord change) {
                applyPartitionChange(change);
            } else if (record instanceof RemoveTopicRecord remove) {
                TopicImage topic = topicById(remove.topicId());
                byName.remove(topic.name());
                byId.remove(topic.id());
                configs().remove(ConfigResource.topic(topic.name()));
            } else if (record instanceof ConfigRecord config) {
                ConfigResource resource = new ConfigResource(config.resourceType(), config.resourceName());
                Map<String, String> values = new HashMap<>(configs().getOrDefault(resource, Map.of()));
                if (config.value() == null) {
                    values.remove(config.name());
                } else {
                    values.put(config.name(), config.value());
                }
                if (values.isEmpty()) {
                    configs().remove(resource);
                } else {
                    configs().put(resource, Collections.unmodifiableMap(values));
                }
            } else if (record instanceof FeatureLevelRecord feature) {
                if (features == null) {
                    features = new HashMap<>(base.features);
                }
                if (feature.featureLevel() == 0) {
                    features.remove(feature.name());
                } else {
                    features.put(feature.name(), feature.featureLevel());
                }
            } else if (record instanceof RegisterBrokerRecord register) {
                if (brokers == null) {
                    brokers = new HashMap<>(base.brokers);
                }
                List<BrokerRegistration.Endpoint> endpoints = new ArrayList<>();
                for (RegisterBrokerRecord.BrokerEndpoint endpoint : register.endPoints()) {
                    endpoints.add(new BrokerRegistration.Endpoint(endpoint.name(), endpoint.host(), endpoint.port(), endpoint.securityProtocol()));
                }
                brokers.put(register.brokerId(), new BrokerRegistration(register.brokerId(), register.brokerEpoch(), register.incarnationId(),
                    endpoints, register.rack(), register.fenced()));
            } else if (record instanceof ProducerIdsRecord ids) {
                nextProducerId = Math.max(nextProducerId, ids.nextProducerId());
            } else {
                throw new IllegalStateException("unknown metadata record " + record.getClass().getSimpleName());
            }
        }

        private void applyPartitionChange(PartitionChangeRecord change) {
            TopicImage topic = topicById(change.topicId());
            PartitionRegistration current = topic.partition(change.partitionId());
            if (current == null) {
                throw new IllegalStateException("change for unknown partition " + change.partitionId() + " of " + topic.name());
            }
            int[] replicas = change.replicas() != null ? toArray(change.replicas()) : current.replicas();
            int[] isr = change.isr() != null ? toArray(change.isr()) : current.isr();
            int leader = change.leader() != -2 ? change.leader() : current.leader();
            int leaderEpoch = change.leader() != -2 ? current.leaderEpoch() + 1 : current.leaderEpoch();
            Map<Integer, PartitionRegistration> partitions = new HashMap<>(topic.partitions());
            partitions.put(change.partitionId(), new PartitionRegistration(replicas, isr, leader, leaderEpoch, current.partitionEpoch() + 1));
            putTopic(new TopicImage(topic.name(), topic.id(), partitions));
        }

        private Map<ConfigResource, Map<String, String>> configs() {
            if (configs == null) {
                configs = new HashMap<>(base.configs);
            }
            return configs;
        }

        MetadataImage build(long lastOffset) {
            return new MetadataImage(lastOffset,
                byName == null ? base.topicsByName : Collections.unmodifiableMap(byName),
                byId == null ? base.topicsById : Collections.unmodifiableMap(byId),
                configs == null ? base.configs : Collections.unmodifiableMap(configs),
                features == null ? base.features : Collections.unmodifiableMap(features),
                brokers == null ? base.brokers : Collections.unmodifiableMap(brokers),
                nextProducerId);
        }
    }

    static int[] toArray(List<Integer> values) {
        int[] array = new int[values.size()];
        for (int i = 0; i < array.length; i++) {
            array[i] = values.get(i);
        }
        return array;
    }
}
