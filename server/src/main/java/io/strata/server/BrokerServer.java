package io.strata.server;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.group.GroupCoordinatorSettings;
import io.strata.coordinator.transaction.TransactionCoordinator;
import io.strata.coordinator.transaction.TransactionCoordinatorSettings;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.ConfigResource;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.MetadataLoader;
import io.strata.metadata.QuorumController;
import io.strata.protocol.ApiVersionsTable;
import io.strata.raft.RaftNode;
import io.strata.server.api.ApiDispatcher;
import io.strata.server.api.ApiHandlers;
import io.strata.server.api.BrokerContext;
import io.strata.server.api.InternalTopic;
import io.strata.server.api.InternalTopics;
import io.strata.server.api.ProducerIdManager;
import io.strata.server.api.TransactionMarkers;
import io.strata.server.cluster.AddPartitionsToTxnManager;
import io.strata.server.cluster.AlterPartitionManager;
import io.strata.server.cluster.BrokerLifecycleManager;
import io.strata.server.config.DynamicBrokerConfig;
import io.strata.server.config.ServerConfig;
import io.strata.server.network.SocketServer;
import io.strata.server.network.client.InterBrokerClient;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.server.replica.DelayedFetch;
import io.strata.server.replica.DelayedProduce;
import io.strata.server.replica.ReplicaManager;
import io.strata.server.replica.fetcher.RemoteLeaderEndpoint;
import io.strata.server.replica.fetcher.ReplicaFetcherConfig;
import io.strata.server.replica.ReplicationQuotaManager;
import io.strata.server.replica.ReplicationThrottles;
import io.strata.server.replica.fetcher.ReplicaFetcherManager;
import io.strata.server.replica.fetcher.ReplicaFetchers;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The broker role of a node ({@code process.roles} has {@code broker}, or the zero-config
 * standalone node). {@link #startup} runs once the shared part's network layer exists (and the
 * controller part's listeners, on a combined cluster node): wait until the image holds what the
 * quorum had committed, load the partition logs, open partitions for the image, start the broker
 * listeners (bound, so an advertised port 0 resolves), register with the controller and wait to
 * be unfenced, then create the group and transaction coordinators and register the handlers.
 *
 * <p>Shutdown is split so that {@link StrataServer} keeps one order across the parts:
 * {@link #shutdownLifecycle} (controlled shutdown while still serving), then — after the shared
 * network and quorum stop — {@link #closeComponents}, then {@link #closeClients}.
 *
 * <p>Start-up and shutdown run on one thread; the components are volatile because the metrics
 * endpoint reads them while start-up creates them.
 */
final class BrokerServer {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerServer.class);

    private final SharedServer shared;
    private volatile InterBrokerClient markerClient;
    private volatile InterBrokerClient addPartitionsClient;
    private volatile AddPartitionsToTxnManager addPartitionsToTxn;
    private volatile BrokerLifecycleManager lifecycle;
    private volatile ReplicaManager replicaManager;
    private volatile AlterPartitionManager alterPartitionManager;
    private volatile ReplicaFetchers replicaFetchers;
    private volatile DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private volatile DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private volatile BrokerReconfiguration reconfiguration;
    private volatile io.strata.server.api.FetchSessionStatistics fetchSessions;
    private volatile ReplicationQuotaManager leaderReplicationQuota;
    private volatile ReplicationQuotaManager followerReplicationQuota;
    private volatile ReplicationQuotaManager alterLogDirsQuota;
    private volatile io.strata.server.replica.LogDirMoverThread logDirMoverThread;
    private volatile GroupCoordinator groupCoordinator;
    private volatile TransactionCoordinator transactionCoordinator;
    private volatile io.strata.server.replica.LogDirFailureHandler logDirFailureHandler;
    /** How the broker halts on a fatal log directory failure; tests observe it instead. */
    private volatile io.strata.server.replica.Halter halter = io.strata.server.replica.Halter.RUNTIME;
    private boolean startupCalled;

    BrokerServer(SharedServer shared) {
        this.shared = shared;
    }

    /** Replaces {@link io.strata.server.replica.Halter#RUNTIME} (tests); before {@link #startup}. */
    void setHalter(io.strata.server.replica.Halter halter) {
        this.halter = java.util.Objects.requireNonNull(halter);
    }

    /**
     * @param startNanos      when the node's start-up began (initial.broker.registration.timeout.ms counts from it)
     * @param controllerApi   how handlers reach the controller: the local one on the standalone node, else over the network
     * @param localController the controller of the standalone node (whose election this waits for), else null
     */
    void startup(long startNanos, ControllerApi controllerApi, QuorumController localController) throws Exception {
        if (startupCalled) {
            throw new IllegalStateException("broker " + shared.config().nodeId() + " was already started");
        }
        startupCalled = true;
        ServerConfig config = shared.config();
        Time time = shared.time();
        BackgroundErrors backgroundErrors = shared.backgroundErrors();
        MetadataLoader metadata = shared.metadata();
        LogManager logManager = shared.logManager();
        int nodeId = config.nodeId();
        Map<String, String> topicDefaults = config.topicDefaults();
        boolean standalone = config.isStandaloneDefault();
        awaitMetadata(startNanos, localController);
        shared.markMetadataLoaded();
        // Dynamic settings written before this start apply before the logs load (num.recovery.threads.per.data.dir), as in Kafka.
        BrokerReconfiguration.applyToLogManager(io.strata.server.config.DynamicBrokerConfig.effectiveConfig(config, metadata.image(), nodeId),
            logManager);

        // Dynamic log.cleaner.* settings already in the metadata log apply before the cleaner first starts.
        logManager.reconfigureCleaner(DynamicBrokerConfig.cleanerConfig(config, metadata.image(), nodeId));
        logManager.startup(topic -> LogConfig.of(topicDefaults, metadata.image().configs(ConfigResource.topic(topic))));

        producePurgatory = new DelayedOperationPurgatory<>("Produce", time, config.getInt(ServerConfig.PRODUCER_PURGATORY_PURGE_INTERVAL_REQUESTS));
        fetchPurgatory = new DelayedOperationPurgatory<>("Fetch", time, config.getInt(ServerConfig.FETCH_PURGATORY_PURGE_INTERVAL_REQUESTS));
        producePurgatory.setBackgroundErrors(backgroundErrors);
        fetchPurgatory.setBackgroundErrors(backgroundErrors);
        replicaManager = new ReplicaManager(nodeId, logManager, topicDefaults, time, producePurgatory, fetchPurgatory);
        replicaManager.setTopicMetrics(shared.metrics().topicMetrics());
        replicaManager.setReplicaSelector(config.replicaSelector());
        replicaManager.setBackgroundErrors(backgroundErrors);
        replicaManager.startIsrShrinkTask(config.getLong(ServerConfig.REPLICA_LAG_TIME_MAX_MS));
        startReplicationQuotas(config, metadata, time);
        startReplication(config, controllerApi, metadata, logManager, time, backgroundErrors);
        io.strata.server.replica.LogDirMover logDirMover = new io.strata.server.replica.LogDirMover(logManager, replicaManager::partition,
            alterLogDirsQuota);
        replicaManager.setLogDirMover(logDirMover);
        Map<java.nio.file.Path, java.util.UUID> directoryIds = directoryIds(logManager);
        replicaManager.setLogDirFailureHandling(config.metadataLogDir(), halter, (dir, offline) -> {
            BrokerLifecycleManager current = lifecycle;
            java.util.UUID directoryId = directoryIds.get(dir);
            if (current == null || directoryId == null) {
                LOG.error("Log directory {} (id {}) failed before the broker registered: the controller is not told; its replicas {} "
                    + "stay offline here until a restart", dir, directoryId, offline);
                return;
            }
            current.onLogDirFailure(directoryId, offline);
        });
        logDirFailureHandler = new io.strata.server.replica.LogDirFailureHandler(logManager.logDirFailureChannel(), replicaManager, halter);
        logDirFailureHandler.start();
        metadata.addPublisher(new ReplicationThrottles(nodeId, leaderReplicationQuota, followerReplicationQuota));
        metadata.addPublisher(replicaManager);
        metadata.addPublisher(this::applyDynamicCleanerConfig);
        metadata.startPublishing().get();
        // After the first image: a move a crash interrupted resumes once its partition is hosted again.
        logDirMoverThread = new io.strata.server.replica.LogDirMoverThread(logDirMover, time, backgroundErrors);
        logDirMoverThread.start();

        // The broker's listeners are bound now (advertised port 0 resolves to the bound port) but serve only once the broker is ready.
        shared.socketServer().start(name -> !config.isControllerListener(name));
        if (!standalone) {
            // Broker-to-broker requests (transaction markers) to the brokers' inter-broker listeners: connections of their own.
            markerClient = new InterBrokerClient(InterBrokerClient.Settings.defaults("strata-broker-" + nodeId), 1, time, new java.util.Random())
                .useTls(interBrokerTls());
        }
        lifecycle = new BrokerLifecycleManager(nodeId, shared.clusterId(), controllerApi, () -> metadata.nextOffset() - 1,
            config.getInt(ServerConfig.BROKER_HEARTBEAT_INTERVAL_MS), time);
        lifecycle.setLogDirs(new java.util.ArrayList<>(directoryIds(logManager).values()));
        lifecycle.setLogDirFailureTimeout(config.getLong(ServerConfig.LOG_DIR_FAILURE_TIMEOUT_MS), halter);
        if (controllerApi instanceof io.strata.server.cluster.RemoteController remote) {
            // A new controller, or a lost connection to it, gets a heartbeat at once (strata.broker.disconnect.fence.ms).
            BrokerLifecycleManager heartbeating = lifecycle;
            remote.onControllerChange(heartbeating::heartbeatNow);
        }
        // KIP-966: the epoch the previous run recorded at its clean shutdown tells the controller this restart was clean.
        awaitUnfenced(lifecycle.start(advertisedEndpoints(), config.getString(ServerConfig.RACK), logManager.previousBrokerEpoch()),
            startNanos);
        InternalTopic offsetsTopic = new InternalTopic(InternalTopics.CONSUMER_OFFSETS, config.getInt(ServerConfig.OFFSETS_TOPIC_NUM_PARTITIONS),
            config.getShort(ServerConfig.OFFSETS_TOPIC_REPLICATION_FACTOR), Map.of(LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.SEGMENT_BYTES, Integer.toString(config.getInt(ServerConfig.OFFSETS_TOPIC_SEGMENT_BYTES)),
                LogConfig.COMPRESSION_TYPE, "producer"), controllerApi, metadata::image, replicaManager, nodeId);
        groupCoordinator = new GroupCoordinator(new GroupCoordinatorSettings(config.getInt(ServerConfig.OFFSETS_TOPIC_NUM_PARTITIONS),
            config.getInt(ServerConfig.GROUP_MIN_SESSION_TIMEOUT_MS), config.getInt(ServerConfig.GROUP_MAX_SESSION_TIMEOUT_MS),
            config.getInt(ServerConfig.GROUP_INITIAL_REBALANCE_DELAY_MS), config.getInt(ServerConfig.GROUP_MAX_SIZE),
            config.getInt(ServerConfig.OFFSET_METADATA_MAX_BYTES), 2,
            config.getInt(ServerConfig.OFFSETS_RETENTION_MINUTES) * 60L * 1000L, config.getLong(ServerConfig.OFFSETS_RETENTION_CHECK_INTERVAL_MS)),
            offsetsTopic, time, io.strata.coordinator.group.consumer.ExecutorCoordinatorTimer::new, backgroundErrors);
        groupCoordinator.configureConsumerGroups(config.consumerGroupSettings(), new io.strata.server.api.ImageTopicsView(metadata::image));
        // Before either coordinator loads a partition: state an earlier Strata placed elsewhere moves to Kafka's partition.
        CoordinatorPlacementUpgrade placementUpgrade = new CoordinatorPlacementUpgrade(config.logDirs().get(0));
        placementUpgrade.relocate(offsetsTopic, metadata.image(), nodeId, replicaManager, time.milliseconds());
        metadata.addPublisher(offsetsTopic);
        offsetsTopic.onPartitionsLed(led -> groupCoordinator.onPartitionsLed(led.keySet()));

        ProducerIdManager producerIds = new ProducerIdManager(controllerApi, nodeId, () -> metadata.image().brokers().get(nodeId));
        InternalTopic transactionStateTopic = new InternalTopic(InternalTopics.TRANSACTION_STATE,
            config.getInt(ServerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS), config.getShort(ServerConfig.TRANSACTION_STATE_LOG_REPLICATION_FACTOR),
            Map.of(LogConfig.CLEANUP_POLICY, "compact", LogConfig.SEGMENT_BYTES, "104857600", LogConfig.COMPRESSION_TYPE, "uncompressed",
                LogConfig.MIN_IN_SYNC_REPLICAS, Integer.toString(config.getInt(ServerConfig.TRANSACTION_STATE_LOG_MIN_ISR))),
            controllerApi, metadata::image, replicaManager, nodeId);
        transactionCoordinator = new TransactionCoordinator(new TransactionCoordinatorSettings(
            config.getInt(ServerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS), config.getInt(ServerConfig.TRANSACTION_MAX_TIMEOUT_MS),
            config.getInt(ServerConfig.TRANSACTIONAL_ID_EXPIRATION_MS), config.getInt(ServerConfig.TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS),
            config.getInt(ServerConfig.TRANSACTION_REMOVE_EXPIRED_TRANSACTION_CLEANUP_INTERVAL_MS)), transactionStateTopic,
            markerClient == null ? new TransactionMarkers(replicaManager, groupCoordinator, time)
                : new TransactionMarkers(replicaManager, groupCoordinator, time, new io.strata.server.api.InterBrokerMarkerWriter(markerClient),
                    config.interBrokerListenerName()), producerIds::nextProducerIdUnchecked, time, 1,
            io.strata.coordinator.group.consumer.ExecutorCoordinatorTimer::new, backgroundErrors);
        placementUpgrade.relocate(transactionStateTopic, metadata.image(), nodeId, replicaManager, time.milliseconds());
        placementUpgrade.finish();
        metadata.addPublisher(transactionStateTopic);
        transactionStateTopic.onPartitionsLed(transactionCoordinator::onPartitionsLed);
        // KIP-890: partition leaders (and group coordinators) reach the coordinator of a transactional id here or on its node.
        AddPartitionsToTxnManager.Sender addPartitionsSender;
        if (standalone) {
            addPartitionsSender = (brokerId, host, port, request) -> java.util.concurrent.CompletableFuture.failedFuture(
                new IllegalStateException("a single node has no other transaction coordinator than its own"));
        } else {
            // Connections of their own: a slow coordinator must not delay markers, heartbeats or quorum traffic.
            addPartitionsClient = new InterBrokerClient(InterBrokerClient.Settings.defaults("strata-broker-" + nodeId + "-add-partitions"), 1, time,
                new java.util.Random()).useTls(interBrokerTls());
            addPartitionsSender = AddPartitionsToTxnManager.Sender.over(addPartitionsClient);
        }
        addPartitionsToTxn = new AddPartitionsToTxnManager(nodeId, metadata::image, transactionCoordinator::partitionFor,
            AddPartitionsToTxnManager.LocalCoordinator.of(transactionCoordinator), config.interBrokerListenerName(), addPartitionsSender);
        replicaManager.setTransactionPartitionAdder(addPartitionsToTxn::addOrVerify);

        ApiVersionsTable apiVersions = StrataServer.apiVersions();
        BrokerContext context = new BrokerContext(config, nodeId, shared.clusterId(), controllerApi, replicaManager, apiVersions, shared.features(),
            producerIds, time, groupCoordinator, offsetsTopic, transactionCoordinator, transactionStateTopic,
            shared.directoryId(), metadata, shared.quorum(), shared.remoteController(), config.authorization(() -> metadata.image().acls()));
        java.util.Map<io.strata.protocol.message.ApiMessageType, io.strata.server.api.ApiHandler> handlers = ApiHandlers.create(context);
        fetchSessions = ApiHandlers.fetchSessions(handlers);
        ApiDispatcher brokerDispatcher = new ApiDispatcher(apiVersions, handlers, context.authorization());
        for (String listener : config.listeners()) {
            String name = ServerConfig.Endpoint.parse(listener).listenerName();
            if (!config.isControllerListener(name)) {
                shared.dispatcher().register(name, brokerDispatcher);
            }
        }
        reconfiguration = new BrokerReconfiguration(config, nodeId, shared.handlerPool(), shared.socketServer(), logManager,
            new BrokerReconfiguration.Replication(leaderReplicationQuota, followerReplicationQuota, alterLogDirsQuota,
                this::replicaFetcherManager));
        metadata.addPublisher(reconfiguration);
        reconfiguration.applyLatest(metadata::image);
    }

    /**
     * The leader and follower replication throttles ({@code replication.quota.window.*} are static,
     * the rates dynamic): the rates in force in the latest image apply before any fetch, and
     * {@link BrokerReconfiguration} applies later changes.
     */
    private void startReplicationQuotas(ServerConfig config, MetadataLoader metadata, Time time) {
        int samples = config.getInt(ServerConfig.REPLICATION_QUOTA_WINDOW_NUM);
        int windowSeconds = config.getInt(ServerConfig.REPLICATION_QUOTA_WINDOW_SIZE_SECONDS);
        leaderReplicationQuota = new ReplicationQuotaManager(ReplicationQuotaManager.Side.LEADER, samples, windowSeconds, time);
        followerReplicationQuota = new ReplicationQuotaManager(ReplicationQuotaManager.Side.FOLLOWER, samples, windowSeconds, time);
        ServerConfig effective = DynamicBrokerConfig.effectiveConfig(config, metadata.image(), config.nodeId());
        leaderReplicationQuota.updateQuota(effective.getLong(ServerConfig.LEADER_REPLICATION_THROTTLED_RATE));
        followerReplicationQuota.updateQuota(effective.getLong(ServerConfig.FOLLOWER_REPLICATION_THROTTLED_RATE));
        alterLogDirsQuota = new ReplicationQuotaManager(ReplicationQuotaManager.Side.ALTER_LOG_DIRS, samples, windowSeconds, time);
        alterLogDirsQuota.updateQuota(effective.getLong(ServerConfig.REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND));
        replicaManager.setLeaderReplicationQuota(leaderReplicationQuota);
    }

    /** The leader side's replication throttle, or null before start-up creates it. */
    ReplicationQuotaManager leaderReplicationQuota() {
        return leaderReplicationQuota;
    }

    /** The Fetch handler's incremental fetch sessions, for the metrics (null until start-up creates the handlers). */
    io.strata.server.api.FetchSessionStatistics fetchSessions() {
        return fetchSessions;
    }

    /** The leader, follower and alter-log-dirs replication throttles (in that order), or null before start-up creates them. */
    java.util.List<ReplicationQuotaManager> replicationQuotas() {
        ReplicationQuotaManager leader = leaderReplicationQuota;
        ReplicationQuotaManager follower = followerReplicationQuota;
        ReplicationQuotaManager alterLogDirs = alterLogDirsQuota;
        return leader == null || follower == null || alterLogDirs == null ? null : java.util.List.of(leader, follower, alterLogDirs);
    }

    /** The follower side's replication throttle, or null before start-up creates it. */
    ReplicationQuotaManager followerReplicationQuota() {
        return followerReplicationQuota;
    }

    /**
     * The two halves of replication before the first image is applied: leaders send their ISR
     * changes to the controller through one {@link AlterPartitionManager} (AlterPartition v3, with
     * this broker's epoch once it registered); partitions this node follows are fetched from their
     * leaders' inter-broker listeners ({@code num.replica.fetchers} fetchers per leader, sharing one
     * event-loop thread).
     */
    private void startReplication(ServerConfig config, ControllerApi controllerApi, MetadataLoader metadata, LogManager logManager, Time time,
                                  BackgroundErrors backgroundErrors) {
        int nodeId = config.nodeId();
        java.util.function.LongSupplier brokerEpoch = () -> {
            BrokerLifecycleManager current = lifecycle;
            return current == null ? -1L : current.brokerEpoch();
        };
        alterPartitionManager = new AlterPartitionManager(nodeId, brokerEpoch,
            request -> controllerApi.alterPartition(request, AlterPartitionManager.REQUEST_VERSION), logManager.scheduler(), time);
        alterPartitionManager.setBackgroundErrors(backgroundErrors);
        replicaManager.setIsrChangeSubmitter(alterPartitionManager);
        // KIP-966 strict min ISR: while ELR is on, a leader's high watermark waits for min.insync.replicas members of the ISR.
        replicaManager.setStrictMinIsr(() -> io.strata.metadata.ReplicationControl.elrEnabled(metadata.image()));
        String listener = config.interBrokerListenerName();
        ReplicaFetcherConfig fetcherConfig = ReplicaFetcherConfig.from(config);
        RemoteLeaderEndpoint.Factory endpoints = new RemoteLeaderEndpoint.Factory(nodeId, fetcherConfig, leaderId -> {
            BrokerRegistration leader = metadata.image().brokers().get(leaderId);
            BrokerRegistration.Endpoint endpoint = leader == null ? null : leader.endpoint(listener);
            return endpoint == null ? java.util.Optional.empty()
                : java.util.Optional.of(new InterBrokerClient.Endpoint(leaderId, endpoint.host(), endpoint.port()));
        }, time, new java.util.Random()).useTls(config.isStandaloneDefault() ? null : interBrokerTls());
        replicaFetchers = new ReplicaFetchers(nodeId, new ReplicaFetcherManager(nodeId, brokerEpoch, fetcherConfig, endpoints, time,
            backgroundErrors, followerReplicationQuota), endpoints, replicaManager::onFollowerHighWatermark, shared.metrics().topicMetrics()::recordReplicationBytesIn,
            shared.metrics().topicMetrics()::recordReassignmentBytesIn);
        replicaManager.setFollowerFetching(replicaFetchers);
    }

    /**
     * Waits until this node's image holds everything committed when it first learned the
     * quorum's high watermark (a single voter: once it elected itself and committed its log), as a
     * Kafka broker catches up with the metadata before it registers.
     */
    private void awaitMetadata(long startNanos, QuorumController localController) throws Exception {
        ServerConfig config = shared.config();
        MetadataLoader metadata = shared.metadata();
        RaftNode quorum = shared.quorum();
        boolean standalone = config.isStandaloneDefault();
        long deadline = startNanos + TimeUnit.MILLISECONDS.toNanos(config.getInt(ServerConfig.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS));
        while (standalone ? !localController.isActive() : quorum.leaderId() < 0 || quorum.highWatermark() <= 0) {
            if (metadata.failure() != null) {
                break;
            }
            if (System.nanoTime() > deadline || !quorum.isRunning()) {
                throw new IllegalStateException("the metadata quorum " + (standalone ? "did not elect this node" : "has no leader")
                    + " within " + config.getInt(ServerConfig.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS) + " ms" + (quorum.isRunning() ? "" : ": it stopped"));
            }
            Thread.sleep(1);
        }
        metadata.whenApplied(quorum.highWatermark()).get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (metadata.failure() != null) {
            throw new IllegalStateException("could not apply the metadata log", metadata.failure());
        }
    }

    /**
     * Waits until the controller unfenced this broker, this node's image shows it, and every
     * publisher has applied that image (the image is current before its publishers run: the
     * partitions the same batch made this node lead are led by the replica manager only then).
     */
    private void awaitUnfenced(java.util.concurrent.CompletableFuture<Long> unfenced, long startNanos) throws Exception {
        ServerConfig config = shared.config();
        long deadline = startNanos + TimeUnit.MILLISECONDS.toNanos(config.getInt(ServerConfig.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS));
        try {
            unfenced.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the controller did not register and unfence broker " + config.nodeId() + " within "
                + config.getInt(ServerConfig.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS) + " ms");
        }
        while (true) {
            io.strata.metadata.BrokerRegistration registration = shared.metadata().image().brokers().get(config.nodeId());
            if (registration != null && !registration.fenced() && registration.epoch() == lifecycle.brokerEpoch()) {
                shared.metadata().whenApplied(shared.metadata().image().offset() + 1)
                    .get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the metadata of this node never showed broker " + config.nodeId() + " unfenced");
            }
            Thread.sleep(1);
        }
    }

    /**
     * Applies a change of the dynamic log.cleaner.* settings (per broker or cluster default) to
     * the log cleaner, which replaces its threads. Runs on the metadata publishing thread, so the
     * AlterConfigs that made the change is answered once the new threads run. A failure is
     * logged and leaves the previous settings in force.
     */
    private void applyDynamicCleanerConfig(MetadataImage previous, MetadataImage current) {
        ServerConfig config = shared.config();
        if (!DynamicBrokerConfig.changed(previous, current, config.nodeId())) {
            return;
        }
        try {
            shared.logManager().reconfigureCleaner(DynamicBrokerConfig.cleanerConfig(config, current, config.nodeId()));
        } catch (RuntimeException e) {
            LOG.error("Could not apply the dynamic log cleaner settings; the previous ones stay in force", e);
        }
    }

    /** Advertised endpoints: {@code advertised.listeners}, with port 0 and empty hosts filled from the bound sockets. */
    private List<BrokerRegistration.Endpoint> advertisedEndpoints() throws IOException {
        SocketServer socketServer = shared.socketServer();
        List<BrokerRegistration.Endpoint> endpoints = new ArrayList<>();
        for (ServerConfig.Endpoint endpoint : shared.config().advertisedListeners()) {
            int port = endpoint.port() == 0 ? socketServer.boundPort(endpoint.listenerName()) : endpoint.port();
            String host = endpoint.host();
            if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::")) {
                host = InetAddress.getLocalHost().getCanonicalHostName();
            }
            endpoints.add(new BrokerRegistration.Endpoint(endpoint.listenerName(), host, port, (short) 0));
        }
        return endpoints;
    }

    // ---------------------------------------------------------------- shutdown steps, in the order StrataServer calls them

    /** The {@code directory.id} of each data directory of {@code log.dirs}, by normalised absolute path. */
    private static Map<java.nio.file.Path, java.util.UUID> directoryIds(LogManager logManager) throws java.io.IOException {
        Map<java.nio.file.Path, java.util.UUID> ids = new java.util.LinkedHashMap<>();
        for (java.nio.file.Path dir : logManager.logDirs()) {
            ids.put(dir.toAbsolutePath().normalize(), DataDirectories.directoryId(dir));
        }
        return ids;
    }

    /** While still serving: the controller moves this broker's leaderships away first (if enabled); then heartbeats stop. */
    void shutdownLifecycle() {
        if (lifecycle != null) {
            if (shared.config().getBoolean(ServerConfig.CONTROLLED_SHUTDOWN_ENABLE)) {
                // While still serving: the controller moves this broker's leaderships away first.
                lifecycle.controlledShutdown(30_000);
            }
            lifecycle.close();
            // Recorded in the clean-shutdown markers the log manager writes when it closes (Kafka's logManager.shutdown(brokerEpoch)).
            shared.logManager().setCleanShutdownBrokerEpoch(lifecycle.brokerEpoch());
        }
    }

    /** After the listeners closed: the transaction and group coordinators, the replicas and the purgatories. */
    void closeComponents() {
        if (addPartitionsToTxn != null) {
            addPartitionsToTxn.close();
        }
        if (transactionCoordinator != null) {
            transactionCoordinator.close();
        }
        if (groupCoordinator != null) {
            groupCoordinator.close();
        }
        if (logDirMoverThread != null) {
            logDirMoverThread.close(); // no copy or swap once the replicas close; a move resumes at the next start
        }
        if (logDirFailureHandler != null) {
            logDirFailureHandler.close();
        }
        if (replicaFetchers != null) {
            try {
                replicaFetchers.close(); // no follower appends once the replicas close
            } catch (Exception e) {
                LOG.warn("Stopping the replica fetchers failed", e);
            }
        }
        if (replicaManager != null) {
            replicaManager.close();
        }
        if (producePurgatory != null) {
            producePurgatory.shutdown();
        }
        if (fetchPurgatory != null) {
            fetchPurgatory.shutdown();
        }
    }

    /** The broker's own connections: transaction markers and AddPartitionsToTxn to other brokers. */
    void closeClients() {
        if (markerClient != null) {
            markerClient.close();
        }
        if (addPartitionsClient != null) {
            addPartitionsClient.close();
        }
    }

    // ---------------------------------------------------------------- accessors: null until start-up creates the component

    ReplicaManager replicaManager() {
        return replicaManager;
    }

    GroupCoordinator groupCoordinator() {
        return groupCoordinator;
    }

    TransactionCoordinator transactionCoordinator() {
        return transactionCoordinator;
    }

    /** The follower side's fetchers, or null before replication starts. */
    ReplicaFetcherManager replicaFetcherManager() {
        ReplicaFetchers fetchers = replicaFetchers;
        return fetchers == null ? null : fetchers.manager();
    }

    DelayedOperationPurgatory<DelayedProduce> producePurgatory() {
        return producePurgatory;
    }

    DelayedOperationPurgatory<DelayedFetch> fetchPurgatory() {
        return fetchPurgatory;
    }

    /** Dynamic broker settings that could not be applied since start-up (0 before start-up). */
    long dynamicConfigFailures() {
        BrokerReconfiguration current = reconfiguration;
        return current == null ? 0 : current.failures();
    }

    /** TLS for this broker's connections to other brokers' inter-broker listeners, when that listener is SSL; else null. */
    private io.strata.server.security.SslEngineFactory interBrokerTls() {
        return io.strata.server.security.SslEngineFactory.forOwnConnections(shared.config(), shared.config().interBrokerListenerName());
    }
}
