package io.strata.server.replica;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.protocol.ApiMessage;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which replicas the leader offers a consumer (Kafka's findPreferredReadReplica): ISR members whose
 * log holds the fetch offset, reachable on the client's listener; never the leader itself.
 */
class PreferredReadReplicaTest {
    private static final int LEADER = 1;
    private static final int FOLLOWER = 2;
    private static final int OTHER = 3;
    private static final String LISTENER = "PLAINTEXT";
    private static final TopicPartition TP = new TopicPartition("racked", 0);
    private static final UUID TOPIC_ID = UUID.randomUUID();
    private final RackAwareReplicaSelector selector = new RackAwareReplicaSelector();

    @TempDir
    Path dataDir;
    private LogManager logManager;
    private FakeReplicaContext context;
    private UnifiedLog log;
    private Partition partition;

    @BeforeEach
    void start() throws Exception {
        context = new FakeReplicaContext(LEADER);
        context.brokerEpochs.put(FOLLOWER, 10L);
        context.brokerEpochs.put(OTHER, 20L);
        logManager = new LogManager(new LogManager.Settings(List.of(dataDir), 1, 300_000L, Long.MAX_VALUE, 0L, 86_400_000L, 600_000L, false),
            context.time);
        logManager.startup(topic -> LogConfig.defaults());
        log = logManager.getOrCreateLog(TP, Optional.of(TOPIC_ID), LogConfig.defaults());
        partition = new Partition(TP, TOPIC_ID, log, context);
    }

    @AfterEach
    void stop() throws Exception {
        logManager.close();
    }

    /** Leads with {@code isr} committed and ten records in the log. */
    private void leadWithIsr(int... isr) throws Exception {
        partition.makeLeader(PartitionStateTest.registration(new int[] {LEADER, FOLLOWER, OTHER}, isr, LEADER, 1, 1), context.time.milliseconds());
        partition.appendRecordsToLeader(PartitionStateTest.records(10), UnifiedLog.AppendOrigin.CLIENT);
    }

    private void fetched(int replica, long offset, long brokerEpoch) {
        partition.updateFollowerFetchState(replica, offset, 0L, context.time.milliseconds(), log.logEndOffset(), brokerEpoch);
    }

    private static MetadataImage image(boolean followerFenced) {
        List<ApiMessage> records = new ArrayList<>();
        records.add(broker(LEADER, "r0", false));
        records.add(broker(FOLLOWER, "r2", followerFenced));
        records.add(broker(OTHER, "r2", false));
        return MetadataImage.EMPTY.apply(records, records.size() - 1);
    }

    private static RegisterBrokerRecord broker(int id, String rack, boolean fenced) {
        RegisterBrokerRecord record = new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(10L * id).setIncarnationId(new UUID(id, id))
            .setRack(rack).setFenced(fenced);
        record.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName(LISTENER).setHost("127.0.0.1").setPort(9000 + id)
            .setSecurityProtocol((short) 0));
        return record;
    }

    private int find(String rack, long fetchOffset, MetadataImage image) {
        return PreferredReadReplica.find(selector, partition, new ClientMetadata(rack, "c", LISTENER), fetchOffset, image,
            context.time.milliseconds());
    }

    @Test
    void theMostCaughtUpInSyncReplicaOnTheClientsRackIsPreferred() throws Exception {
        leadWithIsr(LEADER, FOLLOWER, OTHER);
        fetched(FOLLOWER, 10, 10L);
        fetched(OTHER, 8, 20L);
        assertThat(find("r2", 5, image(false))).isEqualTo(FOLLOWER);
    }

    @Test
    void aReplicaWithoutTheFetchOffsetOrOutOfTheIsrIsNotOffered() throws Exception {
        leadWithIsr(LEADER, OTHER);
        fetched(FOLLOWER, 10, 10L); // caught up, but not (yet) in the committed ISR
        fetched(OTHER, 4, 20L);
        assertThat(find("r2", 5, image(false))).as("OTHER's log ends below the fetch offset").isEqualTo(PreferredReadReplica.NONE);
        assertThat(find("r2", 4, image(false))).isEqualTo(OTHER);
    }

    @Test
    void aFencedChoiceOrTheLeaderItselfMeansNoPreferredReplica() throws Exception {
        leadWithIsr(LEADER, FOLLOWER, OTHER);
        fetched(FOLLOWER, 10, 10L);
        fetched(OTHER, 2, 20L);
        assertThat(find("r2", 5, image(true))).as("the chosen follower is fenced").isEqualTo(PreferredReadReplica.NONE);
        assertThat(find("r0", 5, image(false))).as("the leader is on the client's rack").isEqualTo(PreferredReadReplica.NONE);
        assertThat(find("", 5, image(false))).isEqualTo(PreferredReadReplica.NONE);
    }
}
