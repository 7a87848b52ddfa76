package io.strata.metadata;

import io.strata.metadata.authorizer.AclIndex;
import io.strata.metadata.authorizer.StandardAcl;
import io.strata.metadata.record.AccessControlEntryRecord;
import io.strata.metadata.record.BrokerRegistrationChangeRecord;
import io.strata.metadata.record.RemoveAccessControlEntryRecord;
import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.FenceBrokerRecord;
import io.strata.metadata.record.NoOpRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.ProducerIdsRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.RegisterControllerRecord;
import io.strata.metadata.record.RemoveTopicRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.metadata.record.UnfenceBrokerRecord;
import io.strata.metadata.record.UnregisterBrokerRecord;
import io.strata.protocol.ApiMessage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The whole cluster state as of one offset of the metadata log: topics and partitions,
 * dynamic configurations, finalized features, registered brokers and the next producer id.
 * Immutable: the controller's and the brokers' readers hold an image and never see it
 * change; applying records produces a new image that is published atomically.
 *
 * <p>How each record changes the image (KRaft's replay rules unless noted):
 * <ul>
 *   <li>RegisterBroker: replaces the broker's registration; controlled shutdown starts false.</li>
 *   <li>FenceBroker / UnfenceBroker / UnregisterBroker / BrokerRegistrationChange: apply only to
 *       the registration with the record's BrokerEpoch; a record for another epoch (or an
 *       unknown broker) is ignored. (Kafka's image treats that case as a fatal replay error;
 *       Strata ignores it, see {@code brokerWithEpoch}.) BrokerRegistrationChange's Fenced is
 *       1 fence, -1 unfence, 0 unchanged; InControlledShutdown 1 sets the flag, 0 unchanged.</li>
 *   <li>PartitionChange: a field at its default is unchanged (Leader -2, lists null,
 *       LeaderRecoveryState -1); Leader -1 means no leader. A record that names a Leader (even the
 *       current one) bumps the leader epoch; every PartitionChange bumps the partition epoch
 *       ({@link PartitionRegistration#merge}).</li>
 *   <li>ClearElr: empties the ELR and LastKnownElr of every partition of the named topic (every
 *       topic for an empty name) that has any, as a PartitionChange would (partition epoch + 1,
 *       Kafka's replay); an unknown topic name is a replay error.</li>
 *   <li>RegisterController: replaces the controller's entry in {@link #controllers()}.</li>
 *   <li>AccessControlEntry / RemoveAccessControlEntry: adds the ACL of the record's id / removes it
 *       (removing an unknown id is a replay error, as in Kafka's AclsDelta); see {@link #acls()}.</li>
 *   <li>NoOp: nothing but the offset.</li>
 * </ul>
 *
 * <p>{@link #toRecords()} writes the image back as records (a snapshot's content); replaying
 * them on {@link #EMPTY} at the image's offset gives an {@link #equals equal} image.
 */
public final class MetadataImage {
    public static final MetadataImage EMPTY = new MetadataImage(-1L, Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), 0L,
        AclIndex.EMPTY);

    private final long offset;
    private final Map<String, TopicImage> topicsByName;
    private final Map<UUID, TopicImage> topicsById;
    private final Map<ConfigResource, Map<String, String>> configs;
    private final Map<String, Short> features;
    private final Map<Integer, BrokerRegistration> brokers;
    private final Map<Integer, ControllerRegistration> controllers;
    private final long nextProducerId;
    private final AclIndex acls;

    private MetadataImage(long offset, Map<String, TopicImage> topicsByName, Map<UUID, TopicImage> topicsById,
                          Map<ConfigResource, Map<String, String>> configs, Map<String, Short> features,
                          Map<Integer, BrokerRegistration> brokers, Map<Integer, ControllerRegistration> controllers, long nextProducerId,
                          AclIndex acls) {
        this.offset = offset;
        this.topicsByName = topicsByName;
        this.topicsById = topicsById;
        this.configs = configs;
        this.features = features;
        this.brokers = brokers;
        this.controllers = controllers;
        this.nextProducerId = nextProducerId;
        this.acls = acls;
    }

    /** Every ACL of the cluster, indexed for the authorizer. */
    public AclIndex acls() {
        return acls;
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

    /** Every resource with at least one dynamic setting (unmodifiable). */
    public java.util.Set<ConfigResource> configResources() {
        return java.util.Collections.unmodifiableSet(configs.keySet());
    }

    public Map<String, Short> features() {
        return features;
    }

    public Map<Integer, BrokerRegistration> brokers() {
        return brokers;
    }

    /** Controller nodes by id, as their RegisterControllerRecords announced them. */
    public Map<Integer, ControllerRegistration> controllers() {
        return controllers;
    }

    public long nextProducerId() {
        return nextProducerId;
    }

    /** This image at another offset (an image applied before its batch's offsets were known). */
    public MetadataImage withOffset(long newOffset) {
        return newOffset == offset ? this : new MetadataImage(newOffset, topicsByName, topicsById, configs, features, brokers, controllers, nextProducerId, acls);
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
        private Map<Integer, ControllerRegistration> controllers;
        private long nextProducerId;
        private Map<UUID, StandardAcl> acls;

        /** Partition maps changed by this batch, by topic id; they become TopicImages in {@link #build}. */
        private final Map<UUID, Map<Integer, PartitionRegistration>> touchedPartitions = new HashMap<>();

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

        /**
         * The partitions of {@code topic} as this batch leaves them, copied once per batch and topic
         * (a batch creating a topic of 10,000 partitions copies its map once, not once per record).
         */
        private Map<Integer, PartitionRegistration> partitionsOf(TopicImage topic) {
            return touchedPartitions.computeIfAbsent(topic.id(), id -> new HashMap<>(topic.partitions()));
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
                touchedPartitions.remove(topic.topicId());
                putTopic(new TopicImage(topic.name(), topic.topicId(), Map.of()));
            } else if (record instanceof PartitionRecord partition) {
                TopicImage topic = topicById(partition.topicId());
                partitionsOf(topic).put(partition.partitionId(), PartitionRegistration.of(partition));
            } else if (record instanceof PartitionChangeRecord change) {
                applyPartitionChange(change);
            } else if (record instanceof io.strata.metadata.record.ClearElrRecord clear) {
                applyClearElr(clear);
            } else if (record instanceof RemoveTopicRecord remove) {
                TopicImage topic = topicById(remove.topicId());
                touchedPartitions.remove(topic.id());
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
                List<BrokerRegistration.Endpoint> endpoints = new ArrayList<>();
                for (RegisterBrokerRecord.BrokerEndpoint endpoint : register.endPoints()) {
                    endpoints.add(new BrokerRegistration.Endpoint(endpoint.name(), endpoint.host(), endpoint.port(), endpoint.securityProtocol()));
                }
                brokers().put(register.brokerId(), new BrokerRegistration(register.brokerId(), register.brokerEpoch(), register.incarnationId(),
                    endpoints, register.rack(), register.fenced(), false));
            } else if (record instanceof FenceBrokerRecord fence) {
                BrokerRegistration broker = brokerWithEpoch(fence.brokerId(), fence.brokerEpoch());
                if (broker != null) {
                    brokers().put(broker.id(), broker.withFenced(true));
                }
            } else if (record instanceof UnfenceBrokerRecord unfence) {
                BrokerRegistration broker = brokerWithEpoch(unfence.brokerId(), unfence.brokerEpoch());
                if (broker != null) {
                    brokers().put(broker.id(), broker.withFenced(false));
                }
            } else if (record instanceof UnregisterBrokerRecord unregister) {
                if (brokerWithEpoch(unregister.brokerId(), unregister.brokerEpoch()) != null) {
                    brokers().remove(unregister.brokerId());
                }
            } else if (record instanceof BrokerRegistrationChangeRecord change) {
                applyBrokerRegistrationChange(change);
            } else if (record instanceof RegisterControllerRecord register) {
                List<BrokerRegistration.Endpoint> endpoints = new ArrayList<>();
                for (RegisterControllerRecord.ControllerEndpoint endpoint : register.endPoints()) {
                    endpoints.add(new BrokerRegistration.Endpoint(endpoint.name(), endpoint.host(), endpoint.port(), endpoint.securityProtocol()));
                }
                if (controllers == null) {
                    controllers = new HashMap<>(base.controllers);
                }
                controllers.put(register.controllerId(), new ControllerRegistration(register.controllerId(), register.incarnationId(), endpoints));
            } else if (record instanceof ProducerIdsRecord ids) {
                nextProducerId = Math.max(nextProducerId, ids.nextProducerId());
            } else if (record instanceof AccessControlEntryRecord acl) {
                acls().put(acl.id(), StandardAcl.of(acl));
            } else if (record instanceof RemoveAccessControlEntryRecord remove) {
                if (acls().remove(remove.id()) == null) {
                    throw new IllegalStateException("RemoveAccessControlEntryRecord for unknown ACL id " + remove.id());
                }
            } else if (record instanceof NoOpRecord) {
                // Only the offset moves (build sets it).
            } else {
                throw new IllegalStateException("unknown metadata record " + record.getClass().getSimpleName());
            }
        }

        private Map<UUID, StandardAcl> acls() {
            if (acls == null) {
                acls = new HashMap<>(base.acls.acls());
            }
            return acls;
        }

        private Map<Integer, BrokerRegistration> brokers() {
            if (brokers == null) {
                brokers = new HashMap<>(base.brokers);
            }
            return brokers;
        }

        /**
         * The broker's registration if its epoch is {@code epoch}, else null: a lifecycle record
         * written for an earlier registration of the broker no longer applies to it.
         */
        private BrokerRegistration brokerWithEpoch(int brokerId, long epoch) {
            BrokerRegistration broker = (brokers != null ? brokers : base.brokers).get(brokerId);
            return broker != null && broker.epoch() == epoch ? broker : null;
        }

        private void applyBrokerRegistrationChange(BrokerRegistrationChangeRecord change) {
            BrokerRegistration broker = brokerWithEpoch(change.brokerId(), change.brokerEpoch());
            if (broker == null) {
                return;
            }
            BrokerRegistration next = switch (change.fenced()) {
                case 0 -> broker;
                case 1 -> broker.withFenced(true);
                case -1 -> broker.withFenced(false);
                default -> throw new IllegalStateException("BrokerRegistrationChangeRecord for broker " + change.brokerId()
                    + " epoch " + change.brokerEpoch() + " has Fenced=" + change.fenced() + "; expected -1, 0 or 1");
            };
            next = switch (change.inControlledShutdown()) {
                case 0 -> next;
                case 1 -> next.withInControlledShutdown(true);
                default -> throw new IllegalStateException("BrokerRegistrationChangeRecord for broker " + change.brokerId()
                    + " epoch " + change.brokerEpoch() + " has InControlledShutdown=" + change.inControlledShutdown() + "; expected 0 or 1");
            };
            brokers().put(next.id(), next);
        }

        private void applyPartitionChange(PartitionChangeRecord change) {
            TopicImage topic = topicById(change.topicId());
            Map<Integer, PartitionRegistration> partitions = partitionsOf(topic);
            PartitionRegistration current = partitions.get(change.partitionId());
            if (current == null) {
                throw new IllegalStateException("change for unknown partition " + change.partitionId() + " of " + topic.name());
            }
            partitions.put(change.partitionId(), current.merge(change));
        }

        private void applyClearElr(io.strata.metadata.record.ClearElrRecord clear) {
            List<TopicImage> topics = new ArrayList<>();
            if (clear.topicName().isEmpty()) {
                byName();
                topics.addAll(byId.values());
            } else {
                TopicImage topic = byName().get(clear.topicName());
                if (topic == null) {
                    throw new IllegalStateException("ClearElrRecord for unknown topic " + clear.topicName());
                }
                topics.add(topic);
            }
            for (TopicImage topic : topics) {
                Map<Integer, PartitionRegistration> current = touchedPartitions.containsKey(topic.id()) ? touchedPartitions.get(topic.id())
                    : topic.partitions();
                for (Map.Entry<Integer, PartitionRegistration> entry : new ArrayList<>(current.entrySet())) {
                    PartitionRegistration partition = entry.getValue();
                    if (partition.elr().length > 0 || partition.lastKnownElr().length > 0) {
                        partitionsOf(topic).put(entry.getKey(), partition.merge(new PartitionChangeRecord().setTopicId(topic.id())
                            .setPartitionId(entry.getKey()).setEligibleLeaderReplicas(List.of()).setLastKnownElr(List.of())));
                    }
                }
            }
        }

        private Map<ConfigResource, Map<String, String>> configs() {
            if (configs == null) {
                configs = new HashMap<>(base.configs);
            }
            return configs;
        }

        MetadataImage build(long lastOffset) {
            for (Map.Entry<UUID, Map<Integer, PartitionRegistration>> touched : touchedPartitions.entrySet()) {
                TopicImage topic = byId.get(touched.getKey());
                if (topic != null) {
                    putTopic(new TopicImage(topic.name(), topic.id(), touched.getValue()));
                }
            }
            return new MetadataImage(lastOffset,
                byName == null ? base.topicsByName : Collections.unmodifiableMap(byName),
                byId == null ? base.topicsById : Collections.unmodifiableMap(byId),
                configs == null ? base.configs : Collections.unmodifiableMap(configs),
                features == null ? base.features : Collections.unmodifiableMap(features),
                brokers == null ? base.brokers : Collections.unmodifiableMap(brokers),
                controllers == null ? base.controllers : Collections.unmodifiableMap(controllers),
                nextProducerId,
                acls == null ? base.acls : AclIndex.of(acls));
        }
    }

    /**
     * The whole image as records, in the order a snapshot holds them: features, brokers (each
     * registration, then a BrokerRegistrationChangeRecord if it is in controlled shutdown),
     * controllers, topics each followed by its partitions, configurations, ACLs (by id), producer ids. Within a
     * kind the order is by id or name, so equal images give equal lists.
     *
     * <p>Postcondition: {@code EMPTY.apply(toRecords(), offset())} {@link #equals equals} this image.
     */
    public List<ApiMessage> toRecords() {
        List<ApiMessage> records = new ArrayList<>();
        for (Map.Entry<String, Short> feature : new TreeMap<>(features).entrySet()) {
            records.add(new FeatureLevelRecord().setName(feature.getKey()).setFeatureLevel(feature.getValue()));
        }
        for (BrokerRegistration broker : new TreeMap<>(brokers).values()) {
            addBrokerRecords(broker, records);
        }
        for (ControllerRegistration controller : new TreeMap<>(controllers).values()) {
            RegisterControllerRecord record = new RegisterControllerRecord().setControllerId(controller.id())
                .setIncarnationId(controller.incarnationId());
            for (BrokerRegistration.Endpoint endpoint : controller.endpoints()) {
                record.endPoints().add(new RegisterControllerRecord.ControllerEndpoint().setName(endpoint.listenerName())
                    .setHost(endpoint.host()).setPort(endpoint.port()).setSecurityProtocol(endpoint.securityProtocol()));
            }
            records.add(record);
        }
        for (TopicImage topic : new TreeMap<>(topicsByName).values()) {
            records.add(new TopicRecord().setName(topic.name()).setTopicId(topic.id()));
            for (Map.Entry<Integer, PartitionRegistration> entry : new TreeMap<>(topic.partitions()).entrySet()) {
                records.add(partitionRecord(topic.id(), entry.getKey(), entry.getValue()));
            }
        }
        List<ConfigResource> resources = new ArrayList<>(configs.keySet());
        resources.sort(Comparator.comparingInt((ConfigResource resource) -> resource.type()).thenComparing(ConfigResource::name));
        for (ConfigResource resource : resources) {
            for (Map.Entry<String, String> setting : new TreeMap<>(configs.get(resource)).entrySet()) {
                records.add(new ConfigRecord().setResourceType(resource.type()).setResourceName(resource.name())
                    .setName(setting.getKey()).setValue(setting.getValue()));
            }
        }
        List<Map.Entry<UUID, StandardAcl>> aclEntries = new ArrayList<>(acls.acls().entrySet());
        aclEntries.sort(Map.Entry.comparingByKey());
        for (Map.Entry<UUID, StandardAcl> acl : aclEntries) {
            records.add(acl.getValue().toRecord(acl.getKey()));
        }
        if (nextProducerId > 0) {
            // No broker owns a snapshot's block; -1 as KRaft's snapshots write.
            records.add(new ProducerIdsRecord().setBrokerId(-1).setBrokerEpoch(-1).setNextProducerId(nextProducerId));
        }
        return records;
    }

    private static void addBrokerRecords(BrokerRegistration broker, List<ApiMessage> records) {
        RegisterBrokerRecord register = new RegisterBrokerRecord().setBrokerId(broker.id()).setBrokerEpoch(broker.epoch())
            .setIncarnationId(broker.incarnationId()).setRack(broker.rack()).setFenced(broker.fenced());
        for (BrokerRegistration.Endpoint endpoint : broker.endpoints()) {
            register.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName(endpoint.listenerName()).setHost(endpoint.host())
                .setPort(endpoint.port()).setSecurityProtocol(endpoint.securityProtocol()));
        }
        records.add(register);
        if (broker.inControlledShutdown()) {
            records.add(new BrokerRegistrationChangeRecord().setBrokerId(broker.id()).setBrokerEpoch(broker.epoch())
                .setInControlledShutdown((byte) 1));
        }
    }

    private static PartitionRecord partitionRecord(UUID topicId, int index, PartitionRegistration partition) {
        return partition.toRecord(topicId, index);
    }

    /** Equal images: same offset, topics (with partitions), configurations, features, brokers, controllers and next producer id. */
    @Override
    public boolean equals(Object other) {
        return other instanceof MetadataImage that && offset == that.offset && nextProducerId == that.nextProducerId
            && topicsByName.equals(that.topicsByName) && topicsById.equals(that.topicsById) && configs.equals(that.configs)
            && features.equals(that.features) && brokers.equals(that.brokers) && controllers.equals(that.controllers)
            && acls.equals(that.acls);
    }

    @Override
    public int hashCode() {
        return Objects.hash(offset, nextProducerId, topicsByName, configs, features, brokers, controllers, acls);
    }

    @Override
    public String toString() {
        return "MetadataImage(offset=" + offset + ", topics=" + topicsByName + ", configs=" + configs + ", features=" + features
            + ", brokers=" + brokers + ", controllers=" + controllers + ", nextProducerId=" + nextProducerId + ", acls=" + acls.acls().size() + ")";
    }

    static int[] toArray(List<Integer> values) {
        int[] array = new int[values.size()];
        for (int i = 0; i < array.length; i++) {
            array[i] = values.get(i);
        }
        return array;
    }
}
