package io.strata.server;

import io.strata.common.BackgroundErrors;
import io.strata.common.Time;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.ConfigResource;
import io.strata.metadata.ControllerSettings;
import io.strata.metadata.MetadataCommitListener;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.MetadataLoader;
import io.strata.metadata.MetadataRecords;
import io.strata.metadata.QuorumController;
import io.strata.raft.FileQuorumStateStore;
import io.strata.raft.FileRaftLog;
import io.strata.raft.RaftClient;
import io.strata.raft.RaftConfig;
import io.strata.raft.RaftNode;
import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.message.ApiMessageType;
import io.strata.server.api.ApiDispatcher;
import io.strata.server.api.ApiHandlers;
import io.strata.server.api.ControllerApis;
import io.strata.server.cluster.AddPartitionsToTxnManager;
import io.strata.server.cluster.BrokerLifecycleManager;
import io.strata.server.cluster.QuorumPeers;
import io.strata.server.cluster.RemoteController;
import io.strata.server.network.ListenerDispatcher;
import io.strata.server.network.client.InterBrokerClient;
import io.strata.metadata.ControllerApi;
import io.strata.server.api.BrokerContext;
import io.strata.server.api.Features;
import io.strata.server.api.InternalTopic;
import io.strata.server.api.InternalTopics;
import io.strata.server.api.TransactionMarkers;
import io.strata.coordinator.transaction.TransactionCoordinator;
import io.strata.coordinator.transaction.TransactionCoordinatorSettings;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.group.GroupCoordinatorSettings;
import io.strata.server.api.ProducerIdManager;
import io.strata.server.config.DynamicBrokerConfig;
import io.strata.server.config.ServerConfig;
import io.strata.server.metrics.BrokerMetrics;
import io.strata.server.network.RequestChannel;
import io.strata.server.network.RequestHandlerPool;
import io.strata.server.network.SocketServer;
import io.strata.server.purgatory.DelayedOperationPurgatory;
import io.strata.server.replica.DelayedFetch;
import io.strata.server.replica.DelayedProduce;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.LogConfig;
import io.strata.storage.LogManager;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import io.strata.storage.cleaner.CleanerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A Strata node: broker and controller roles in one process over a single-voter metadata
 * quorum. Start-up order: lock every data directory (a second process on the same directories
 * stops here, before it reads or recovers anything), format/check them, replay the metadata log into the
 * image, load the partition logs, open partitions for the image, bind the listeners, register
 * the broker, then start handling requests. {@link #close()} is the controlled shutdown:
 * stop accepting, finish in-flight requests, flush, write checkpoints and the clean-shutdown
 * marker, so the next start skips recovery.
 */
public final class StrataServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StrataServer.class);

    private final ServerConfig config;
    private final Time time;
    /** Failures of background work in every component, by task (exported as strata_server_background_errors_total). */
    private final BackgroundErrors backgroundErrors = new BackgroundErrors();
    // Volatile: the metrics endpoint reads these while start-up creates them.
    private volatile LogManager logManager;
    private UnifiedLog metadataUnifiedLog;
    private volatile MetadataLoader metadata;
    private volatile QuorumController controller;
    private volatile RaftNode quorum;
    private volatile InterBrokerClient interBrokerClient;
    private volatile InterBrokerClient controllerClient;
    private volatile InterBrokerClient markerClient;
    private volatile InterBrokerClient addPartitionsClient;
    private volatile AddPartitionsToTxnManager addPartitionsToTxn;
    private volatile QuorumPeers peers;
    private volatile RemoteController remoteController;
    private volatile BrokerLifecycleManager lifecycle;
    private final ListenerDispatcher dispatcher = new ListenerDispatcher();
    private volatile ReplicaManager replicaManager;
    private volatile DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private volatile DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private volatile RequestChannel requestChannel;
    private volatile SocketServer socketServer;
    private volatile RequestHandlerPool handlerPool;
    private volatile BrokerReconfiguration reconfiguration;
    private volatile GroupCoordinator groupCoordinator;
    private volatile TransactionCoordinator transactionCoordinator;
    private volatile BrokerMetrics metrics = BrokerMetrics.disabled();
    private String clusterId;
    private volatile boolean started;
    private volatile boolean metadataLoaded;
    private volatile boolean uncleanStart;
    private volatile boolean shuttingDown;
    private boolean closed;

    public StrataServer(ServerConfig config, Time time) {
        this.config = config;
        this.time = time;
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
            .add(ApiMessageType.DESCRIBE_LOG_DIRS, 1, 5)
            .add(ApiMessageType.OFFSET_FOR_LEADER_EPOCH, 2, 4)
            // Features are changed through the controller (FeatureLevelRecords); the quorum is this node alone.
            .add(ApiMessageType.UPDATE_FEATURES, 0, 2)
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
            .build();
    }

    public void startup() throws Exception {
        long startNanos = System.nanoTime();
        // First, so that /health/ready can be watched while the logs load.
        metrics = BrokerMetrics.start(this, config);
        int nodeId = config.nodeId();
        List<Path> logDirs = config.logDirs();
        Map<String, String> topicDefaults = config.topicDefaults();
        CleanerConfig cleanerConfig = config.cleanerConfig();
        logManager = new LogManager(new LogManager.Settings(logDirs, config.getInt(ServerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR),
            config.getLong(ServerConfig.LOG_RETENTION_CHECK_INTERVAL_MS), config.getLong(ServerConfig.LOG_FLUSH_SCHEDULER_INTERVAL_MS),
            config.getInt(ServerConfig.LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS), config.getInt(ServerConfig.PRODUCER_ID_EXPIRATION_MS),
            config.getInt(ServerConfig.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS), config.fsyncOnAck()), cleanerConfig, time, backgroundErrors);
        logManager.setFlushObserver(metrics.flushObserver());
        // Before anything reads a directory: recovering __cluster_metadata below truncates it.
        logManager.lockDirectories();
        if (io.strata.server.cluster.DynamicQuorum.isDynamic(config)) {
            io.strata.server.cluster.DynamicQuorum.requireFormatted(config, logDirs.get(0)); // KIP-853: `strata format` first
        }
        clusterId = DataDirectories.ensureFormatted(logDirs, nodeId, config.getString(ServerConfig.CLUSTER_ID));
        boolean cleanShutdown = Files.exists(logDirs.get(0).resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        uncleanStart = !cleanShutdown;

        Path metadataDir = logDirs.get(0).resolve(MetadataRecords.TOPIC + "-0");
        LogConfig metadataConfig = LogConfig.of(Map.of(), Map.of(LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1"));
        metadataUnifiedLog = UnifiedLog.load(metadataDir, new TopicPartition(MetadataRecords.TOPIC, 0), metadataConfig, time,
            logManager.scheduler(), new UnifiedLog.LoadParams(0, 0, cleanShutdown, Long.MAX_VALUE / 4, true));
        metadataUnifiedLog.setFlushObserver(metrics.flushObserver());
        Features features = new Features();
        metadata = new MetadataLoader(nodeId, backgroundErrors);
        // Every node snapshots its own copy of the metadata log (KIP-630); the quorum then drops the log before the snapshot.
        metadata.enableSnapshots((endOffset, epoch, timestampMs, values) -> quorum.createSnapshot(new io.strata.raft.OffsetAndEpoch(endOffset, epoch),
                timestampMs, values), config.getLong(ServerConfig.METADATA_LOG_MAX_RECORD_BYTES_BETWEEN_SNAPSHOTS),
            config.getLong(ServerConfig.METADATA_LOG_MAX_SNAPSHOT_INTERVAL_MS), time::milliseconds);
        boolean standalone = config.isStandaloneDefault();
        if (standalone || config.isController()) {
            controller = new QuorumController(new ControllerSettings(nodeId, config.getInt(ServerConfig.NUM_PARTITIONS),
                config.getShort(ServerConfig.DEFAULT_REPLICATION_FACTOR), config.getBoolean(ServerConfig.DELETE_TOPIC_ENABLE), topicDefaults, clusterId,
                config.getInt(ServerConfig.BROKER_SESSION_TIMEOUT_MS)), features.bootstrapLevels(config.formatFeatures()), time,
                // A single node answers a change once its own image (and every publisher: logs, coordinators) has it, so a client
                // reads its writes; a cluster's controller answers at commit, as Kafka's does (brokers catch up on their own).
                standalone ? metadata::whenApplied : offset -> java.util.concurrent.CompletableFuture.completedFuture(null));
        }
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
                config.getInt(ServerConfig.CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS)), 1, time, new java.util.Random());
            peers = new QuorumPeers(config.quorumVoters(), interBrokerClient);
            voters = peers.voterIds();
            sender = peers;
        }
        io.strata.raft.QuorumSetup quorumSetup = !standalone && io.strata.server.cluster.DynamicQuorum.isDynamic(config)
            ? io.strata.server.cluster.DynamicQuorum.setup(config, logDirs.get(0), DataDirectories.directoryId(logDirs.get(0)))
            : io.strata.raft.QuorumSetup.staticQuorum(nodeId, voters);
        quorum = new RaftNode(quorumSetup, clusterId, standalone ? RaftConfig.DEFAULTS : config.raftConfig(), new FileRaftLog(metadataUnifiedLog),
            new FileQuorumStateStore(metadataDir), sender, time, new java.util.Random(), new RaftClient.Listener() { },
            new MetadataCommitListener(metadata, controller));
        if (quorumSetup.isDynamic()) {
            peers.useVoterSet(quorum::publishedVoterSet, quorumSetup.listenerName());
        }
        if (controller != null) {
            controller.start(quorum);
        }
        requestChannel = new RequestChannel(config.getInt(ServerConfig.QUEUED_MAX_REQUESTS));
        socketServer = new SocketServer(config, requestChannel, metrics.networkObserver());
        handlerPool = new RequestHandlerPool(config.getInt(ServerConfig.NUM_IO_THREADS), requestChannel, dispatcher);
        handlerPool.start();
        ApiVersionsTable apiVersions = apiVersions();
        java.util.UUID directoryId = DataDirectories.directoryId(logDirs.get(0));
        if (!standalone) {
            // An attempt at the controller that gets no answer in a few quorum timeouts goes to whoever leads by then.
            controllerClient = new InterBrokerClient(withRequestTimeout(InterBrokerClient.Settings.defaults("strata-broker-" + nodeId + "-to-controller"),
                2 * config.getInt(ServerConfig.CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS)), 1, time,
                new java.util.Random());
            remoteController = new RemoteController(quorum, peers, controllerClient, time,
                config.getInt(ServerConfig.CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS) * 15L);
        }
        if (!standalone && config.isController()) {
            // The controller's listeners first: the quorum forms over them, and brokers register through them.
            BrokerContext controllerContext = new BrokerContext(config, nodeId, clusterId, controller, null, ControllerApis.apiVersions(), features,
                null, time, null, null, null, null, directoryId, metadata, quorum, null);
            ApiDispatcher controllerDispatcher = new ApiDispatcher(ControllerApis.apiVersions(), ControllerApis.create(controllerContext, controller, quorum,
                peers::endpoints));
            for (String name : config.controllerListenerNames()) {
                dispatcher.register(name, controllerDispatcher);
            }
            socketServer.start(name -> isControllerListener(name));
        }
        if (!standalone && !config.isBroker()) {
            metadataLoaded = true;
            started = true;
            LOG.info("Strata controller {} of cluster {} started in {} ms (voters {}, listening on {})", nodeId, clusterId,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), voters, config.listeners());
            return;
        }
        awaitMetadata(startNanos, standalone);
        metadataLoaded = true;
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
        replicaManager.setTopicMetrics(metrics.topicMetrics());
        replicaManager.setBackgroundErrors(backgroundErrors);
        metadata.addPublisher(replicaManager);
        metadata.addPublisher(this::applyDynamicCleanerConfig);
        metadata.startPublishing().get();

        // The broker's listeners are bound now (advertised port 0 resolves to the bound port) but serve only once the broker is ready.
        socketServer.start(name -> !isControllerListener(name));
        ControllerApi controllerApi = standalone ? controller : remoteController;
        if (!standalone) {
            // Broker-to-broker requests (transaction markers) to the brokers' inter-broker listeners: connections of their own.
            markerClient = new InterBrokerClient(InterBrokerClient.Settings.defaults("strata-broker-" + nodeId), 1, time, new java.util.Random());
        }
        lifecycle = new BrokerLifecycleManager(nodeId, clusterId, controllerApi, () -> metadata.nextOffset() - 1,
            config.getInt(ServerConfig.BROKER_HEARTBEAT_INTERVAL_MS), time);
        awaitUnfenced(lifecycle.start(advertisedEndpoints(), config.getString(ServerConfig.RACK)), startNanos);
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
                new java.util.Random());
            addPartitionsSender = AddPartitionsToTxnManager.Sender.over(addPartitionsClient);
        }
        addPartitionsToTxn = new AddPartitionsToTxnManager(nodeId, metadata::image, transactionCoordinator::partitionFor,
            AddPartitionsToTxnManager.LocalCoordinator.of(transactionCoordinator), config.interBrokerListenerName(), addPartitionsSender);
        replicaManager.setTransactionPartitionAdder(addPartitionsToTxn::addOrVerify);

        BrokerContext context = new BrokerContext(config, nodeId, clusterId, controllerApi, replicaManager, apiVersions, features,
            producerIds, time, groupCoordinator, offsetsTopic, transactionCoordinator, transactionStateTopic,
            directoryId, metadata, quorum, remoteController);
        ApiDispatcher brokerDispatcher = new ApiDispatcher(apiVersions, ApiHandlers.create(context));
        for (String listener : config.listeners()) {
            String name = ServerConfig.Endpoint.parse(listener).listenerName();
            if (!isControllerListener(name)) {
                dispatcher.register(name, brokerDispatcher);
            }
        }
        reconfiguration = new BrokerReconfiguration(config, nodeId, handlerPool, socketServer, logManager);
        metadata.addPublisher(reconfiguration);
        reconfiguration.applyLatest(metadata::image);
        started = true;
        LOG.info("Strata node {} of cluster {} started in {} ms (metadata at offset {}, {} partitions, listening on {})", nodeId, clusterId,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), metadata.nextOffset(), replicaManager.partitions().size(), config.listeners());
    }

    private static InterBrokerClient.Settings withRequestTimeout(InterBrokerClient.Settings settings, int requestTimeoutMs) {
        return new InterBrokerClient.Settings(settings.clientId(), Math.min(settings.connectTimeoutMs(), requestTimeoutMs), requestTimeoutMs,
            settings.reconnectBackoffMs(), settings.reconnectBackoffMaxMs(), settings.maxResponseBytes(), settings.maxQueuedPerNode());
    }

    private boolean isControllerListener(String listenerName) {
        return config.isControllerListener(listenerName);
    }

    /**
     * Waits until this node's image holds everything committed when it first learned the
     * quorum's high watermark (a single voter: once it elected itself and committed its log), as a
     * Kafka broker catches up with the metadata before it registers.
     */
    private void awaitMetadata(long startNanos, boolean standalone) throws Exception {
        long deadline = startNanos + TimeUnit.MILLISECONDS.toNanos(config.getInt(ServerConfig.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS));
        while (standalone ? !controller.isActive() : quorum.leaderId() < 0 || quorum.highWatermark() <= 0) {
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

    /** Waits until the controller unfenced this broker and this node's image shows it. */
    private void awaitUnfenced(java.util.concurrent.CompletableFuture<Long> unfenced, long startNanos) throws Exception {
        long deadline = startNanos + TimeUnit.MILLISECONDS.toNanos(config.getInt(ServerConfig.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS));
        try {
            unfenced.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the controller did not register and unfence broker " + config.nodeId() + " within "
                + config.getInt(ServerConfig.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS) + " ms");
        }
        while (true) {
            io.strata.metadata.BrokerRegistration registration = metadata.image().brokers().get(config.nodeId());
            if (registration != null && !registration.fenced() && registration.epoch() == lifecycle.brokerEpoch()) {
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
        if (!DynamicBrokerConfig.changed(previous, current, config.nodeId())) {
            return;
        }
        try {
            logManager.reconfigureCleaner(DynamicBrokerConfig.cleanerConfig(config, current, config.nodeId()));
        } catch (RuntimeException e) {
            LOG.error("Could not apply the dynamic log cleaner settings; the previous ones stay in force", e);
        }
    }

    /** Advertised endpoints: {@code advertised.listeners}, with port 0 and empty hosts filled from the bound sockets. */
    private List<BrokerRegistration.Endpoint> advertisedEndpoints() throws IOException {
        List<BrokerRegistration.Endpoint> endpoints = new ArrayList<>();
        for (ServerConfig.Endpoint endpoint : config.advertisedListeners()) {
            int port = endpoint.port() == 0 ? socketServer.boundPort(endpoint.listenerName()) : endpoint.port();
            String host = endpoint.host();
            if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::")) {
                host = InetAddress.getLocalHost().getCanonicalHostName();
            }
            endpoints.add(new BrokerRegistration.Endpoint(endpoint.listenerName(), host, port, (short) 0));
        }
        return endpoints;
    }

    public boolean isStarted() {
        return started;
    }

    public String clusterId() {
        return clusterId;
    }

    /** The bound port of the first broker listener (of the first listener on a controller-only node). */
    public int boundPort() {
        for (String listener : config.listeners()) {
            String name = ServerConfig.Endpoint.parse(listener).listenerName();
            if (!isControllerListener(name) || !config.isBroker()) {
                return socketServer.boundPort(name);
            }
        }
        return socketServer.boundPort(socketServer.firstListenerName());
    }

    public int boundPort(String listenerName) {
        return socketServer.boundPort(listenerName);
    }

    public ReplicaManager replicaManager() {
        return replicaManager;
    }

    public QuorumController controller() {
        return controller;
    }

    /** This node's view of the cluster metadata (null before start-up creates it). */
    public MetadataLoader metadata() {
        return metadata;
    }

    /** The first offset this node's metadata log still holds (above 0 once a snapshot let it drop the entries before). */
    public long metadataLogStartOffset() {
        UnifiedLog log = metadataUnifiedLog;
        return log == null ? 0 : log.logStartOffset();
    }

    /** This node's replica of the metadata quorum (null before start-up creates it). */
    public RaftNode quorum() {
        return quorum;
    }

    public SocketServer socketServer() {
        return socketServer;
    }

    public ServerConfig config() {
        return config;
    }

    public int nodeId() {
        return config.nodeId();
    }

    // Accessors for the metrics endpoint: null until start-up creates the component.

    public LogManager logManager() {
        return logManager;
    }

    public GroupCoordinator groupCoordinator() {
        return groupCoordinator;
    }

    public TransactionCoordinator transactionCoordinator() {
        return transactionCoordinator;
    }

    public RequestChannel requestChannel() {
        return requestChannel;
    }

    public RequestHandlerPool requestHandlerPool() {
        return handlerPool;
    }

    /** Dynamic broker settings that could not be applied since start-up (0 before start-up). */
    public long dynamicConfigFailures() {
        BrokerReconfiguration current = reconfiguration;
        return current == null ? 0 : current.failures();
    }

    public DelayedOperationPurgatory<DelayedProduce> producePurgatory() {
        return producePurgatory;
    }

    public DelayedOperationPurgatory<DelayedFetch> fetchPurgatory() {
        return fetchPurgatory;
    }

    /** Whether the metadata log has been replayed into the image. */
    public boolean isMetadataLoaded() {
        return metadataLoaded;
    }

    /** Whether this start follows an unclean shutdown (so loading the logs recovers them). */
    public boolean isRecoveringFromUncleanShutdown() {
        return uncleanStart;
    }

    public boolean isShuttingDown() {
        return shuttingDown;
    }

    /** The metrics endpoint's bound port (set before the logs load), or -1 if metrics are disabled or not started. */
    public int metricsPort() {
        return metrics.port();
    }

    /** Failures of background work so far, by task; every component of this node counts into it. */
    public BackgroundErrors backgroundErrors() {
        return backgroundErrors;
    }

    /** This broker's metrics (a disabled instance when metrics.enabled=false). */
    public BrokerMetrics metrics() {
        return metrics;
    }

    /** Controlled shutdown. Safe to call more than once and after a failed start. */
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
            if (lifecycle != null) {
                if (config.getBoolean(ServerConfig.CONTROLLED_SHUTDOWN_ENABLE)) {
                    // While still serving: the controller moves this broker's leaderships away first.
                    lifecycle.controlledShutdown(30_000);
                }
                lifecycle.close();
            }
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
            if (addPartitionsToTxn != null) {
                addPartitionsToTxn.close();
            }
            if (transactionCoordinator != null) {
                transactionCoordinator.close();
            }
            if (groupCoordinator != null) {
                groupCoordinator.close();
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
            if (interBrokerClient != null) {
                interBrokerClient.close();
            }
            if (controllerClient != null) {
                controllerClient.close();
            }
            if (markerClient != null) {
                markerClient.close();
            }
            if (addPartitionsClient != null) {
                addPartitionsClient.close();
            }
            if (controller != null) {
                controller.close();
            }
            if (metadata != null) {
                metadata.close();
            }
            if (metadataUnifiedLog != null) {
                metadataUnifiedLog.flush(metadataUnifiedLog.logEndOffset());
                metadataUnifiedLog.close();
            }
            if (logManager != null) {
                logManager.close();
            }
        } catch (Exception e) {
            LOG.error("Error during shutdown", e);
        }
        metrics.close();
        LOG.info("Shut down in {} ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
    }
}
