package io.strata.server;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.transaction.TransactionCoordinator;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.MetadataLoader;
import io.strata.metadata.QuorumController;
import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.message.ApiMessageType;
import io.strata.raft.RaftNode;
import io.strata.server.config.ServerConfig;
import io.strata.server.metrics.BrokerMetrics;
import io.strata.server.metrics.HealthChecks;
import io.strata.server.metrics.ServerMetrics;
import io.strata.server.network.RequestChannel;
import io.strata.server.network.RequestHandlerPool;
import io.strata.server.network.SocketServer;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.server.replica.DelayedFetch;
import io.strata.server.replica.DelayedProduce;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.LogManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A Strata node, composed by role as {@code process.roles} says: a {@link SharedServer} (metrics
 * endpoint, data directories and their locks, metadata log, quorum replica, image, network
 * layer, clients to the quorum and the controller) always; a {@link ControllerServer} when the
 * node has the controller role; a {@link BrokerServer} when it has the broker role. The
 * zero-config standalone node ({@link ServerConfig#isStandaloneDefault()}) has both roles over a
 * single-voter quorum.
 *
 * <p>Start-up order: start the metrics endpoint; lock every data directory (a second process on
 * the same directories stops here, before it reads or recovers anything), format/check them, load
 * the metadata log; create the controller; create the quorum replica and start the controller on
 * it; create the network layer and start the request handlers; start the controller listeners (a
 * cluster controller). Then the broker: replay the metadata log into the image, load the
 * partition logs, open partitions for the image, bind the listeners, register the broker, then
 * start handling requests. {@link #close()} is the controlled shutdown: stop accepting, finish
 * in-flight requests, flush, write checkpoints and the clean-shutdown marker, so the next start
 * skips recovery.
 */
public final class StrataServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StrataServer.class);

    private final ServerConfig config;
    private final SharedServer shared;
    /** The controller role, or null on a broker-only node. */
    private final ControllerServer controllerRole;
    /** The broker role, or null on a controller-only node. */
    private final BrokerServer brokerRole;
    private volatile boolean started;
    private volatile boolean shuttingDown;
    private boolean closed;

    public StrataServer(ServerConfig config, Time time) {
        this.config = config;
        this.shared = new SharedServer(config, time);
        boolean standalone = config.isStandaloneDefault();
        this.controllerRole = standalone || config.isController() ? new ControllerServer(shared) : null;
        this.brokerRole = standalone || config.isBroker() ? new BrokerServer(shared) : null;
    }

    /**
     * The versions this broker advertises: exactly what its handlers implement, and for every API
     * the range an Apache Kafka 4.4 broker advertises (KafkaApiVersionsParityTest compares them
     * with a recorded Kafka 4.4 ApiVersions response).
     */
    public static ApiVersionsTable apiVersions() {
        return ApiVersionsTable.builder()
            // Produce from v0 for librdkafka (KAFKA-18659); v0-v2 have no schema and close the connection as in Kafka 4.
            // v12 is transactions v2 and v13 names topics by id; ApiVersions caps Produce (and EndTxn, TxnOffsetCommit) while
            // transaction.version < 2 (FIELD-NOTES).
            .add(ApiMessageType.PRODUCE, 0, 13)
            // v18 adds a follower's high watermark (KIP-1166), a tagged field only replica fetchers send.
            .add(ApiMessageType.FETCH, 4, 18)
            .add(ApiMessageType.LIST_OFFSETS, 1, 11)
            .add(ApiMessageType.METADATA, 0, 13)
            // v5: the client may name the cluster and node it means (KIP-1242): REBOOTSTRAP_REQUIRED when it reached another.
            .add(ApiMessageType.API_VERSIONS, 0, 5)
            .add(ApiMessageType.CREATE_TOPICS, 2, 7)
            .add(ApiMessageType.INIT_PRODUCER_ID, 0, 5)
            .add(ApiMessageType.DELETE_TOPICS, 1, 6)
            .add(ApiMessageType.CREATE_PARTITIONS, 0, 3)
            .add(ApiMessageType.DELETE_RECORDS, 0, 2)
            .add(ApiMessageType.DESCRIBE_CONFIGS, 1, 4)
            .add(ApiMessageType.ALTER_CONFIGS, 0, 2)
            .add(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, 0, 1)
            .add(ApiMessageType.DESCRIBE_CLUSTER, 0, 2)
            .add(ApiMessageType.DESCRIBE_TOPIC_PARTITIONS, 0, 0)
            // Moves between this broker's log dirs (KIP-113); v0 went in Kafka 4 (KIP-896).
            .add(ApiMessageType.ALTER_REPLICA_LOG_DIRS, 1, 2)
            .add(ApiMessageType.DESCRIBE_LOG_DIRS, 1, 5)
            .add(ApiMessageType.OFFSET_FOR_LEADER_EPOCH, 2, 4)
            // Features are changed through the controller (FeatureLevelRecords); the quorum is this node alone.
            .add(ApiMessageType.UPDATE_FEATURES, 0, 2)
            .add(ApiMessageType.UNREGISTER_BROKER, 0, 0)
            // Preferred / unclean leader elections, forwarded to the active controller.
            .add(ApiMessageType.ELECT_LEADERS, 0, 2)
            // KIP-455 reassignments, forwarded to the active controller.
            .add(ApiMessageType.ALTER_PARTITION_REASSIGNMENTS, 0, 1)
            .add(ApiMessageType.LIST_PARTITION_REASSIGNMENTS, 0, 0)
            // KIP-853 voter changes, forwarded to the active controller.
            .add(ApiMessageType.ADD_RAFT_VOTER, 0, 1)
            .add(ApiMessageType.REMOVE_RAFT_VOTER, 0, 0)
            .add(ApiMessageType.DESCRIBE_QUORUM, 0, 2)
            // Classic consumer groups. OffsetCommit v10 / OffsetFetch v10 name topics by id.
            .add(ApiMessageType.FIND_COORDINATOR, 0, 6)
            .add(ApiMessageType.JOIN_GROUP, 0, 9)
            .add(ApiMessageType.SYNC_GROUP, 0, 5)
            .add(ApiMessageType.HEARTBEAT, 0, 4)
            .add(ApiMessageType.LEAVE_GROUP, 0, 5)
            .add(ApiMessageType.OFFSET_COMMIT, 2, 10)
            .add(ApiMessageType.OFFSET_FETCH, 1, 10)
            .add(ApiMessageType.DESCRIBE_GROUPS, 0, 6)
            .add(ApiMessageType.LIST_GROUPS, 0, 5)
            .add(ApiMessageType.DELETE_GROUPS, 0, 3)
            .add(ApiMessageType.OFFSET_DELETE, 0, 0)
            // The consumer group protocol (KIP-848); served while group.version >= 1 is finalized.
            .add(ApiMessageType.CONSUMER_GROUP_HEARTBEAT, 0, 1)
            .add(ApiMessageType.CONSUMER_GROUP_DESCRIBE, 0, 1)
            // Transactions v1 (AddPartitionsToTxn v0-v3 round trips from clients) and v2 (EndTxn 5, TxnOffsetCommit 5-6, Produce 12-13:
            // partitions are added by their leader; AddPartitionsToTxn v4-v5 is that leader's batched add or verification).
            .add(ApiMessageType.ADD_PARTITIONS_TO_TXN, 0, 5)
            .add(ApiMessageType.ADD_OFFSETS_TO_TXN, 0, 4)
            .add(ApiMessageType.END_TXN, 0, 5)
            .add(ApiMessageType.TXN_OFFSET_COMMIT, 0, 6)
            .add(ApiMessageType.WRITE_TXN_MARKERS, 1, 2)
            .add(ApiMessageType.DESCRIBE_TRANSACTIONS, 0, 0)
            .add(ApiMessageType.LIST_TRANSACTIONS, 0, 2)
            .add(ApiMessageType.DESCRIBE_PRODUCERS, 0, 0)
            // ACLs (v0 went in Kafka 4, KIP-896); created and deleted through the active controller.
            .add(ApiMessageType.DESCRIBE_ACLS, 1, 3)
            .add(ApiMessageType.CREATE_ACLS, 1, 3)
            .add(ApiMessageType.DELETE_ACLS, 1, 3)
            .build();
    }

    /**
     * How this node halts on a fatal log directory failure (the metadata log's directory, or the
     * last online one, failed): {@link io.strata.server.replica.Halter#RUNTIME} unless a test
     * observes it instead. Before {@link #startup}.
     */
    public void setHalter(io.strata.server.replica.Halter halter) {
        if (brokerRole != null) {
            brokerRole.setHalter(halter);
        }
    }

    public void startup() throws Exception {
        long startNanos = System.nanoTime();
        // First, so that /health/ready can be watched while the logs load.
        shared.startMetrics(serverMetricsSources(), healthSources());
        registerRoleMetrics();
        shared.openMetadataLog();
        if (controllerRole != null) {
            controllerRole.createController();
        }
        shared.startQuorum(controller());
        if (controllerRole != null) {
            controllerRole.start(shared.quorum());
        }
        shared.startNetwork();
        if (controllerRole != null) {
            controllerRole.startListeners();
        }
        int nodeId = config.nodeId();
        if (brokerRole == null) {
            // Ready (and "metadata loaded") once the quorum has a leader and this node applied what was committed (metadataCaughtUp).
            started = true;
            LOG.info("Strata controller {} of cluster {} started in {} ms (voters {}, listening on {})", nodeId, shared.clusterId(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), shared.voters(), config.listeners());
            return;
        }
        ControllerApi controllerApi = config.isStandaloneDefault() ? controller() : shared.remoteController();
        brokerRole.startup(startNanos, controllerApi, config.isStandaloneDefault() ? controller() : null);
        started = true;
        LOG.info("Strata node {} of cluster {} started in {} ms (metadata at offset {}, {} partitions, listening on {})", nodeId, shared.clusterId(),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), shared.metadata().nextOffset(), brokerRole.replicaManager().partitions().size(),
            config.listeners());
    }

    /** What the scrape-time collectors read: each supplier answers null until start-up creates the component. */
    private ServerMetrics.Sources serverMetricsSources() {
        return new ServerMetrics.Sources(config.nodeId(), config.logDirs(), shared.backgroundErrors(), this::isStarted, this::isShuttingDown,
            shared::isRecoveringFromUncleanShutdown, () -> {
                MetadataLoader metadata = shared.metadata();
                return metadata == null ? null : metadata.image();
            }, shared::logManager, fromBroker(BrokerServer::replicaManager), fromBroker(BrokerServer::groupCoordinator), shared::requestChannel,
            shared::handlerPool, shared::socketServer, fromBroker(BrokerServer::producePurgatory), fromBroker(BrokerServer::fetchPurgatory),
            fromBroker(BrokerServer::replicaFetcherManager), fromBroker(BrokerServer::replicationQuotas));
    }

    /** The collectors of role components the server sources do not name: the controller's counters, the fetch sessions. */
    private void registerRoleMetrics() {
        ControllerServer controllerServer = controllerRole;
        if (controllerServer != null) {
            shared.metrics().register(new io.strata.server.metrics.ControllerStatsMetrics(controllerServer::controller,
                controllerServer::reachabilityProbe));
        }
        if (brokerRole != null) {
            shared.metrics().register(new io.strata.server.metrics.FetchSessionCacheMetrics(fromBroker(BrokerServer::fetchSessions)));
        }
    }

    /** What /health/ready reads. */
    private HealthChecks.Sources healthSources() {
        return new HealthChecks.Sources(this::isMetadataLoaded, shared::isRecoveringFromUncleanShutdown, this::isStarted, this::isShuttingDown,
            shared::logManager, fromBroker(BrokerServer::groupCoordinator), fromBroker(BrokerServer::transactionCoordinator), brokerRole != null);
    }

    /** A component of the broker role, or null on a node without it. */
    private <T> Supplier<T> fromBroker(Function<BrokerServer, ? extends T> component) {
        BrokerServer broker = brokerRole;
        return broker == null ? () -> null : () -> component.apply(broker);
    }

    private boolean isControllerListener(String listenerName) {
        return config.isControllerListener(listenerName);
    }

    public boolean isStarted() {
        return started;
    }

    public String clusterId() {
        return shared.clusterId();
    }

    /** The bound port of the first broker listener (of the first listener on a controller-only node). */
    public int boundPort() {
        SocketServer socketServer = shared.socketServer();
        for (String listener : config.listeners()) {
            String name = ServerConfig.Endpoint.parse(listener).listenerName();
            if (!isControllerListener(name) || !config.isBroker()) {
                return socketServer.boundPort(name);
            }
        }
        return socketServer.boundPort(socketServer.firstListenerName());
    }

    public int boundPort(String listenerName) {
        return shared.socketServer().boundPort(listenerName);
    }

    public ReplicaManager replicaManager() {
        return brokerRole == null ? null : brokerRole.replicaManager();
    }

    public QuorumController controller() {
        return controllerRole == null ? null : controllerRole.controller();
    }

    /** The active controller over the network, as this node's broker reaches it (null on the standalone node). */
    io.strata.server.cluster.RemoteController remoteController() {
        return shared.remoteController();
    }

    /** This node's view of the cluster metadata (null before start-up creates it). */
    public MetadataLoader metadata() {
        return shared.metadata();
    }

    /** The first offset this node's metadata log still holds (above 0 once a snapshot let it drop the entries before). */
    public long metadataLogStartOffset() {
        return shared.metadataLogStartOffset();
    }

    /** This node's replica of the metadata quorum (null before start-up creates it). */
    public RaftNode quorum() {
        return shared.quorum();
    }

    public SocketServer socketServer() {
        return shared.socketServer();
    }

    public ServerConfig config() {
        return config;
    }

    public int nodeId() {
        return config.nodeId();
    }

    // Accessors for tests and tools: null until start-up creates the component (always null for a role the node does not have).

    public LogManager logManager() {
        return shared.logManager();
    }

    public GroupCoordinator groupCoordinator() {
        return brokerRole == null ? null : brokerRole.groupCoordinator();
    }

    public TransactionCoordinator transactionCoordinator() {
        return brokerRole == null ? null : brokerRole.transactionCoordinator();
    }

    public RequestChannel requestChannel() {
        return shared.requestChannel();
    }

    public RequestHandlerPool requestHandlerPool() {
        return shared.handlerPool();
    }

    /** Dynamic broker settings that could not be applied since start-up (0 before start-up). */
    public long dynamicConfigFailures() {
        return brokerRole == null ? 0 : brokerRole.dynamicConfigFailures();
    }

    /** The leader, follower and alter-log-dirs replication throttles ({@code ReplicationQuotaManager.Side} order), or null without a broker role. */
    public java.util.List<io.strata.server.replica.ReplicationQuotaManager> replicationQuotas() {
        return brokerRole == null ? null : brokerRole.replicationQuotas();
    }

    /** The follower side's replica fetchers, or null without a broker role. */
    public io.strata.server.replica.fetcher.ReplicaFetcherManager replicaFetcherManager() {
        return brokerRole == null ? null : brokerRole.replicaFetcherManager();
    }

    public DelayedOperationPurgatory<DelayedProduce> producePurgatory() {
        return brokerRole == null ? null : brokerRole.producePurgatory();
    }

    public DelayedOperationPurgatory<DelayedFetch> fetchPurgatory() {
        return brokerRole == null ? null : brokerRole.fetchPurgatory();
    }

    /** Whether the metadata log has been replayed into the image. */
    public boolean isMetadataLoaded() {
        return shared.isMetadataLoaded() || metadataCaughtUp();
    }

    /**
     * A controller-only node has no broker start-up to wait for the metadata: it counts as loaded
     * once the quorum has a leader and this node's image holds everything committed (then for
     * good), so /health/ready does not send a rolling restart on before the node caught up.
     */
    private boolean metadataCaughtUp() {
        if (brokerRole != null || !started) {
            return false;
        }
        io.strata.raft.RaftNode quorum = shared.quorum();
        MetadataLoader metadata = shared.metadata();
        if (quorum == null || metadata == null || quorum.leaderId() < 0 || quorum.highWatermark() <= 0
                || metadata.nextOffset() < quorum.highWatermark()) {
            return false;
        }
        shared.markMetadataLoaded();
        return true;
    }

    /** Whether this start follows an unclean shutdown (so loading the logs recovers them). */
    public boolean isRecoveringFromUncleanShutdown() {
        return shared.isRecoveringFromUncleanShutdown();
    }

    public boolean isShuttingDown() {
        return shuttingDown;
    }

    /** The metrics endpoint's bound port (set before the logs load), or -1 if metrics are disabled or not started. */
    public int metricsPort() {
        return shared.metrics().port();
    }

    /** Failures of background work so far, by task; every component of this node counts into it. */
    public BackgroundErrors backgroundErrors() {
        return shared.backgroundErrors();
    }

    /** This broker's metrics (a disabled instance when metrics.enabled=false). */
    public BrokerMetrics metrics() {
        return shared.metrics();
    }

    /**
     * Controlled shutdown. Safe to call more than once and after a failed start. The order across
     * the parts: the broker's controlled shutdown and heartbeats; stop accepting, finish the
     * in-flight requests, stop the client to the controller and the quorum replica (a leader
     * resigns while its listeners still answer), close the listeners; the broker's coordinators,
     * replicas and purgatories; the clients; the controller; the metadata image and log and the
     * partition logs; the metrics endpoint last. A failing step is logged and skips the rest but
     * the metrics endpoint.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        shuttingDown = true;
        started = false;
        long startNanos = System.nanoTime();
        LOG.info("Shutting down");
        try {
            if (brokerRole != null) {
                brokerRole.shutdownLifecycle();
            }
            shared.closeNetworkAndQuorum();
            if (brokerRole != null) {
                brokerRole.closeComponents();
            }
            shared.closeClients();
            if (brokerRole != null) {
                brokerRole.closeClients();
            }
            if (controllerRole != null) {
                controllerRole.close();
            }
            shared.closeMetadata();
        } catch (Exception e) {
            LOG.error("Error during shutdown", e);
        }
        shared.closeMetrics();
        LOG.info("Shut down in {} ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
    }
}
