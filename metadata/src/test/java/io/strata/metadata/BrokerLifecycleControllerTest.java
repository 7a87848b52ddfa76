package io.strata.metadata;

import io.strata.common.BackgroundErrors;
import io.strata.common.MockTime;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.BrokerHeartbeatRequestData;
import io.strata.protocol.message.BrokerHeartbeatResponseData;
import io.strata.protocol.message.BrokerRegistrationRequestData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.raft.FileQuorumStateStore;
import io.strata.raft.FileRaftLog;
import io.strata.raft.RaftClient;
import io.strata.raft.RaftConfig;
import io.strata.raft.RaftNode;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The controller's side of broker lifecycles, on a real one-voter quorum with a fake clock:
 * registration fenced until caught up, unfencing at the registration's offset, session expiry
 * fencing a silent broker and taking its RF=1 partitions offline, their return when it comes
 * back, controlled shutdown, stale epochs.
 */
class BrokerLifecycleControllerTest {
    private static final long SESSION_MS = 9_000;

    @TempDir
    Path dir;

    private final MockTime time = new MockTime();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private QuorumController controller;
    private MetadataLoader loader;
    private RaftNode quorum;
    private UnifiedLog log;

    @BeforeEach
    void start() throws Exception {
        Path metadataDir = dir.resolve("__cluster_metadata-0");
        log = UnifiedLog.load(metadataDir, new TopicPartition("__cluster_metadata", 0),
            LogConfig.of(Map.of(), Map.of(LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1")), time, scheduler,
            new UnifiedLog.LoadParams(0, 0, false, 86_400_000L, false));
        loader = new MetadataLoader(1, new BackgroundErrors());
        controller = new QuorumController(new ControllerSettings(1, 1, (short) 1, true, Map.of(), "cluster", SESSION_MS), Map.of(), time,
            loader::whenApplied);
        quorum = new RaftNode(1, Set.of(1), "cluster", RaftConfig.DEFAULTS, new FileRaftLog(log), new FileQuorumStateStore(metadataDir),
            (destination, api, version, request) -> CompletableFuture.failedFuture(new IllegalStateException("one voter")), time, new Random(1),
            new RaftClient.Listener() { }, new MetadataCommitListener(loader, controller));
        controller.start(quorum);
        waitUntil(controller::isActive, "the controller becomes active");
    }

    @AfterEach
    void stop() throws Exception {
        quorum.close();
        controller.close();
        loader.close();
        log.close();
        scheduler.shutdownNow();
    }

    private static void waitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(2);
        }
    }

