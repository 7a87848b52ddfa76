package io.strata.server;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.MetadataPublisher;
import io.strata.server.config.DynamicBrokerConfig;
import io.strata.server.config.DynamicBrokerConfigTable;
import io.strata.server.config.ServerConfig;
import io.strata.server.network.RequestHandlerPool;
import io.strata.server.network.SocketServer;
import io.strata.server.replica.ReplicationQuotaManager;
import io.strata.server.replica.fetcher.ReplicaFetcherManager;
import io.strata.storage.LogManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Applies the live dynamic broker settings of {@link DynamicBrokerConfigTable} (other than the
 * topic defaults, which {@code ReplicaManager} applies, and the log cleaner's) to the running
 * broker whenever the dynamic configs of this broker or the cluster default change:
 * {@code num.io.threads} resizes the request handler pool; {@code max.connections},
 * {@code max.connections.per.ip} and its overrides and {@code max.connection.creation.rate}
 * replace the connection limits;
 * {@code num.recovery.threads.per.data.dir} and {@code producer.id.expiration.ms} go to the log
 * manager; {@code leader.replication.throttled.rate} and {@code follower.replication.throttled.rate}
 * and {@code replica.alter.log.dirs.io.max.bytes.per.second} go to the replication quota managers and
 * {@code num.replica.fetchers} resizes the replica fetchers.
 *
 * <p>Runs on the metadata publishing thread, which publishes before the AlterConfigs that made
 * the change is answered, so a client sees the effect once its request completes. The values were
 * validated before they were written; should applying one still fail (an override host that no
 * longer resolves), the failure is logged with the values, counted in {@link #failures()}, and
 * the other settings are applied all the same: a later change retries.
 */
final class BrokerReconfiguration implements MetadataPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerReconfiguration.class);

    private final ServerConfig staticConfig;
    private final int nodeId;
    private final RequestHandlerPool handlerPool;
    private final SocketServer socketServer;
    private final LogManager logManager;
    private final Replication replication;
    private final AtomicLong failures = new AtomicLong();

    /**
     * The replication settings' targets: the two throttles and the fetcher manager (null until replication starts).
     */
    record Replication(ReplicationQuotaManager leaderQuota, ReplicationQuotaManager followerQuota,
                       ReplicationQuotaManager alterLogDirsQuota, Supplier<ReplicaFetcherManager> fetcherManager) {
    }

    BrokerReconfiguration(ServerConfig staticConfig, int nodeId, RequestHandlerPool handlerPool, SocketServer socketServer,
                          LogManager logManager, Replication replication) {
        this.replication = java.util.Objects.requireNonNull(replication, "replication");
        this.staticConfig = staticConfig;
        this.nodeId = nodeId;
        this.handlerPool = handlerPool;
        this.socketServer = socketServer;
        this.logManager = logManager;
    }

    @Override
    public synchronized void publish(MetadataImage previous, MetadataImage current) {
        if (DynamicBrokerConfig.changed(previous, current, nodeId)) {
            apply(current);
        }
    }

    /**
     * At start-up, after this publisher is registered: applies the settings of the latest image,
     * read under the lock that {@link #publish} holds, so that neither can apply an older image
     * after the other applied a newer one.
     */
    synchronized void applyLatest(java.util.function.Supplier<MetadataImage> latestImage) {
        apply(latestImage.get());
    }

    /** Applies the settings in force in {@code image}. */
    private void apply(MetadataImage image) {
        ServerConfig effective;
        try {
            effective = DynamicBrokerConfig.effectiveConfig(staticConfig, image, nodeId);
        } catch (RuntimeException e) {
            failed("parse the dynamic broker configs " + DynamicBrokerConfig.perBroker(image, nodeId) + " over the cluster defaults "
                + DynamicBrokerConfig.clusterDefaults(image), e);
            return;
        }
        int ioThreads = effective.getInt(ServerConfig.NUM_IO_THREADS);
        try {
            handlerPool.resize(ioThreads);
        } catch (RuntimeException e) {
            failed("resize the request handler pool to " + ServerConfig.NUM_IO_THREADS + "=" + ioThreads, e);
        }
        try {
            socketServer.reconfigureConnectionQuotas(effective.getInt(ServerConfig.MAX_CONNECTIONS),
                effective.getInt(ServerConfig.MAX_CONNECTIONS_PER_IP), effective.maxConnectionsPerIpOverrides(),
                effective.getInt(ServerConfig.MAX_CONNECTION_CREATION_RATE));
        } catch (RuntimeException e) {
            failed("apply the connection limits " + ServerConfig.MAX_CONNECTIONS + "=" + effective.getInt(ServerConfig.MAX_CONNECTIONS) + ", "
                + ServerConfig.MAX_CONNECTIONS_PER_IP + "=" + effective.getInt(ServerConfig.MAX_CONNECTIONS_PER_IP) + ", "
                + ServerConfig.MAX_CONNECTIONS_PER_IP_OVERRIDES + "=" + effective.getString(ServerConfig.MAX_CONNECTIONS_PER_IP_OVERRIDES), e);
        }
        applyToLogManager(effective, logManager);
        applyReplication(effective);
    }

    private void applyReplication(ServerConfig effective) {
        long leaderRate = effective.getLong(ServerConfig.LEADER_REPLICATION_THROTTLED_RATE);
        long followerRate = effective.getLong(ServerConfig.FOLLOWER_REPLICATION_THROTTLED_RATE);
        long alterLogDirsRate = effective.getLong(ServerConfig.REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND);
        try {
            replication.leaderQuota().updateQuota(leaderRate);
            replication.followerQuota().updateQuota(followerRate);
            replication.alterLogDirsQuota().updateQuota(alterLogDirsRate);
        } catch (RuntimeException e) {
            failed("apply the replication throttles " + ServerConfig.LEADER_REPLICATION_THROTTLED_RATE + "=" + leaderRate + ", "
                + ServerConfig.FOLLOWER_REPLICATION_THROTTLED_RATE + "=" + followerRate + ", "
                + ServerConfig.REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND + "=" + alterLogDirsRate, e);
        }
        int numFetchers = effective.getInt(ServerConfig.NUM_REPLICA_FETCHERS);
        ReplicaFetcherManager fetchers = replication.fetcherManager().get();
        if (fetchers != null) {
            try {
                fetchers.resize(numFetchers);
            } catch (RuntimeException e) {
                failed("resize the replica fetchers to " + ServerConfig.NUM_REPLICA_FETCHERS + "=" + numFetchers, e);
            }
        }
    }

    /** The log manager's live settings; also called before the logs load, so that loading uses the dynamic recovery thread count. */
    static void applyToLogManager(ServerConfig effective, LogManager logManager) {
        logManager.setRecoveryThreadsPerDataDir(effective.getInt(ServerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR));
        logManager.setProducerIdExpirationMs(effective.getInt(ServerConfig.PRODUCER_ID_EXPIRATION_MS));
    }

    private void failed(String what, RuntimeException e) {
        failures.incrementAndGet();
        LOG.error("Could not {}; the previous setting stays in force until the next change", what, e);
    }

    /** Dynamic settings that could not be applied since start-up. */
    long failures() {
        return failures.get();
    }
}
