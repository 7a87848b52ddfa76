package io.strata.server.replica;

import io.strata.metadata.ConfigResource;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.ReplicationControl;
import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.FenceBrokerRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.metadata.record.UnfenceBrokerRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.message.AlterPartitionRequestData;
import io.strata.protocol.message.AlterPartitionResponseData;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The simulated controller: the metadata module's {@link ReplicationControl} over a
 * {@link MetadataImage} it advances itself (one record batch per change, applied in log order), with
 * heartbeats and session-timeout fencing as plain events. Every new image goes to
 * {@code publisher}, which delivers it to each broker in log order with delays. With
 * {@code unclean} the topic enables {@code unclean.leader.election.enable}: the controller then
 * elects any live replica when the ISR and ELR have none, and {@code onUncleanElection} hears of
 * each such election (the change that sets {@code LeaderRecoveryState.RECOVERING}). Not
 * thread-safe: the simulation's single thread drives it.
 */
final class SimController {
    static final String TOPIC = "sim";
    static final UUID TOPIC_ID = new UUID(5, 5);
    /** AlterPartition version the brokers send (NewIsrWithEpochs, KIP-903). */
    static final short ALTER_PARTITION_VERSION = 3;

    private final ReplicationControl control = new ReplicationControl(Map.of());
    private final Consumer<MetadataImage> publisher;
    private final Consumer<PartitionRegistration> onUncleanElection;
    private final long sessionTimeoutMs;
    private MetadataImage image = MetadataImage.EMPTY;
    private final Map<Integer, Long> lastHeartbeatMs = new HashMap<>();
    private long nextBrokerEpoch = 1;

    SimController(int[] replicas, int minIsr, boolean elr, boolean unclean, long sessionTimeoutMs, Consumer<MetadataImage> publisher,
                  Consumer<PartitionRegistration> onUncleanElection) {
        this.publisher = publisher;
        this.onUncleanElection = onUncleanElection;
        this.sessionTimeoutMs = sessionTimeoutMs;
        List<ApiMessage> records = new ArrayList<>();
        if (elr) {
            records.add(new FeatureLevelRecord().setName(ReplicationControl.ELR_FEATURE).setFeatureLevel((short) 1));
        }
        for (int id : replicas) {
            records.add(registration(id, nextBrokerEpoch++, false));
        }
        records.add(new TopicRecord().setName(TOPIC).setTopicId(TOPIC_ID));
        records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName(TOPIC).setName("min.insync.replicas")
            .setValue(Integer.toString(minIsr)));
        if (unclean) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName(TOPIC).setName("unclean.leader.election.enable")
                .setValue("true"));
        }
        PartitionRecord partition = new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(0).setLeader(replicas[0]).setLeaderEpoch(0)
            .setPartitionEpoch(0);
        for (int id : replicas) {
            partition.replicas().add(id);
            partition.isr().add(id);
        }
        records.add(partition);
        commit(records);
    }

    private static RegisterBrokerRecord registration(int id, long epoch, boolean fenced) {
        RegisterBrokerRecord record = new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(epoch).setIncarnationId(new UUID(id, epoch))
            .setFenced(fenced);
        record.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("sim" + id).setPort(9092)
            .setSecurityProtocol((short) 0));
        return record;
    }

    MetadataImage image() {
        return image;
    }

    PartitionRegistration partition() {
        return image.topic(TOPIC).partition(0);
    }

    private void commit(List<? extends ApiMessage> records) {
        if (records.isEmpty()) {
            return;
        }
        PartitionRegistration before = image.topic(TOPIC) == null ? null : partition();
        image = image.apply(new ArrayList<>(records), image.offset() + records.size());
        PartitionRegistration after = partition();
        // An unclean election sets RECOVERING; a second one before the leader recovered leaves it so.
        if (before != null && after.leaderEpoch() > before.leaderEpoch() && after.leader() >= 0
            && after.leaderRecoveryState() == PartitionRegistration.RECOVERING) {
            onUncleanElection.accept(after);
        }
        publisher.accept(image);
    }

    /** A broker's AlterPartition, as the controller's handler answers it (the records commit before the answer). */
    AlterPartitionResponseData.PartitionData alterPartition(int brokerId, long brokerEpoch, AlterPartitionRequestData.PartitionData change) {
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(brokerId).setBrokerEpoch(brokerEpoch);
        request.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(TOPIC_ID).setPartitions(new ArrayList<>(List.of(change))));
        ReplicationControl.Result<AlterPartitionResponseData> result = control.alterPartition(image, request, ALTER_PARTITION_VERSION);
        commit(result.records());
        AlterPartitionResponseData response = result.response();
        if (response.errorCode() != 0) {
            return new AlterPartitionResponseData.PartitionData().setPartitionIndex(0).setErrorCode(response.errorCode());
        }
        return response.topics().get(0).partitions().get(0);
    }

    /** A heartbeat from a registered broker at its current epoch: a fenced one is unfenced (it caught up with the log at once here). */
    void heartbeat(int brokerId, long brokerEpoch, long nowMs) {
        var broker = image.brokers().get(brokerId);
        if (broker == null || broker.epoch() != brokerEpoch) {
            return;
        }
        lastHeartbeatMs.put(brokerId, nowMs);
        if (broker.fenced()) {
            List<ApiMessage> records = new ArrayList<>();
            records.add(new UnfenceBrokerRecord().setBrokerId(brokerId).setBrokerEpoch(brokerEpoch));
            MetadataImage unfenced = image.apply(List.of(records.get(0)), image.offset() + 1);
            records.addAll(control.forUnfencedBrokers(unfenced, Set.of(brokerId)));
            commit(records);
        }
    }

    /** Fences every unfenced broker whose last heartbeat is older than the session timeout. */
    void checkSessions(long nowMs) {
        for (var broker : new ArrayList<>(image.brokers().values())) {
            long last = lastHeartbeatMs.getOrDefault(broker.id(), 0L);
            if (!broker.fenced() && nowMs - last > sessionTimeoutMs) {
                fence(broker.id(), false);
            }
        }
    }

    private void fence(int brokerId, boolean uncleanShutdown) {
        var broker = image.brokers().get(brokerId);
        List<ApiMessage> records = new ArrayList<>(control.forUnusableBrokers(image, Set.of(brokerId),
            uncleanShutdown ? Set.of(brokerId) : Set.of()));
        records.add(new FenceBrokerRecord().setBrokerId(brokerId).setBrokerEpoch(broker.epoch()));
        commit(records);
    }

    /**
     * A restarted broker registers with a new epoch, fenced. It never shut down cleanly (it
     * crashed), so it also leaves every ELR (KAFKA-15586). @return the new broker epoch
     */
    long register(int brokerId) {
        long epoch = nextBrokerEpoch++;
        List<ApiMessage> records = new ArrayList<>(control.forUnusableBrokers(image, Set.of(brokerId), Set.of(brokerId)));
        records.add(registration(brokerId, epoch, true));
        commit(records);
        return epoch;
    }

    long brokerEpoch(int brokerId) {
        return image.brokers().get(brokerId).epoch();
    }
}