    private long register(int id) throws Exception {
        BrokerRegistrationRequestData request = new BrokerRegistrationRequestData().setBrokerId(id).setClusterId("cluster")
            .setIncarnationId(UUID.randomUUID());
        request.listeners().add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("127.0.0.1").setPort(9000 + id));
        var response = controller.registerBroker(request).get(10, TimeUnit.SECONDS);
        assertThat(response.errorCode()).isZero();
        return response.brokerEpoch();
    }

    private BrokerHeartbeatResponseData heartbeat(int id, long epoch, long offset, boolean shutDown) throws Exception {
        return controller.brokerHeartbeat(new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(epoch).setCurrentMetadataOffset(offset)
            .setWantShutDown(shutDown)).get(10, TimeUnit.SECONDS);
    }

    private PartitionRegistration partition(String topic) {
        return loader.image().topic(topic).partition(0);
    }

    @Test
    void aBrokerIsUnfencedOnlyOnceItHasAppliedItsOwnRegistration() throws Exception {
        long epoch = register(2);
        assertThat(loader.image().brokers().get(2).fenced()).as("registered fenced").isTrue();
        BrokerHeartbeatResponseData behind = heartbeat(2, epoch, epoch - 1, false);
        assertThat(behind.isCaughtUp()).isFalse();
        assertThat(behind.isFenced()).isTrue();
        BrokerHeartbeatResponseData caughtUp = heartbeat(2, epoch, epoch, false);
        assertThat(caughtUp.isCaughtUp()).isTrue();
        assertThat(caughtUp.isFenced()).isFalse();
        assertThat(loader.image().brokers().get(2).fenced()).isFalse();
        assertThat(heartbeat(2, epoch - 1, epoch, false).errorCode()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH.code());
        assertThat(heartbeat(7, 1, epoch, false).errorCode()).isEqualTo(ErrorCode.BROKER_ID_NOT_REGISTERED.code());
    }

    @Test
    void aSilentBrokerIsFencedAfterTheSessionTimeoutAndItsPartitionsComeBackWithIt() throws Exception {
        long epoch2 = register(2);
        heartbeat(2, epoch2, epoch2, false);
        long epoch3 = register(3);
        heartbeat(3, epoch3, epoch3, false);
        var created = controller.createTopics(List.of(new CreateTopicsRequestData.CreatableTopic().setName("on-2").setNumPartitions(-1)
            .setReplicationFactor((short) -1).setAssignments(new java.util.ArrayList<>(List.of(
                new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0).setBrokerIds(List.of(2)))))), false)
            .get(10, TimeUnit.SECONDS);
        assertThat(created.get(0).errorCode()).isZero();
        assertThat(partition("on-2").leader()).isEqualTo(2);
        int epochBefore = partition("on-2").leaderEpoch();

        // Broker 3 keeps heartbeating; broker 2 goes silent past its session.
        time.advance(SESSION_MS / 2);
        heartbeat(3, epoch3, loader.nextOffset() - 1, false);
        time.advance(SESSION_MS / 2 + 1);
        waitUntil(() -> loader.image().brokers().get(2).fenced(), "broker 2 is fenced");
        assertThat(loader.image().brokers().get(3).fenced()).as("a broker that heartbeated stays").isFalse();
        assertThat(partition("on-2").leader()).as("its RF=1 partition is offline").isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(partition("on-2").isr()).as("the last ISR member stays in the ISR").containsExactly(2);

        // It comes back (same registration): unfenced, its partition is led by it again with a new epoch.
        BrokerHeartbeatResponseData back = heartbeat(2, epoch2, loader.nextOffset() - 1, false);
        assertThat(back.isFenced()).isFalse();
        waitUntil(() -> partition("on-2").leader() == 2, "broker 2 leads its partition again");
        assertThat(partition("on-2").leaderEpoch()).isGreaterThan(epochBefore);
    }

    @Test
    void aControlledShutdownMovesLeadershipAwayAndFencesTheBroker() throws Exception {
        long epoch = register(2);
        heartbeat(2, epoch, epoch, false);
        controller.createTopics(List.of(new CreateTopicsRequestData.CreatableTopic().setName("t").setNumPartitions(1)
            .setReplicationFactor((short) 1)), false).get(10, TimeUnit.SECONDS);
        assertThat(partition("t").leader()).isEqualTo(2);
        BrokerHeartbeatResponseData response = heartbeat(2, epoch, loader.nextOffset() - 1, true);
        assertThat(response.shouldShutDown()).isTrue();
        assertThat(partition("t").leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(loader.image().brokers().get(2).fenced()).isTrue();
        // A new start of the broker: registered fenced, unfenced once caught up, and its partition led by it again.
        long restarted = register(2);
        assertThat(restarted).isGreaterThan(epoch);
        assertThat(heartbeat(2, restarted, restarted, false).isFenced()).isFalse();
        waitUntil(() -> partition("t").leader() == 2, "the restarted broker leads its partition again");
    }
    private void createOn(String topic, List<Integer> replicas) throws Exception {
        var created = controller.createTopics(List.of(new CreateTopicsRequestData.CreatableTopic().setName(topic).setNumPartitions(-1)
            .setReplicationFactor((short) -1).setAssignments(new java.util.ArrayList<>(List.of(
                new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0).setBrokerIds(replicas))))), false)
            .get(10, TimeUnit.SECONDS);
        assertThat(created.get(0).errorCode()).isZero();
    }

    @Test
    void anUnregisteredLiveBrokerLeavesIsrsAndLeadershipsAndMayRegisterAgain() throws Exception {
        long epoch2 = register(2);
        heartbeat(2, epoch2, epoch2, false);
        long epoch3 = register(3);
        heartbeat(3, epoch3, epoch3, false);
        createOn("on-2-and-3", List.of(2, 3));
        createOn("on-2", List.of(2));
        assertThat(partition("on-2-and-3").leader()).isEqualTo(2);
        int leaderEpochBefore = partition("on-2-and-3").leaderEpoch();

        var response = controller.unregisterBroker(2).get(10, TimeUnit.SECONDS);
        assertThat(response.errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(loader.image().brokers()).as("an unfenced broker may be unregistered").doesNotContainKey(2).containsKey(3);
        assertThat(partition("on-2-and-3").leader()).as("the other ISR member leads").isEqualTo(3);
        assertThat(partition("on-2-and-3").isr()).containsExactly(3);
        assertThat(partition("on-2-and-3").leaderEpoch()).isGreaterThan(leaderEpochBefore);
        assertThat(partition("on-2").leader()).as("an RF=1 partition goes offline").isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(partition("on-2").isr()).as("the last ISR member stays in the ISR").containsExactly(2);

        // Its old registration is gone: heartbeats and a second unregistration find no broker 2.
        assertThat(heartbeat(2, epoch2, loader.nextOffset() - 1, false).errorCode()).isEqualTo(ErrorCode.BROKER_ID_NOT_REGISTERED.code());
        var again = controller.unregisterBroker(2).get(10, TimeUnit.SECONDS);
        assertThat(again.errorCode()).isEqualTo(ErrorCode.BROKER_ID_NOT_REGISTERED.code());
        assertThat(again.errorMessage()).isEqualTo("Broker ID 2 is not currently registered");
        // A new start registers it again; once unfenced it leads its RF=1 partition again.
        long restarted = register(2);
        assertThat(restarted).isGreaterThan(epoch2);
        assertThat(heartbeat(2, restarted, restarted, false).isFenced()).isFalse();
        waitUntil(() -> partition("on-2").leader() == 2, "the re-registered broker leads its partition again");
    }

    @Test
    void unregisteringAnUnknownIdIsBrokerIdNotRegisteredAndAFencedBrokerMayBeUnregistered() throws Exception {
        // The new leader's own first batch may still be committing: measure once the image holds everything committed.
        waitUntil(() -> quorum.highWatermark() > 0 && loader.nextOffset() >= quorum.highWatermark(), "the image caught up with the quorum");
        long offsetBefore = loader.nextOffset();
        var unknown = controller.unregisterBroker(7).get(10, TimeUnit.SECONDS);
        assertThat(unknown.errorCode()).isEqualTo(ErrorCode.BROKER_ID_NOT_REGISTERED.code());
        assertThat(loader.nextOffset()).as("nothing written").isEqualTo(offsetBefore);

        register(4);
        assertThat(loader.image().brokers().get(4).fenced()).isTrue();
        assertThat(controller.unregisterBroker(4).get(10, TimeUnit.SECONDS).errorCode()).isEqualTo(ErrorCode.NONE.code());
        assertThat(loader.image().brokers()).doesNotContainKey(4);
    }
}
