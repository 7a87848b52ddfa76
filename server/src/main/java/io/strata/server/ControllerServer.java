package io.strata.server;

import io.strata.metadata.ControllerSettings;
import io.strata.metadata.QuorumController;
import io.strata.raft.RaftNode;
import io.strata.server.api.ApiDispatcher;
import io.strata.server.api.BrokerContext;
import io.strata.server.api.ControllerApis;
import io.strata.server.config.ServerConfig;

/**
 * The controller role of a node ({@code process.roles} has {@code controller}, or the
 * zero-config standalone node): the {@link QuorumController} (its event loop, broker heartbeats
 * and sessions) and, on a cluster node, the controller listeners served by {@link ControllerApis}.
 *
 * <p>Start-up, as {@link StrataServer} sequences it: {@link #createController} once the metadata
 * log is open (the quorum's commit listener feeds the controller, so it exists before the
 * quorum), {@link #start} once the quorum exists, {@link #startListeners} once the network
 * layer does. Start-up and shutdown run on one thread; {@link #controller()} is volatile for
 * readers elsewhere.
 */
final class ControllerServer {
    private final SharedServer shared;
    private volatile QuorumController controller;
    private volatile io.strata.server.cluster.BrokerReachabilityProbe reachabilityProbe;

    ControllerServer(SharedServer shared) {
        this.shared = shared;
    }

    /** Creates the controller over the cluster id and the features the metadata log was formatted with. */
    void createController() {
        if (controller != null) {
            throw new IllegalStateException("the controller of node " + shared.config().nodeId() + " was already created");
        }
        ServerConfig config = shared.config();
        boolean standalone = config.isStandaloneDefault();
        io.strata.metadata.MetadataLoader metadata = shared.metadata();
        controller = new QuorumController(new ControllerSettings(config.nodeId(), config.getInt(ServerConfig.NUM_PARTITIONS),
            config.getShort(ServerConfig.DEFAULT_REPLICATION_FACTOR), config.getBoolean(ServerConfig.DELETE_TOPIC_ENABLE), config.topicDefaults(),
            shared.clusterId(), config.getInt(ServerConfig.BROKER_SESSION_TIMEOUT_MS), config.getInt(ServerConfig.METADATA_MAX_IDLE_INTERVAL_MS),
            config.getInt(ServerConfig.STRATA_BROKER_DISCONNECT_FENCE_MS)),
            new io.strata.metadata.ElectionSettings(config.getBoolean(ServerConfig.AUTO_LEADER_REBALANCE_ENABLE),
                java.util.concurrent.TimeUnit.SECONDS.toMillis(config.getLong(ServerConfig.LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS)),
                io.strata.metadata.ElectionSettings.DEFAULTS.uncleanLeaderElectionCheckIntervalMs()),
            shared.features().bootstrapLevels(config.formatFeatures()),
            shared.time(),
            // A single node answers a change once its own image (and every publisher: logs, coordinators) has it, so a client
            // reads its writes; a cluster's controller answers at commit, as Kafka's does (brokers catch up on their own).
            standalone ? metadata::whenApplied : offset -> java.util.concurrent.CompletableFuture.completedFuture(null));
    }

    /** How often the brokers a new active controller has not heard from are probed (the dead-broker fast path after a failover). */
    static final long REACHABILITY_PROBE_INTERVAL_MS = 500;

    /**
     * Starts the controller on the quorum (it becomes active when this node leads) and, on a
     * cluster node with {@code strata.broker.disconnect.fence.ms} on, the probe of brokers not yet
     * heard from after a failover.
     */
    void start(RaftNode quorum) {
        controller.start(quorum);
        ServerConfig config = shared.config();
        if (!config.isStandaloneDefault() && config.getInt(ServerConfig.STRATA_BROKER_DISCONNECT_FENCE_MS) > 0) {
            reachabilityProbe = io.strata.server.cluster.BrokerReachabilityProbe.start(controller, config.nodeId(),
                REACHABILITY_PROBE_INTERVAL_MS);
        }
    }

    /**
     * On a cluster node, registers the controller listeners and starts them first: the quorum
     * forms over them, and brokers register through them. The standalone node has none.
     */
    void startListeners() throws InterruptedException {
        ServerConfig config = shared.config();
        if (config.isStandaloneDefault()) {
            return;
        }
        BrokerContext controllerContext = new BrokerContext(config, config.nodeId(), shared.clusterId(), controller, null, ControllerApis.apiVersions(),
            shared.features(), null, shared.time(), null, null, null, null, shared.directoryId(), shared.metadata(), shared.quorum(), null,
            config.authorization(() -> shared.metadata().image().acls()));
        ApiDispatcher controllerDispatcher = new ApiDispatcher(ControllerApis.apiVersions(), ControllerApis.create(controllerContext, controller,
            shared.quorum(), shared.peers()::endpoints), controllerContext.authorization());
        for (String name : config.controllerListenerNames()) {
            shared.dispatcher().register(name, controllerDispatcher);
        }
        shared.socketServer().start(name -> config.isControllerListener(name));
    }

    /** The dead-broker probe, or null when it does not run (standalone node, or strata.broker.disconnect.fence.ms off). */
    io.strata.server.cluster.BrokerReachabilityProbe reachabilityProbe() {
        return reachabilityProbe;
    }

    /** The controller (null before {@link #createController}). */
    QuorumController controller() {
        return controller;
    }

    void close() throws Exception {
        io.strata.server.cluster.BrokerReachabilityProbe probe = reachabilityProbe;
        if (probe != null) {
            probe.close();
        }
        QuorumController current = controller;
        if (current != null) {
            current.close();
        }
    }
}
