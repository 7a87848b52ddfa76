package io.strata.metadata;

import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ElectLeadersRequestData;
import io.strata.protocol.message.ElectLeadersResponseData;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * Leader elections the controller runs on request or on its own schedule, over a
 * {@link MetadataImage}: ElectLeaders (key 43, KIP-460), the automatic preferred-leader
 * rebalance ({@code auto.leader.rebalance.enable}) and the periodic unclean election of
 * leaderless partitions whose topic allows it ({@code unclean.leader.election.enable}). Each
 * method reads an image and returns the records to write (made by {@link PartitionChangeBuilder})
 * and the answer; nothing is applied here. Immutable and thread-safe; the controller calls it
 * on its thread.
 *
 * <p>ElectLeaders per partition, as Kafka 4.4's ReplicationControlManager.electLeader:
 * <ul>
 *   <li>unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION;</li>
 *   <li>PREFERRED and the first replica leads, or UNCLEAN and a leader exists:
 *       ELECTION_NOT_NEEDED;</li>
 *   <li>otherwise the builder elects (PREFERRED: the first replica if in the ISR and usable,
 *       else keeps a valid current leader, else another ISR member; UNCLEAN: ISR, then ELR /
 *       last known leader, then any usable replica with LeaderRecoveryState RECOVERING); no
 *       change: PREFERRED_LEADER_NOT_AVAILABLE (PREFERRED) or ELIGIBLE_LEADERS_NOT_AVAILABLE
 *       (UNCLEAN); a change: NONE.</li>
 * </ul>
 * A null topic list means every partition of every topic, and then ELECTION_NOT_NEEDED
 * partitions are left out of the answer. "Usable" is {@link ReplicationControl#acceptableLeaders}:
 * registered, unfenced, not in controlled shutdown.
 */
public final class LeaderElections {
    /** ElectLeaders' ElectionType values (Kafka's ElectionType). */
    public static final byte PREFERRED = 0;
    public static final byte UNCLEAN = 1;
    /**
     * Kafka's MAX_ELECTIONS_PER_IMBALANCE: the most preferred or unclean elections one periodic
     * pass writes (one batch stays bounded); a pass that stops there asks to run again at once.
     */
    public static final int MAX_ELECTIONS_PER_PASS = 1000;

    private final ReplicationControl replication;

    public LeaderElections(ReplicationControl replication) {
        this.replication = replication;
    }

    /** Records to write; {@code unclean} holds the partitions elected uncleanly (to log and count); {@code more} asks for another pass at once. */
    public record Pass(List<ApiMessage> records, List<String> unclean, boolean more) {
    }

    /** The answer to ElectLeaders and its records; {@code unclean} names the partitions elected uncleanly. */
    public record Elected(List<ApiMessage> records, ElectLeadersResponseData response, List<String> unclean) {
    }

    /**
     * ElectLeaders. An election type other than 0 or 1 fails the whole request (Kafka answers
     * INVALID_REQUEST at the top level and for every named partition).
     *
     * @throws IllegalArgumentException for an unknown election type
     */
    public Elected electLeaders(MetadataImage image, ElectLeadersRequestData request) {
        byte type = request.electionType();
        if (type != PREFERRED && type != UNCLEAN) {
            throw new IllegalArgumentException("Unknown election type " + type);
        }
        List<ApiMessage> records = new ArrayList<>();
        List<String> unclean = new ArrayList<>();
        ElectLeadersResponseData response = new ElectLeadersResponseData();
        if (request.topicPartitions() == null) {
            for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
                ElectLeadersResponseData.ReplicaElectionResult result = new ElectLeadersResponseData.ReplicaElectionResult().setTopic(topic.name());
                response.replicaElectionResults().add(result);
                for (int partitionId : new TreeMap<>(topic.partitions()).keySet()) {
                    ErrorCode error = electLeader(image, topic.name(), partitionId, type, records, unclean);
                    if (error != ErrorCode.ELECTION_NOT_NEEDED) {
                        result.partitionResult().add(partitionResult(partitionId, error));
                    }
                }
            }
        } else {
            for (ElectLeadersRequestData.TopicPartitions topic : request.topicPartitions()) {
                ElectLeadersResponseData.ReplicaElectionResult result = new ElectLeadersResponseData.ReplicaElectionResult().setTopic(topic.topic());
                response.replicaElectionResults().add(result);
                for (int partitionId : topic.partitions()) {
                    result.partitionResult().add(partitionResult(partitionId, electLeader(image, topic.topic(), partitionId, type, records, unclean)));
                }
            }
        }
        return new Elected(records, response, unclean);
    }

    private static ElectLeadersResponseData.PartitionResult partitionResult(int partitionId, ErrorCode error) {
        return new ElectLeadersResponseData.PartitionResult().setPartitionId(partitionId).setErrorCode(error.code())
            .setErrorMessage(message(error));
    }

    /** Kafka's default messages of these errors. */
    private static String message(ErrorCode error) {
        return switch (error) {
            case NONE -> null;
            case UNKNOWN_TOPIC_OR_PARTITION -> "This server does not host this topic-partition.";
            case ELECTION_NOT_NEEDED -> "Leader election not needed for topic partition.";
            case PREFERRED_LEADER_NOT_AVAILABLE -> "The preferred leader was not available.";
            case ELIGIBLE_LEADERS_NOT_AVAILABLE -> "Eligible topic partition leaders are not available.";
            default -> error.name();
        };
    }

    /**
     * One partition's election; adds its record to {@code records} (a partition named twice is
     * elected against the image as it was, so the second gets the same answer and a redundant
     * record, harmless on replay, as in Kafka).
     */
    private ErrorCode electLeader(MetadataImage image, String topicName, int partitionId, byte type, List<ApiMessage> records, List<String> unclean) {
        TopicImage topic = image.topic(topicName);
        PartitionRegistration partition = topic == null ? null : topic.partitions().get(partitionId);
        if (partition == null) {
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        }
        boolean preferredLeads = partition.replicas().length > 0 && partition.leader() == partition.replicas()[0];
        if ((type == PREFERRED && preferredLeads) || (type == UNCLEAN && partition.hasLeader())) {
            return ErrorCode.ELECTION_NOT_NEEDED;
        }
        PartitionChangeBuilder.Election election = type == PREFERRED ? PartitionChangeBuilder.Election.PREFERRED : PartitionChangeBuilder.Election.UNCLEAN;
        Optional<PartitionChangeRecord> change = replication.builder(image, topic, partitionId, usable(image)).setElection(election).build();
        if (change.isEmpty()) {
            return type == PREFERRED ? ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE : ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE;
        }
        records.add(change.get());
        if (isUnclean(partition, change.get())) {
            unclean.add(topicName + "-" + partitionId);
        }
        return ErrorCode.NONE;
    }

    /**
     * How many of {@code records} elect a leader from the partition's ELR in {@code before} (Kafka's
     * electionFromElr: the new leader was an eligible leader replica, not in the ISR). A partition
     * changed twice in one batch is judged against {@code before} both times.
     */
    static int electionsFromElr(MetadataImage before, List<? extends ApiMessage> records) {
        int elected = 0;
        for (ApiMessage record : records) {
            if (record instanceof PartitionChangeRecord change && change.leader() >= 0) {
                TopicImage topic = before.topicsById().get(change.topicId());
                PartitionRegistration partition = topic == null ? null : topic.partitions().get(change.partitionId());
                if (partition != null && partition.leader() != change.leader() && partition.inElr(change.leader())) {
                    elected++;
                }
            }
        }
        return elected;
    }

    /** An election that makes a partition RECOVERING elected a leader that was not known to hold every committed record. */
    static boolean isUnclean(PartitionRegistration before, PartitionChangeRecord change) {
        return change.leader() >= 0 && change.leaderRecoveryState() == PartitionRegistration.RECOVERING
            && before.leaderRecoveryState() != PartitionRegistration.RECOVERING;
    }

    private static IntPredicate usable(MetadataImage image) {
        return ReplicationControl.acceptableLeaders(image, Set.of(), Set.of());
    }

    /**
     * One pass of the automatic rebalance (Kafka's maybeBalancePartitionLeaders): a preferred
     * election for every partition whose leader is not its first replica, in topic-name then
     * partition order; only partitions where the builder moves the leader get a record (the
     * preferred replica is in the ISR and usable). At most {@link #MAX_ELECTIONS_PER_PASS}
     * records; {@code more} is true when the pass stopped there. Kafka 4 has no
     * {@code leader.imbalance.per.broker.percentage} (KAFKA-18743): every imbalanced partition
     * is considered on each pass.
     */
    public Pass balancePartitionLeaders(MetadataImage image) {
        List<ApiMessage> records = new ArrayList<>();
        IntPredicate usable = usable(image);
        for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
            for (Map.Entry<Integer, PartitionRegistration> entry : new TreeMap<>(topic.partitions()).entrySet()) {
                PartitionRegistration partition = entry.getValue();
                if (partition.replicas().length == 0 || partition.leader() == partition.replicas()[0]) {
                    continue;
                }
                if (records.size() >= MAX_ELECTIONS_PER_PASS) {
                    return new Pass(records, List.of(), true);
                }
                replication.builder(image, topic, entry.getKey(), usable).setElection(PartitionChangeBuilder.Election.PREFERRED).build()
                    .ifPresent(records::add);
            }
        }
        return new Pass(records, List.of(), false);
    }

    /** True if some partition's leader is not its first replica (Kafka's arePartitionLeadersImbalanced). */
    public static boolean imbalanced(MetadataImage image) {
        for (TopicImage topic : image.topicsByName().values()) {
            for (PartitionRegistration partition : topic.partitions().values()) {
                if (partition.replicas().length > 0 && partition.leader() != partition.replicas()[0]) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * One pass of the periodic unclean election (Kafka's maybeElectUncleanLeaders): every
     * partition without a leader whose topic has {@code unclean.leader.election.enable} gets an
     * UNCLEAN election (a clean one if an ISR / ELR member can lead now). At most
     * {@link #MAX_ELECTIONS_PER_PASS} records; {@code more} when the pass stopped there.
     */
    public Pass electUncleanLeaders(MetadataImage image) {
        List<ApiMessage> records = new ArrayList<>();
        List<String> unclean = new ArrayList<>();
        IntPredicate usable = usable(image);
        for (TopicImage topic : new TreeMap<>(image.topicsByName()).values()) {
            if (!replication.uncleanLeaderElectionEnabled(image, topic.name())) {
                continue;
            }
            for (Map.Entry<Integer, PartitionRegistration> entry : new TreeMap<>(topic.partitions()).entrySet()) {
                PartitionRegistration partition = entry.getValue();
                if (partition.hasLeader()) {
                    continue;
                }
                if (records.size() >= MAX_ELECTIONS_PER_PASS) {
                    return new Pass(records, unclean, true);
                }
                Optional<PartitionChangeRecord> change = replication.builder(image, topic, entry.getKey(), usable)
                    .setElection(PartitionChangeBuilder.Election.UNCLEAN).build();
                if (change.isPresent() && change.get().leader() >= 0) {
                    records.add(change.get());
                    if (isUnclean(partition, change.get())) {
                        unclean.add(topic.name() + "-" + entry.getKey());
                    }
                }
            }
        }
        return new Pass(records, unclean, false);
    }
}
