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
 * The dead-broker fast path ({@code strata.broker.disconnect.fence.ms}, a Strata addition) in the
 * controller, on a real one-voter quorum with a fake clock: a broker whose heartbeat connection
 * closed is fenced after the grace, with its partitions moved as on a session expiry; one that
 * heartbeats again over a new connection is not.
 */
class DisconnectFencingControllerTest {
    private static final long SESSION_MS = 9_000;
    private static final long GRACE_MS = 1_000;

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
        open();
    }

    /** Opens the log, the loader, the controller and the one-voter quorum over {@code dir} (again after {@link #closeAll}). */
    private void open() throws Exception {
        Path metadataDir = dir.resolve("__cluster_metadata-0");
        log = UnifiedLog.load(metadataDir, new TopicPartition("__cluster_metadata", 0),
            LogConfig.of(Map.of(), Map.of(LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1")), time, scheduler,
            new UnifiedLog.LoadParams(0, 0, false, 86_400_000L, false));
        loader = new MetadataLoader(1, new BackgroundErrors());
        controller = new QuorumController(new ControllerSettings(1, 1, (short) 1, true, Map.of(), "cluster", SESSION_MS, 0, GRACE_MS), Map.of(), time,
            loader::whenApplied);
        quorum = new RaftNode(1, Set.of(1), "cluster", RaftConfig.DEFAULTS, new FileRaftLog(log), new FileQuorumStateStore(metadataDir),
            (destination, api, version, request) -> CompletableFuture.failedFuture(new IllegalStateException("one voter")), time, new Random(1),
            new RaftClient.Listener() { }, new MetadataCommitListener(loader, controller));
        controller.start(quorum);
        waitUntil(controller::isActive, "the controller becomes active");
    }

    @AfterEach
    void stop() throws Exception {
        closeAll();
        scheduler.shutdownNow();
    }

    private void closeAll() throws Exception {
        quorum.close();
        controller.close();
        loader.close();
        log.close();
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

    private BrokerHeartbeatResponseData heartbeat(int id, long epoch, String connection) throws Exception {
        return controller.brokerHeartbeat(new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(epoch)
            .setCurrentMetadataOffset(loader.nextOffset() - 1), connection).get(10, TimeUnit.SECONDS);
    }

    private PartitionRegistration partition(String topic) {
        return loader.image().topic(topic).partition(0);
    }

    @Test
    void aBrokerWhoseHeartbeatConnectionClosedIsFencedAfterTheGraceAndOneThatReconnectsIsNot() throws Exception {
        long epoch2 = register(2);
        assertThat(heartbeat(2, epoch2, "conn-2").isFenced()).isFalse();
        long epoch3 = register(3);
        assertThat(heartbeat(3, epoch3, "conn-3").isFenced()).isFalse();
        var created = controller.createTopics(List.of(new CreateTopicsRequestData.CreatableTopic().setName("on-2").setNumPartitions(-1)
            .setReplicationFactor((short) -1).setAssignments(new java.util.ArrayList<>(List.of(
                new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0).setBrokerIds(List.of(2, 3)))))), false)
            .get(10, TimeUnit.SECONDS);
        assertThat(created.get(0).errorCode()).isZero();
        assertThat(partition("on-2").leader()).isEqualTo(2);

        long closedAtMs = time.milliseconds();
        // Both connections close; broker 3 heartbeats again over a new one (which also runs after both closes: one thread).
        controller.connectionClosed("conn-2");
        controller.connectionClosed("conn-3");
        assertThat(heartbeat(3, epoch3, "conn-4").isFenced()).isFalse();
        time.advance(GRACE_MS);
        assertThat(heartbeat(3, epoch3, "conn-4").isFenced()).as("a heartbeat over the new connection keeps it").isFalse();
        assertThat(loader.image().brokers().get(2).fenced()).isFalse();
        time.advance(1);
        waitUntil(() -> loader.image().brokers().get(2).fenced(), "broker 2 is fenced one grace after its connection closed");
        assertThat(loader.image().brokers().get(3).fenced()).as("a broker that heartbeated over a new connection stays").isFalse();
        assertThat(partition("on-2").leader()).as("leadership moves as on a session expiry").isEqualTo(3);
        assertThat(partition("on-2").isr()).containsExactly(3);
        assertThat(time.milliseconds() - closedAtMs).as("long before the session would have ended").isLessThan(SESSION_MS);

        assertThat(heartbeat(2, epoch2, "conn-5").isFenced()).as("broker 2 is back, unfenced once caught up").isFalse();
    }

    @Test
    void afterAFailoverABrokerNeverHeardFromWhoseListenerRefusesConnectionsIsFencedAfterTheGrace() throws Exception {
        long epoch2 = register(2);
        assertThat(heartbeat(2, epoch2, "conn-2").isFenced()).isFalse();
        long epoch3 = register(3);
        assertThat(heartbeat(3, epoch3, "conn-3").isFenced()).isFalse();
        assertThat(controller.unheardBrokers().get(10, TimeUnit.SECONDS)).as("both heartbeated to this controller").isEmpty();
        long offset = loader.nextOffset();

        // A new active controller (this node again, over the same log): no broker has heartbeated to it yet.
        closeAll();
        open();
        waitUntil(() -> loader.nextOffset() >= offset && !loader.image().brokers().isEmpty(), "the image is replayed");
        assertThat(controller.unheardBrokers().get(10, TimeUnit.SECONDS)).extracting(BrokerRegistration::id).containsExactly(2, 3);

        // Broker 3 heartbeats; broker 2 (killed with the old controller) never will, and its listener refuses connections.
        assertThat(heartbeat(3, epoch3, "conn-4").isFenced()).isFalse();
        assertThat(controller.unheardBrokers().get(10, TimeUnit.SECONDS)).extracting(BrokerRegistration::id).containsExactly(2);
        controller.brokerRefusedConnection(3, epoch3); // heard from: ignored
        controller.brokerRefusedConnection(2, epoch2 + 1); // another registration: ignored
        controller.brokerRefusedConnection(2, epoch2);
        assertThat(controller.unheardBrokers().get(10, TimeUnit.SECONDS)).as("suspect now, not probed again").isEmpty();
        time.advance(GRACE_MS);
        assertThat(heartbeat(3, epoch3, "conn-4").isFenced()).isFalse();
        assertThat(loader.image().brokers().get(2).fenced()).as("not before the grace ends").isFalse();
        time.advance(1);
        waitUntil(() -> loader.image().brokers().get(2).fenced(), "broker 2 is fenced one grace after the refused probe");
        assertThat(loader.image().brokers().get(3).fenced()).as("the broker that heartbeated stays").isFalse();
    }

    @Test
    void aBrokerThatHeartbeatsWithinTheGraceAfterARefusedProbeIsNotFenced() throws Exception {
        long epoch2 = register(2);
        assertThat(heartbeat(2, epoch2, "conn-2").isFenced()).isFalse();
        long offset = loader.nextOffset();
        closeAll();
        open();
        waitUntil(() -> loader.nextOffset() >= offset && !loader.image().brokers().isEmpty(), "the image is replayed");

        controller.brokerRefusedConnection(2, epoch2); // e.g. restarting its listener
        time.advance(GRACE_MS);
        assertThat(heartbeat(2, epoch2, "conn-3").isFenced()).isFalse();
        time.advance(GRACE_MS + 1);
        controller.unheardBrokers().get(10, TimeUnit.SECONDS); // a round trip through the controller thread
        assertThat(loader.image().brokers().get(2).fenced()).isFalse();
    }
}
