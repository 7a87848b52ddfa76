package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;
import io.strata.storage.LogConfig;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * The controller's partition-state decisions over a {@link MetadataImage}: AlterPartition
 * (key 56) validation and ISR changes, and the leadership/ISR/ELR changes that follow a broker's
 * change of state (fenced, controlled shutdown, unregistered, unfenced, unclean restart). Each
 * method reads an image and returns the records to write plus, for AlterPartition, the answer;
 * nothing is applied here. Immutable and thread-safe; the controller calls it on its thread.
 *
 * <p>Every record is made by {@link PartitionChangeBuilder}, so election order, ELR upkeep and
 * the epoch rules are the builder's. ELR is on when the image finalizes
 * {@value #ELR_FEATURE} ≥ 1; the effective min ISR of a topic is
 * min(its {@code min.insync.replicas}, else the cluster default, else the broker's static
 * default, else 1; its replication factor).
 */
public final class ReplicationControl {
    /** KIP-966's feature. */
    public static final String ELR_FEATURE = "eligible.leader.replicas.version";
    /** The cluster-wide dynamic default's resource (an empty broker name, as Kafka's). */
    private static final ConfigResource CLUSTER_DEFAULT = ConfigResource.broker("");

    private final Map<String, String> topicDefaults;

    /** @param topicDefaults the broker's static topic-key defaults ({@link ControllerSettings#topicDefaults()}) */
    public ReplicationControl(Map<String, String> topicDefaults) {
        this.topicDefaults = Map.copyOf(topicDefaults);
    }

    /** Records to write and the value to answer once they are committed. */
    public record Result<T>(List<ApiMessage> records, T response) {
    }

    /** True if {@code image} finalizes {@value #ELR_FEATURE} at level 1 or more. */
    public static boolean elrEnabled(MetadataImage image) {
        Short level = image.features().get(ELR_FEATURE);
        return level != null && level >= 1;
    }

    /** min(min.insync.replicas of {@code topic} as configured, else the cluster default, else the static default, else 1; replicas). */
    public int effectiveMinIsr(MetadataImage image, String topic, int replicationFactor) {
        String value = configured(image, ConfigResource.topic(topic));
        if (value == null) {
            value = configured(image, CLUSTER_DEFAULT);
        }
        if (value == null) {
            value = topicDefaults.get(LogConfig.MIN_IN_SYNC_REPLICAS);
        }
        int minIsr = 1;
        if (value != null) {
            try {
                minIsr = Integer.parseInt(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalStateException("min.insync.replicas of topic " + topic + " is not a number: " + value, e);
            }
        }
        return Math.max(1, Math.min(minIsr, replicationFactor));
    }

    private static String configured(MetadataImage image, ConfigResource resource) {
        return configured(image, resource, LogConfig.MIN_IN_SYNC_REPLICAS);
    }

    private static String configured(MetadataImage image, ConfigResource resource, String key) {
        Map<String, String> configs = image.configs(resource);
        return configs == null ? null : configs.get(key);
    }

    /**
     * {@code unclean.leader.election.enable} of {@code topic}: as the topic sets it, else the
     * cluster default, else the static default, else false (Kafka's default).
     */
    public boolean uncleanLeaderElectionEnabled(MetadataImage image, String topic) {
        String value = configured(image, ConfigResource.topic(topic), LogConfig.UNCLEAN_LEADER_ELECTION_ENABLE);
        if (value == null) {
            value = configured(image, CLUSTER_DEFAULT, LogConfig.UNCLEAN_LEADER_ELECTION_ENABLE);
        }
        if (value == null) {
            value = topicDefaults.get(LogConfig.UNCLEAN_LEADER_ELECTION_ENABLE);
        }
        return value != null && Boolean.parseBoolean(value.trim());
    }

    /** A builder for one partition of {@code topic}, with the image's ELR switch and the topic's effective min ISR. */
    public PartitionChangeBuilder builder(MetadataImage image, TopicImage topic, int partitionId, IntPredicate isAcceptableLeader) {
        PartitionRegistration partition = topic.partitions().get(partitionId);
        return new PartitionChangeBuilder(partition, topic.id(), partitionId, isAcceptableLeader,
            effectiveMinIsr(image, topic.name(), partition.replicas().length), elrEnabled(image));
    }

    // ---------------------------------------------------------------------------------------------
    // AlterPartition

    /**
     * AlterPartition as Kafka 4.4's ReplicationControlManager answers it. Checks, in order:
     * the requester's broker epoch (top-level STALE_BROKER_EPOCH, nothing else answered); per
     * topic an unknown or zero id (UNKNOWN_TOPIC_ID for v2+, UNKNOWN_TOPIC_OR_PARTITION for
     * v0-1, every partition); per partition: unknown (UNKNOWN_TOPIC_OR_PARTITION); leader or
     * partition epoch newer than the controller's (NOT_CONTROLLER: this controller is behind);
     * leader epoch older (FENCED_LEADER_EPOCH); requester not the leader (INVALID_REQUEST);
     * partition epoch older (INVALID_UPDATE_VERSION); new ISR with duplicates, non-replicas or
     * negative ids (INVALID_REQUEST); new ISR without the leader (INVALID_REQUEST); RECOVERING
     * with more than one ISR member, or RECOVERED→RECOVERING (INVALID_REQUEST); a member not
     * registered, in controlled shutdown, fenced, or (NewIsrWithEpochs) with a broker epoch other
     * than its registration's unless -1 (INELIGIBLE_REPLICA for v2+, OPERATION_NOT_ATTEMPTED for
     * v0-1). A valid partition gets a change record unless nothing changes, and is answered with
     * the state after it (leader, ISR, leader epoch, partition epoch, recovery state); an
     * unchanged partition is answered with its current state and no record (Kafka's behaviour).
     */
    public Result<AlterPartitionResponseData> alterPartition(MetadataImage image, AlterPartitionRequestData request, short version) {
        AlterPartitionResponseData response = new AlterPartitionResponseData();
        BrokerRegistration requester = image.brokers().get(request.brokerId());
        if (requester == null || requester.epoch() != request.brokerEpoch()) {
            return new Result<>(List.of(), response.setErrorCode(ErrorCode.STALE_BROKER_EPOCH.code()));
        }
        List<ApiMessage> records = new ArrayList<>();
        for (AlterPartitionRequestData.TopicData topicData : request.topics()) {
            AlterPartitionResponseData.TopicData topicResponse = new AlterPartitionResponseData.TopicData().setTopicId(topicData.topicId());
            response.topics().add(topicResponse);
            TopicImage topic = topicData.topicId() == null || Uuids.ZERO.equals(topicData.topicId()) ? null
                : image.topicsById().get(topicData.topicId());
            if (topic == null) {
                ErrorCode error = version > 1 ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
                for (AlterPartitionRequestData.PartitionData partitionData : topicData.partitions()) {
                    topicResponse.partitions().add(new AlterPartitionResponseData.PartitionData()
                        .setPartitionIndex(partitionData.partitionIndex()).setErrorCode(error.code()));
                }
                continue;
            }
            for (AlterPartitionRequestData.PartitionData partitionData : topicData.partitions()) {
                topicResponse.partitions().add(alterOnePartition(image, request.brokerId(), topic, partitionData, version, records));
            }
        }
        return new Result<>(records, response);
    }

    private AlterPartitionResponseData.PartitionData alterOnePartition(MetadataImage image, int brokerId, TopicImage topic,
                                                                      AlterPartitionRequestData.PartitionData data, short version,
                                                                      List<ApiMessage> records) {
        int partitionId = data.partitionIndex();
        List<AlterPartitionRequestData.BrokerState> newIsr = newIsrWithEpochs(data, version);
        PartitionRegistration partition = topic.partitions().get(partitionId);
        ErrorCode error = validate(image, brokerId, partition, data, newIsr, version);
        if (error != ErrorCode.NONE) {
            return new AlterPartitionResponseData.PartitionData().setPartitionIndex(partitionId).setErrorCode(error.code());
        }
        List<Integer> targetIsr = new ArrayList<>(newIsr.size());
        for (AlterPartitionRequestData.BrokerState member : newIsr) {
            targetIsr.add(member.brokerId());
        }
        Optional<PartitionChangeRecord> change = builder(image, topic, partitionId, acceptableLeaders(image, Set.of(), Set.of()))
            .setTargetIsr(targetIsr)
            .setTargetLeaderRecoveryState(data.leaderRecoveryState())
            .build();
        if (change.isPresent()) {
            records.add(change.get());
            partition = partition.merge(change.get());
            if (change.get().leader() != brokerId && change.get().leader() != PartitionChangeBuilder.NO_LEADER_CHANGE) {
                // Only a reassignment completed by this ISR change moves the leader: the requester must learn it from the image.
                ErrorCode moved = version > 1 ? ErrorCode.NEW_LEADER_ELECTED : ErrorCode.FENCED_LEADER_EPOCH;
                return new AlterPartitionResponseData.PartitionData().setPartitionIndex(partitionId).setErrorCode(moved.code());
            }
        }
        return new AlterPartitionResponseData.PartitionData().setPartitionIndex(partitionId).setErrorCode(ErrorCode.NONE.code())
            .setLeaderId(partition.leader()).setIsr(PartitionRegistration.toList(partition.isr()))
            .setLeaderRecoveryState(partition.leaderRecoveryState()).setLeaderEpoch(partition.leaderEpoch())
            .setPartitionEpoch(partition.partitionEpoch());
    }

    /** NewIsrWithEpochs from v3 on; before, NewIsr with broker epoch -1 (no epoch check), as Kafka converts it. */
    private static List<AlterPartitionRequestData.BrokerState> newIsrWithEpochs(AlterPartitionRequestData.PartitionData data, short version) {
        if (version >= 3) {
            return data.newIsrWithEpochs();
        }
        List<AlterPartitionRequestData.BrokerState> members = new ArrayList<>(data.newIsr().size());
        for (int id : data.newIsr()) {
            members.add(new AlterPartitionRequestData.BrokerState().setBrokerId(id).setBrokerEpoch(-1));
        }
        return members;
    }

    private static ErrorCode validate(MetadataImage image, int brokerId, PartitionRegistration partition, AlterPartitionRequestData.PartitionData data,
                                      List<AlterPartitionRequestData.BrokerState> newIsr, short version) {
        if (partition == null) {
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        }
        // Epochs newer than ours: this controller has not caught up, so the leader should look for the active one.
        if (data.leaderEpoch() > partition.leaderEpoch() || data.partitionEpoch() > partition.partitionEpoch()) {
            return ErrorCode.NOT_CONTROLLER;
        }
        if (data.leaderEpoch() < partition.leaderEpoch()) {
            return ErrorCode.FENCED_LEADER_EPOCH;
        }
        if (brokerId != partition.leader()) {
            return ErrorCode.INVALID_REQUEST;
        }
        if (data.partitionEpoch() < partition.partitionEpoch()) {
            return ErrorCode.INVALID_UPDATE_VERSION;
        }
        if (!validIsr(partition.replicas(), newIsr)) {
            return ErrorCode.INVALID_REQUEST;
        }
        if (newIsr.stream().noneMatch(member -> member.brokerId() == partition.leader())) {
            return ErrorCode.INVALID_REQUEST;
        }
        byte recovery = data.leaderRecoveryState();
        if (recovery != PartitionRegistration.RECOVERED && recovery != PartitionRegistration.RECOVERING) {
            return ErrorCode.INVALID_REQUEST;
        }
        if (recovery == PartitionRegistration.RECOVERING && newIsr.size() > 1) {
            return ErrorCode.INVALID_REQUEST;
        }
        if (partition.leaderRecoveryState() == PartitionRegistration.RECOVERED && recovery == PartitionRegistration.RECOVERING) {
            return ErrorCode.INVALID_REQUEST;
        }
        for (AlterPartitionRequestData.BrokerState member : newIsr) {
            BrokerRegistration broker = image.brokers().get(member.brokerId());
            boolean ineligible = broker == null || broker.inControlledShutdown() || broker.fenced()
                || (member.brokerEpoch() != -1 && member.brokerEpoch() != broker.epoch());
            if (ineligible) {
                return version > 1 ? ErrorCode.INELIGIBLE_REPLICA : ErrorCode.OPERATION_NOT_ATTEMPTED;
            }
        }
        return ErrorCode.NONE;
    }

    /** Kafka's Replicas.validateIsr: no negative id, no duplicate, every member a replica (an empty ISR passes here). */
    private static boolean validIsr(int[] replicas, List<AlterPartitionRequestData.BrokerState> isr) {
        Set<Integer> seen = new HashSet<>();
        for (AlterPartitionRequestData.BrokerState member : isr) {
            int id = member.brokerId();
            if (id < 0 || !seen.add(id) || !PartitionRegistration.contains(replicas, id)) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------------------------------------
    // Broker state changes

    /**
     * Whether a broker may lead: registered, not in {@code unusable}, not in controlled shutdown,
     * and unfenced in the image or in {@code unfenced}.
     */
    static IntPredicate acceptableLeaders(MetadataImage image, Set<Integer> unusable, Set<Integer> unfenced) {
        return id -> {
            if (unusable.contains(id)) {
                return false;
            }
            BrokerRegistration broker = image.brokers().get(id);
            return broker != null && !broker.inControlledShutdown() && (!broker.fenced() || unfenced.contains(id));
        };
    }

    /**
     * The changes when {@code brokerIds} become fenced, enter controlled shutdown or are
     * unregistered (KIP-841: none of them may lead or stay in an ISR). They count as unusable
     * whatever {@code image} says of them. Each partition whose ISR holds one of them, or that
     * one of them leads, loses them from its ISR; with ELR off the last member stays (the highest
     * id of several leaving at once, as if taken one after another in ascending id order), with
     * ELR on the ISR may become empty and leaving members may enter the ELR. A partition they led
     * gets the first valid replica ({@link PartitionChangeBuilder}) or none. Brokers in
     * {@code uncleanShutdown} (a subset) also leave every ELR and never enter one (KAFKA-15586).
     * Records are in topic-name, then partition order.
     */
    public List<PartitionChangeRecord> forUnusableBrokers(MetadataImage image, Set<Integer> brokerIds, Set<Integer> uncleanShutdown) {
        IntPredicate acceptable = acceptableLeaders(image, brokerIds, Set.of());
        List<Integer> ascending = new ArrayList<>(new java.util.TreeSet<>(brokerIds));
        List<PartitionChangeRecord> records = new ArrayList<>();
        for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
            for (Map.Entry<Integer, PartitionRegistration> entry : new TreeMap<>(topic.partitions()).entrySet()) {
                leaveOnePartition(image, topic, entry.getKey(), entry.getValue(), ascending, uncleanShutdown, acceptable).ifPresent(records::add);
            }
        }
        return records;
    }

    /**
     * The changes when broker {@code brokerId}'s replicas of {@code partitions} (topic id → partition
     * indexes) go offline, their log directory having failed (KIP-858): for each of them the broker
     * leaves the ISR and, if it led, the partition gets another leader, as when the broker is fenced
     * ({@link #forUnusableBrokers}) but for these partitions only. Unknown topics or partitions are
     * skipped. Records are in topic-name, then partition order.
     */
    public List<PartitionChangeRecord> forOfflineReplicas(MetadataImage image, int brokerId, Map<java.util.UUID, Set<Integer>> partitions) {
        IntPredicate acceptable = acceptableLeaders(image, Set.of(brokerId), Set.of());
        List<PartitionChangeRecord> records = new ArrayList<>();
        for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
            Set<Integer> offline = partitions.get(topic.id());
            if (offline == null) {
                continue;
            }
            for (int partitionId : new java.util.TreeSet<>(offline)) {
                PartitionRegistration registration = topic.partition(partitionId);
                if (registration != null) {
                    leaveOnePartition(image, topic, partitionId, registration, List.of(brokerId), Set.of(), acceptable).ifPresent(records::add);
                }
            }
        }
        return records;
    }

    /**
     * The brokers leave one partition one after another in ascending id order, as Kafka's
     * controller fences brokers one at a time (so with ELR on the ELR is what the sequence of
     * single departures leaves, and with ELR off the last member kept is the highest id); the
     * steps are folded into one record from the original registration to the final one. Every
     * leaving broker is unacceptable as leader from the first step on.
     */
    private Optional<PartitionChangeRecord> leaveOnePartition(MetadataImage image, TopicImage topic, int partitionId, PartitionRegistration original,
                                                             List<Integer> leaving, Set<Integer> uncleanShutdown, IntPredicate acceptable) {
        boolean elr = elrEnabled(image);
        int minIsr = effectiveMinIsr(image, topic.name(), original.replicas().length);
        PartitionRegistration current = original;
        boolean leaderNamed = false;
        for (int broker : leaving) {
            boolean touched = (current.hasLeader() && current.leader() == broker) || current.inIsr(broker)
                || (elr && uncleanShutdown.contains(broker) && current.inElr(broker));
            if (!touched) {
                continue;
            }
            List<Integer> targetIsr = without(current.isr(), Set.of(broker));
            Optional<PartitionChangeRecord> step = new PartitionChangeBuilder(current, topic.id(), partitionId, acceptable, minIsr, elr)
                .setElection(electionAtFenceOrUnfence(image, topic.name())).setTargetIsr(targetIsr).setUncleanShutdownReplicas(uncleanShutdown).build();
            if (step.isPresent()) {
                leaderNamed |= step.get().leader() != PartitionChangeBuilder.NO_LEADER_CHANGE;
                current = current.merge(step.get());
            }
        }
        return folded(topic.id(), partitionId, original, current, leaderNamed);
    }

    /** One change from {@code original} to {@code target}; Leader named if any step named it. */
    private static Optional<PartitionChangeRecord> folded(java.util.UUID topicId, int partitionId, PartitionRegistration original,
                                                          PartitionRegistration target, boolean leaderNamed) {
        PartitionChangeRecord record = new PartitionChangeRecord().setTopicId(topicId).setPartitionId(partitionId);
        if (!java.util.Arrays.equals(original.isr(), target.isr())) {
            record.setIsr(PartitionRegistration.toList(target.isr()));
        }
        if (leaderNamed) {
            record.setLeader(target.leader());
        }
        if (!java.util.Arrays.equals(original.elr(), target.elr())) {
            record.setEligibleLeaderReplicas(PartitionRegistration.toList(target.elr()));
        }
        if (!java.util.Arrays.equals(original.lastKnownElr(), target.lastKnownElr())) {
            record.setLastKnownElr(PartitionRegistration.toList(target.lastKnownElr()));
        }
        if (original.leaderRecoveryState() != target.leaderRecoveryState()) {
            record.setLeaderRecoveryState(target.leaderRecoveryState());
        }
        // A step may complete a reassignment (PartitionChangeBuilder completes one on any change).
        if (!java.util.Arrays.equals(original.replicas(), target.replicas())) {
            record.setReplicas(PartitionRegistration.toList(target.replicas()));
        }
        if (!java.util.Arrays.equals(original.addingReplicas(), target.addingReplicas())) {
            record.setAddingReplicas(PartitionRegistration.toList(target.addingReplicas()));
        }
        if (!java.util.Arrays.equals(original.removingReplicas(), target.removingReplicas())) {
            record.setRemovingReplicas(PartitionRegistration.toList(target.removingReplicas()));
        }
        return PartitionChangeBuilder.isNoOp(record) ? Optional.empty() : Optional.of(record);
    }

    /**
     * The election a fence, controlled shutdown or unfence uses for {@code topic}: UNCLEAN when
     * the topic (or cluster default) enables {@code unclean.leader.election.enable}, else ONLINE.
     * As Kafka's generateLeaderAndIsrUpdates, so a partition whose ISR and ELR give no leader gets
     * any live replica at once instead of waiting for the periodic unclean pass.
     */
    private PartitionChangeBuilder.Election electionAtFenceOrUnfence(MetadataImage image, String topic) {
        return uncleanLeaderElectionEnabled(image, topic) ? PartitionChangeBuilder.Election.UNCLEAN : PartitionChangeBuilder.Election.ONLINE;
    }

    /** {@link #forUnusableBrokers(MetadataImage, Set, Set)} without unclean shutdowns. */
    public List<PartitionChangeRecord> forUnusableBrokers(MetadataImage image, Set<Integer> brokerIds) {
        return forUnusableBrokers(image, brokerIds, Set.of());
    }

    /**
     * The changes when {@code brokerIds} become unfenced: every partition without a leader gets
     * one if the builder finds a valid one now (an ISR member; with ELR on an ELR member or the
     * last known leader). The brokers count as unfenced unless {@code image} has them in
     * controlled shutdown. Records are in topic-name, then partition order.
     */
    public List<PartitionChangeRecord> forUnfencedBrokers(MetadataImage image, Set<Integer> brokerIds) {
        IntPredicate acceptable = acceptableLeaders(image, Set.of(), brokerIds);
        List<PartitionChangeRecord> records = new ArrayList<>();
        for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
            for (Map.Entry<Integer, PartitionRegistration> entry : new TreeMap<>(topic.partitions()).entrySet()) {
                PartitionRegistration partition = entry.getValue();
                PartitionChangeBuilder.Election election = electionAtFenceOrUnfence(image, topic.name());
                boolean mayLead = anyIn(partition.isr(), brokerIds) || anyIn(partition.elr(), brokerIds) || anyIn(partition.lastKnownElr(), brokerIds)
                    || (election == PartitionChangeBuilder.Election.UNCLEAN && anyIn(partition.replicas(), brokerIds));
                if (partition.hasLeader() || !mayLead) {
                    continue;
                }
                builder(image, topic, entry.getKey(), acceptable).setElection(election).build().filter(change -> change.leader() >= 0).ifPresent(records::add);
            }
        }
        return records;
    }

    /**
     * True if a broker registering with {@code previousBrokerEpoch} did not shut down cleanly:
     * a registration of it exists and its epoch is not the one the broker says it stopped with
     * (Kafka's rule: the broker sends the epoch it wrote at its clean shutdown, or -1).
     */
    public static boolean uncleanShutdown(MetadataImage image, int brokerId, long previousBrokerEpoch) {
        BrokerRegistration existing = image.brokers().get(brokerId);
        return existing != null && existing.epoch() != previousBrokerEpoch;
    }

    private static boolean anyIn(int[] values, Set<Integer> ids) {
        for (int value : values) {
            if (ids.contains(value)) {
                return true;
            }
        }
        return false;
    }

    private static List<Integer> without(int[] values, Set<Integer> removed) {
        List<Integer> kept = new ArrayList<>(values.length);
        for (int value : values) {
            if (!removed.contains(value)) {
                kept.add(value);
            }
        }
        return kept;
    }
}
