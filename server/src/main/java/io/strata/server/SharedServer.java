package io.strata.server;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.metadata.MetadataCommitListener;
import io.strata.metadata.MetadataLoader;
import io.strata.metadata.MetadataRecords;
import io.strata.metadata.QuorumController;
import io.strata.raft.FileQuorumStateStore;
import io.strata.raft.FileRaftLog;
import io.strata.raft.RaftClient;
import io.strata.raft.RaftConfig;
import io.strata.raft.RaftNode;
import io.strata.server.api.Features;
import io.strata.server.cluster.QuorumPeers;
import io.strata.server.cluster.RemoteController;
import io.strata.server.config.ServerConfig;
import io.strata.server.metrics.BrokerMetrics;
import io.strata.server.metrics.HealthChecks;
import io.strata.server.metrics.ServerMetrics;
import io.strata.server.network.ListenerDispatcher;
import io.strata.server.network.RequestChannel;
import io.strata.server.network.RequestHandlerPool;
import io.strata.server.network.SocketServer;
import io.strata.server.network.client.InterBrokerClient;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The part of a node that every role needs: the metrics endpoint, the data directories (locked
 * and formatted by the {@link LogManager}, whose scheduler the metadata log uses too; loading the
 * partition logs is the broker part's), the metadata log with this node's replica of the quorum
 * ({@link RaftNode}) and the image it feeds ({@link MetadataLoader}), the network layer both
 * roles register their listeners on (one {@link SocketServer}, request channel, handler pool
 * and {@link ListenerDispatcher}), and the clients to the other voters and to the active
 * controller.
 *
 * <p>Start-up is a fixed sequence of phases that {@link StrataServer} interleaves with the
 * controller and broker parts (the controller is created between the metadata log and the
 * quorum, because the quorum's commit listener feeds it):
 *
 * <pre>
 *   NEW --startMetrics--> METRICS --openMetadataLog--> METADATA_LOG --startQuorum--> QUORUM --startNetwork--> NETWORK
 * </pre>
 *
 * A phase out of this order throws. Shutdown is likewise split ({@link #closeNetworkAndQuorum},
 * {@link #closeClients}, {@link #closeMetadata}, {@link #closeMetrics}) so that the facade keeps
 * one order across the parts; each close step skips what start-up never created.
 *
 * <p>Start-up and shutdown run on one thread; the components are volatile because the metrics
 * endpoint reads them while start-up creates them.
 */
final class SharedServer {
    /** The start-up phases, in order. */
    enum Phase { NEW, METRICS, METADATA_LOG, QUORUM, NETWORK }

    private final ServerConfig config;
    private final Time time;
    /** Failures of background work in every component, by task (exported as strata_server_background_errors_total). */
    private final BackgroundErrors backgroundErrors = new BackgroundErrors();
    private final ListenerDispatcher dispatcher = new ListenerDispatcher();
    private final Features features = new Features();
    private Phase phase = Phase.NEW;
    // Volatile: the metrics endpoint reads these while start-up creates them.
    private volatile BrokerMetrics metrics = BrokerMetrics.disabled();
    private volatile LogManager logManager;
    private volatile UnifiedLog metadataUnifiedLog;
    private volatile MetadataLoader metadata;
    private volatile RaftNode quorum;
    private volatile InterBrokerClient interBrokerClient;
    private volatile InterBrokerClient controllerClient;
    private volatile QuorumPeers peers;
    private volatile RemoteController remoteController;
    private volatile RequestChannel requestChannel;
    private volatile SocketServer socketServer;
    private volatile RequestHandlerPool handlerPool;
    private volatile String clusterId;
    private volatile boolean uncleanStart;
    private volatile boolean metadataLoaded;
    private Set<Integer> voters;
    private UUID directoryId;

    SharedServer(ServerConfig config, Time time) {
        this.config = config;
        this.time = time;
    }

    private void transitionTo(Phase from, Phase to) {
        if (phase != from) {
            throw new IllegalStateException("cannot move the shared part of node " + config.nodeId() + " to " + to + " from " + phase
                + " (expected " + from + ")");
        }
        phase = to;
    }

    /** First, so that /health/ready can be watched while the logs load. */
    void startMetrics(ServerMetrics.Sources serverSources, HealthChecks.Sources healthSources) throws java.io.IOException {
        transitionTo(Phase.NEW, Phase.METRICS);
        metrics = BrokerMetrics.start(config, serverSources, healthSources);
    }

    /**
     * Locks every data directory (a second process on the same directories stops here, before
     * it reads or recovers anything), formats or checks them, loads the metadata log and creates
     * the loader that replays it into the image.
     */
    void openMetadataLog() throws Exception {
        transitionTo(Phase.METRICS, Phase.METADATA_LOG);
        int nodeId = config.nodeId();
        List<Path> logDirs = config.logDirs();
        logManager = new LogManager(new LogManager.Settings(logDirs, config.getInt(ServerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR),
            config.getLong(ServerConfig.LOG_RETENTION_CHECK_INTERVAL_MS), config.getLong(ServerConfig.LOG_FLUSH_SCHEDULER_INTERVAL_MS),
            config.getInt(ServerConfig.LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS), config.getInt(ServerConfig.PRODUCER_ID_EXPIRATION_MS),
            config.getInt(ServerConfig.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS), config.fsyncOnAck(),
            config.getLong(ServerConfig.REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS)), config.cleanerConfig(), time, backgroundErrors);
        logManager.setFlushObserver(metrics.flushObserver());
        // Before anything reads a directory: recovering __cluster_metadata below truncates it.
        logManager.lockDirectories();
        logManager.lockDirectory(config.metadataLogDir());
        if (io.strata.server.cluster.DynamicQuorum.isDynamic(config)) {
            io.strata.server.cluster.DynamicQuorum.requireFormatted(config, config.metadataLogDir()); // KIP-853: `strata format` first
        }
        clusterId = DataDirectories.ensureFormatted(config.formattedDirectories(), nodeId, config.getString(ServerConfig.CLUSTER_ID));
        boolean cleanShutdown = logManager.hadCleanShutdown(config.metadataLogDir());
        uncleanStart = !cleanShutdown;

        Path metadataDir = metadataDir();
        LogConfig metadataConfig = LogConfig.of(Map.of(), config.metadataLogOverrides());
        metadataUnifiedLog = UnifiedLog.load(metadataDir, new TopicPartition(MetadataRecords.TOPIC, 0), metadataConfig, time,
            logManager.scheduler(), new UnifiedLog.LoadParams(0, 0, cleanShutdown, Long.MAX_VALUE / 4, true));
        metadataUnifiedLog.setFlushObserver(metrics.flushObserver());
        metadata = new MetadataLoader(nodeId, backgroundErrors);
        // Every node snapshots its own copy of the metadata log (KIP-630); the quorum then drops the log before the snapshot.
        metadata.enableSnapshots((endOffset, epoch, timestampMs, values) -> quorum.createSnapshot(new io.strata.raft.OffsetAndEpoch(endOffset, epoch),
                timestampMs, values), config.getLong(ServerConfig.METADATA_LOG_MAX_RECORD_BYTES_BETWEEN_SNAPSHOTS),
            config.getLong(ServerConfig.METADATA_LOG_MAX_SNAPSHOT_INTERVAL_MS), time::milliseconds);
    }

    private Path metadataDir() {
        return config.metadataLogDir().resolve(MetadataRecords.TOPIC + "-0");
    }

    /**
     * Creates this node's replica of the metadata quorum over the metadata log: a single voter on
     * the standalone node, else the configured voters reached through a client of their own.
     *
     * @param controller the local controller the committed records also go to, or null on a broker-only node
     */
    void startQuorum(QuorumController controller) {
        transitionTo(Phase.METADATA_LOG, Phase.QUORUM);
        int nodeId = config.nodeId();
        boolean standalone = config.isStandaloneDefault();
        RaftNode.RequestSender sender;
        java.util.Set<Integer> voters;
        if (standalone) {
            // A single voter: this node alone is the metadata quorum; it elects itself at once and commits what it has flushed.
            voters = java.util.Set.of(nodeId);
            sender = (destination, api, version, request) -> java.util.concurrent.CompletableFuture.failedFuture(
                new IllegalStateException("a single-voter quorum sends no requests"));
        } else {
            // A quorum request unanswered for controller.quorum.request.timeout.ms is given up (the replica resends on its timers).
            interBrokerClient = new InterBrokerClient(withRequestTimeout(InterBrokerClient.Settings.defaults("strata-raft-" + nodeId),
                config.getInt(ServerConfig.CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS)), 1, time, new java.util.Random())
                .useTls(controllerClientTls());
            peers = new QuorumPeers(config.quorumVoters(), interBrokerClient);
            voters = peers.voterIds();
            sender = peers;
        }
        io.strata.raft.QuorumSetup quorumSetup;
        try {
            quorumSetup = !standalone && io.strata.server.cluster.DynamicQuorum.isDynamic(config)
                ? io.strata.server.cluster.DynamicQuorum.setup(config, config.metadataLogDir(), DataDirectories.directoryId(config.metadataLogDir()))
                : io.strata.raft.QuorumSetup.staticQuorum(nodeId, voters);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        quorum = new RaftNode(quorumSetup, clusterId, standalone ? RaftConfig.DEFAULTS : config.raftConfig(), new FileRaftLog(metadataUnifiedLog),
            new FileQuorumStateStore(metadataDir()), sender, time, new java.util.Random(), new RaftClient.Listener() {
                @Override
                public void onLeaderChange(int epoch, int leaderId) {
                    RemoteController remote = remoteController;
                    if (remote != null) {
                        remote.onLeaderChange(leaderId); // forwarded requests waiting for a controller go to the new one now
                    }
                }
            },
            new MetadataCommitListener(metadata, controller));
        if (quorumSetup.isDynamic()) {
            peers.useVoterSet(quorum::publishedVoterSet, quorumSetup.listenerName());
        }
        this.voters = voters;
    }

    /**
     * Creates the network layer (listeners are bound here and started per role) and starts the
     * request handlers; on a cluster node also the client to the active controller.
     */
    void startNetwork() throws Exception {
        transitionTo(Phase.QUORUM, Phase.NETWORK);
        int nodeId = config.nodeId();
        requestChannel = new RequestChannel(config.getInt(ServerConfig.QUEUED_MAX_REQUESTS));
        socketServer = new SocketServer(config, requestChannel, metrics.networkObserver());
        handlerPool = new RequestHandlerPool(config.getInt(ServerConfig.NUM_IO_THREADS), requestChannel, dispatcher);
        handlerPool.start();
        directoryId = DataDirectories.directoryId(config.metadataLogDir());
        if (!config.isStandaloneDefault()) {
            // An attempt at the controller that gets no answer in a few quorum timeouts goes to whoever leads by then.
            controllerClient = new InterBrokerClient(withRequestTimeout(InterBrokerClient.Settings.defaults("strata-broker-" + nodeId + "-to-controller"),
                2 * config.getInt(ServerConfig.CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS)), 1, time,
                new java.util.Random()).useTls(controllerClientTls());
            remoteController = new RemoteController(quorum, peers, controllerClient, time,
                config.getInt(ServerConfig.CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS) * 15L);
        }
    }

    /** TLS for connections to controllers: the settings of the first of {@code controller.listener.names}, if it is SSL. */
    private io.strata.server.security.SslEngineFactory controllerClientTls() {
        List<String> names = config.controllerListenerNames();
        return names.isEmpty() ? null : io.strata.server.security.SslEngineFactory.forOwnConnections(config, names.get(0));
    }

    private static InterBrokerClient.Settings withRequestTimeout(InterBrokerClient.Settings settings, int requestTimeoutMs) {
        return new InterBrokerClient.Settings(settings.clientId(), Math.min(settings.connectTimeoutMs(), requestTimeoutMs), requestTimeoutMs,
            settings.reconnectBackoffMs(), settings.reconnectBackoffMaxMs(), settings.maxResponseBytes(), settings.maxQueuedPerNode());
    }

    /** Marks the metadata log replayed into the image (the broker part once it caught up; a controller-only node once started). */
    void markMetadataLoaded() {
        metadataLoaded = true;
    }

    // ---------------------------------------------------------------- shutdown steps, in the order StrataServer calls them

    /**
     * Stops accepting, finishes the in-flight requests, stops the client to the controller, then
     * closes the quorum replica before the listeners: a leader resigns (EndQuorumEpoch) and
     * answers the Fetch requests it holds.
     */
    void closeNetworkAndQuorum() throws Exception {
        if (socketServer != null) {
            socketServer.stopAccepting();
        }
        if (handlerPool != null) {
            handlerPool.shutdown(10_000);
        }
        if (remoteController != null) {
            remoteController.close();
        }
        if (quorum != null) {
            // Before the listeners close: a leader resigns (EndQuorumEpoch) and answers the Fetch requests it holds.
            quorum.close();
        }
        if (socketServer != null) {
            socketServer.close();
        }
    }

    /** Closes the clients to the other voters and to the controller. */
    void closeClients() {
        if (interBrokerClient != null) {
            interBrokerClient.close();
        }
        if (controllerClient != null) {
            controllerClient.close();
        }
    }

    /** Closes the loader, flushes and closes the metadata log, then the partition logs (writing the clean-shutdown marker). */
    void closeMetadata() throws Exception {
        if (metadata != null) {
            metadata.close();
        }
        boolean metadataLogClosed = false;
        if (metadataUnifiedLog != null) {
            metadataUnifiedLog.flush(metadataUnifiedLog.logEndOffset());
            metadataUnifiedLog.close();
            metadataLogClosed = true;
        }
        if (logManager != null) {
            // The log manager marks log.dirs clean only when it loaded the partition logs; the metadata log's directory needs its
            // own marker otherwise (a controller-only node, a metadata.log.dir outside log.dirs).
            boolean markedByLogManager = logManager.isLoaded() && config.logDirs().stream()
                .anyMatch(dir -> dir.toAbsolutePath().normalize().equals(config.metadataLogDir().toAbsolutePath().normalize()));
            logManager.close();
            if (metadataLogClosed && !markedByLogManager) {
                logManager.writeCleanShutdownMarker(config.metadataLogDir());
            }
        }
    }

    /** Last: stops the endpoint. */
    void closeMetrics() {
        metrics.close();
    }

    // ---------------------------------------------------------------- accessors: null until start-up creates the component

    ServerConfig config() {
        return config;
    }

    Time time() {
        return time;
    }

    BackgroundErrors backgroundErrors() {
        return backgroundErrors;
    }

    ListenerDispatcher dispatcher() {
        return dispatcher;
    }

    Features features() {
        return features;
    }

    BrokerMetrics metrics() {
        return metrics;
    }

    LogManager logManager() {
        return logManager;
    }

    /** The first offset the metadata log still holds (0 before start-up loads it). */
    long metadataLogStartOffset() {
        UnifiedLog log = metadataUnifiedLog;
        return log == null ? 0 : log.logStartOffset();
    }

    MetadataLoader metadata() {
        return metadata;
    }

    RaftNode quorum() {
        return quorum;
    }

    QuorumPeers peers() {
        return peers;
    }

    /** The active controller over the network (null on the standalone node). */
    RemoteController remoteController() {
        return remoteController;
    }

    RequestChannel requestChannel() {
        return requestChannel;
    }

    SocketServer socketServer() {
        return socketServer;
    }

    RequestHandlerPool handlerPool() {
        return handlerPool;
    }

    String clusterId() {
        return clusterId;
    }

    boolean isRecoveringFromUncleanShutdown() {
        return uncleanStart;
    }

    boolean isMetadataLoaded() {
        return metadataLoaded;
    }

    /** The voters of the metadata quorum (null before {@link #startQuorum}). */
    Set<Integer> voters() {
        return voters;
    }

    /** The directory id of the first data directory (null before {@link #startNetwork}). */
    UUID directoryId() {
        return directoryId;
    }
}
