package io.strata.metadata;

import io.strata.metadata.record.ClearElrRecord;
import io.strata.metadata.record.ConfigRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.storage.LogConfig;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * KIP-966's rules for {@code min.insync.replicas} while {@code eligible.leader.replicas.version}
 * ≥ 1 is finalized (KAFKA-16540), as Kafka's {@code ConfigurationControlManager}: every broker
 * must resolve the same min ISR for a partition, or brokers disagree on which partitions are
 * under min ISR and the ELR invariants break. So, with ELR on:
 * <ul>
 *   <li>a broker-level (named broker) {@code min.insync.replicas} may not be set or removed:
 *       INVALID_CONFIG "Broker-level min.insync.replicas cannot be altered while ELR is enabled.";</li>
 *   <li>the cluster-level one (broker resource "") may be set but not removed: INVALID_CONFIG
 *       "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.";</li>
 *   <li>a change of a topic's value clears that topic's ELR and LastKnownElr, a change of the
 *       cluster-level value every topic's (one {@code ClearElrRecord} each, written in the same
 *       batch as the config change);</li>
 *   <li>turning ELR on writes the cluster-level value when there is none (the static default)
 *       and removes every broker-level one.</li>
 * </ul>
 * With ELR off none of this applies. Turning ELR off (UpdateFeatures to level 0) writes only the
 * FeatureLevelRecord, as Kafka: the ELR fields a partition still has are dropped by its next
 * partition change ({@link PartitionChangeBuilder} with ELR off empties them).
 *
 * <p>Stateless; every method reads only the image it is given.
 */
public final class ElrConfigRules {
    public static final String BROKER_LEVEL_REFUSED =
        "Broker-level " + LogConfig.MIN_IN_SYNC_REPLICAS + " cannot be altered while ELR is enabled.";
    public static final String CLUSTER_LEVEL_REMOVAL_REFUSED =
        "Cluster-level " + LogConfig.MIN_IN_SYNC_REPLICAS + " cannot be removed while ELR is enabled.";

    private ElrConfigRules() {
    }

    /**
     * The refusal of setting {@code name} of {@code resource} to {@code value} (null removes it)
     * in {@code image}, or null if the change is allowed.
     */
    public static ControllerRefusedException refusal(MetadataImage image, ConfigResource resource, String name, String value) {
        if (!name.equals(LogConfig.MIN_IN_SYNC_REPLICAS) || resource.type() != ConfigResource.BROKER || !ReplicationControl.elrEnabled(image)) {
            return null;
        }
        if (!resource.name().isEmpty()) {
            return new ControllerRefusedException(ErrorCode.INVALID_CONFIG, BROKER_LEVEL_REFUSED);
        }
        return value == null ? new ControllerRefusedException(ErrorCode.INVALID_CONFIG, CLUSTER_LEVEL_REMOVAL_REFUSED) : null;
    }

    /**
     * The records that clear the ELR a batch of {@code changes} may have made unsafe: with ELR on,
     * a topic's min.insync.replicas change (even to the value it had, as Kafka) clears that topic's
     * ELR, a cluster-level change every topic's. Named-broker changes clear nothing (they are refused).
     */
    public static List<ApiMessage> clearElrRecords(MetadataImage image, List<ControllerApi.ConfigChange> changes) {
        if (!ReplicationControl.elrEnabled(image)) {
            return List.of();
        }
        Set<String> topics = new LinkedHashSet<>();
        for (ControllerApi.ConfigChange change : changes) {
            if (!change.name().equals(LogConfig.MIN_IN_SYNC_REPLICAS)) {
                continue;
            }
            if (change.resource().type() == ConfigResource.BROKER && change.resource().name().isEmpty()) {
                return List.of(new ClearElrRecord().setTopicName(""));
            }
            if (change.resource().type() == ConfigResource.TOPIC && image.topic(change.resource().name()) != null) {
                topics.add(change.resource().name());
            }
        }
        List<ApiMessage> records = new ArrayList<>();
        for (String topic : topics) {
            records.add(new ClearElrRecord().setTopicName(topic));
        }
        return records;
    }

    /**
     * The config records that make it safe to turn ELR on in {@code image} (Kafka's
     * {@code maybeGenerateElrSafetyRecords}): the cluster-level min.insync.replicas set to
     * {@code staticMinIsr} if there is none, and every broker-level one removed (in broker id order).
     */
    public static List<ApiMessage> safetyRecords(MetadataImage image, String staticMinIsr) {
        List<ApiMessage> records = new ArrayList<>();
        if (!image.configs(ConfigResource.broker("")).containsKey(LogConfig.MIN_IN_SYNC_REPLICAS)) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("")
                .setName(LogConfig.MIN_IN_SYNC_REPLICAS).setValue(staticMinIsr));
        }
        TreeMap<Integer, ConfigResource> brokers = new TreeMap<>();
        for (ConfigResource resource : image.configResources()) {
            if (resource.type() == ConfigResource.BROKER && !resource.name().isEmpty()
                && image.configs(resource).containsKey(LogConfig.MIN_IN_SYNC_REPLICAS)) {
                brokers.put(brokerId(resource), resource);
            }
        }
        for (ConfigResource resource : brokers.values()) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName(resource.name())
                .setName(LogConfig.MIN_IN_SYNC_REPLICAS).setValue(null));
        }
        return records;
    }

    private static int brokerId(ConfigResource resource) {
        try {
            return Integer.parseInt(resource.name());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("a broker config resource in the image is not named by a broker id: name=" + resource.name(), e);
        }
    }
}
