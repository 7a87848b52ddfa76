package io.strata.metadata;

import io.strata.common.BackgroundErrors;
import io.strata.common.MockTime;
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

import java.nio.file.Path;
import java.util.ArrayList;
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
 * A QuorumController on a real one-voter quorum over a temporary log, with a fake clock and the
 * node's MetadataLoader (whose image the controller's answers wait for), plus the broker-side
 * calls tests need. One test thread uses it; {@link #close()} stops everything.
 */
final class ControllerHarness implements AutoCloseable {
    static final long SESSION_MS = 9_000;

    final MockTime time = new MockTime();
    final QuorumController controller;
    final MetadataLoader loader;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final RaftNode quorum;
    private final UnifiedLog log;

    ControllerHarness(Path dir, Map<String, Short> bootstrapFeatures) throws Exception {
        this(dir, bootstrapFeatures, ElectionSettings.DEFAULTS);
    }

    ControllerHarness(Path dir, Map<String, Short> bootstrapFeatures, ElectionSettings electionSettings) throws Exception {
        Path metadataDir = dir.resolve("__cluster_metadata-0");
        log = UnifiedLog.load(metadataDir, new TopicPartition("__cluster_metadata", 0),
            LogConfig.of(Map.of(), Map.of(LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1")), time, scheduler,
            new UnifiedLog.LoadParams(0, 0, false, 86_400_000L, false));
        loader = new MetadataLoader(1, new BackgroundErrors());
        controller = new QuorumController(new ControllerSettings(1, 1, (short) 1, true, Map.of(), "cluster", SESSION_MS), electionSettings, bootstrapFeatures, time,
            loader::whenApplied);
        quorum = new RaftNode(1, Set.of(1), "cluster", RaftConfig.DEFAULTS, new FileRaftLog(log), new FileQuorumStateStore(metadataDir),
            (destination, api, version, request) -> CompletableFuture.failedFuture(new IllegalStateException("one voter")), time, new Random(1),
            new RaftClient.Listener() { }, new MetadataCommitListener(loader, controller));
        controller.start(quorum);
        waitUntil(controller::isActive, "the controller becomes active");
        waitUntil(() -> loader.image().features().keySet().containsAll(bootstrapFeatures.keySet()), "the bootstrap features are applied");
    }

    static void waitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(2);
        }
    }

    MetadataImage image() {
        return loader.image();
    }

    /** Registers broker {@code id} (a new incarnation) with {@code previousBrokerEpoch}; returns its new epoch. */
    long register(int id, long previousBrokerEpoch) throws Exception {
        BrokerRegistrationRequestData request = new BrokerRegistrationRequestData().setBrokerId(id).setClusterId("cluster")
            .setIncarnationId(UUID.randomUUID()).setPreviousBrokerEpoch(previousBrokerEpoch);
        request.listeners().add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("127.0.0.1").setPort(9000 + id));
        var response = controller.registerBroker(request).get(10, TimeUnit.SECONDS);
        assertThat(response.errorCode()).isZero();
        return response.brokerEpoch();
    }

    /** A heartbeat at the loader's offset (so a registered broker is caught up). */
    BrokerHeartbeatResponseData heartbeat(int id, long epoch, boolean shutDown, boolean fence) throws Exception {
        return controller.brokerHeartbeat(new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(epoch)
            .setCurrentMetadataOffset(loader.nextOffset() - 1).setWantShutDown(shutDown).setWantFence(fence)).get(10, TimeUnit.SECONDS);
    }

    /** Creates {@code topic} with one partition on {@code replicas} and the given topic configs. */
    void createTopic(String topic, List<Integer> replicas, Map<String, String> configs) throws Exception {
        CreateTopicsRequestData.CreatableTopic creatable = new CreateTopicsRequestData.CreatableTopic().setName(topic).setNumPartitions(-1)
            .setReplicationFactor((short) -1).setAssignments(new ArrayList<>(List.of(
                new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0).setBrokerIds(replicas))));
        configs.forEach((name, value) -> creatable.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().setName(name).setValue(value)));
        var created = controller.createTopics(List.of(creatable), false).get(10, TimeUnit.SECONDS);
        assertThat(created.get(0).errorCode()).as(created.get(0).errorMessage()).isZero();
    }

    PartitionRegistration partition(String topic) {
        return loader.image().topic(topic).partition(0);
    }

    @Override
    public void close() throws Exception {
        quorum.close();
        controller.close();
        loader.close();
        log.close();
        scheduler.shutdownNow();
    }
}
