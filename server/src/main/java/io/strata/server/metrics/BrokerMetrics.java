package io.strata.server.metrics;

import io.strata.server.config.ServerConfig;
import io.strata.server.network.NetworkObserver;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.TopicPartition;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * Everything metrics for one broker, in one place for {@code StrataServer} to wire: the
 * recorders the request path writes to (network, per topic, flushes), the scrape-time
 * collectors, the health checks and the HTTP endpoint. With {@code metrics.enabled=false}
 * there is no endpoint and the recorders do nothing.
 *
 * <p>The endpoint starts first in the broker's start-up so that {@code /health/ready} can be
 * watched while logs recover; collectors skip components not created yet.
 */
public final class BrokerMetrics implements AutoCloseable {
    private static final LongConsumer NO_FLUSH_OBSERVER = nanos -> { };

    private final MetricsRegistry registry;
    private final RequestMetrics requestMetrics;
    private final BrokerTopicMetrics topicMetrics;
    private final ServerMetrics serverMetrics;
    private final JvmMetrics jvmMetrics;
    private final MetricsHttpServer http;

    private BrokerMetrics(MetricsRegistry registry, RequestMetrics requestMetrics, BrokerTopicMetrics topicMetrics, ServerMetrics serverMetrics,
                          JvmMetrics jvmMetrics, MetricsHttpServer http) {
        this.registry = registry;
        this.requestMetrics = requestMetrics;
        this.topicMetrics = topicMetrics;
        this.serverMetrics = serverMetrics;
        this.jvmMetrics = jvmMetrics;
        this.http = http;
    }

    /** Metrics that record nothing and serve nothing. */
    public static BrokerMetrics disabled() {
        return new BrokerMetrics(null, null, BrokerTopicMetrics.DISABLED, null, null, null);
    }

    /**
     * Creates the recorders and the collectors reading {@code serverSources}, starts the endpoint
     * on {@code metrics.listener} with health checks reading {@code healthSources}, or returns
     * {@link #disabled()} if {@code metrics.enabled=false}.
     *
     * @throws IOException if the endpoint's address cannot be bound
     */
    public static BrokerMetrics start(ServerConfig config, ServerMetrics.Sources serverSources, HealthChecks.Sources healthSources)
        throws IOException {
        if (!config.getBoolean(ServerConfig.METRICS_ENABLED)) {
            return disabled();
        }
        MetricsHttpServer.Listener listener = MetricsHttpServer.Listener.parse(config.getString(ServerConfig.METRICS_LISTENER));
        MetricsRegistry registry = new MetricsRegistry();
        RequestMetrics requestMetrics = new RequestMetrics();
        for (String endpoint : config.listeners()) {
            requestMetrics.registerListener(ServerConfig.Endpoint.parse(endpoint).listenerName());
        }
        BrokerTopicMetrics topicMetrics = new BrokerTopicMetrics(() -> hostedTopics(serverSources.replicaManager().get()));
        ServerMetrics serverMetrics = new ServerMetrics(serverSources);
        JvmMetrics jvmMetrics = new JvmMetrics();
        registry.register(serverMetrics);
        registry.register(new ReplicationMetrics(serverSources.replicaManager(), serverSources.replicaFetcherManager()));
        registry.register(new ReplicationQuotaMetrics(serverSources.replicationQuotas()));
        registry.register(new LogDirMoverMetrics(serverSources.replicaManager()));
        registry.register(requestMetrics);
        registry.register(topicMetrics);
        registry.register(jvmMetrics);
        MetricsHttpServer http;
        try {
            http = MetricsHttpServer.start(listener, registry, new HealthChecks(healthSources));
        } catch (IOException | RuntimeException e) {
            jvmMetrics.close();
            throw e;
        }
        return new BrokerMetrics(registry, requestMetrics, topicMetrics, serverMetrics, jvmMetrics, http);
    }

    private static Set<String> hostedTopics(ReplicaManager replicaManager) {
        if (replicaManager == null) {
            return null;
        }
        Set<String> topics = new HashSet<>();
        for (TopicPartition topicPartition : replicaManager.partitions().keySet()) {
            topics.add(topicPartition.topic());
        }
        return topics;
    }

    /**
     * Adds a scrape-time collector of a role's components (the controller's, the Fetch handler's)
     * that the start-up sources do not name; it is asked at every scrape after the ones registered
     * before it. Does nothing when metrics are disabled. Thread-safe.
     */
    public void register(MetricsCollector collector) {
        java.util.Objects.requireNonNull(collector, "collector");
        if (registry != null) {
            registry.register(collector);
        }
    }

    public boolean isEnabled() {
        return registry != null;
    }

    /** What the network layer reports to. */
    public NetworkObserver networkObserver() {
        return requestMetrics == null ? NetworkObserver.NONE : requestMetrics;
    }

    /** What the replica manager counts produce and fetch outcomes into. */
    public BrokerTopicMetrics topicMetrics() {
        return topicMetrics;
    }

    /** Where the logs report flush durations. */
    public LongConsumer flushObserver() {
        return serverMetrics == null ? NO_FLUSH_OBSERVER : serverMetrics.flushObserver();
    }

    /** The endpoint's bound port, or -1 without one. */
    public int port() {
        return http == null ? -1 : http.port();
    }

    /** A scrape, as the endpoint would serve it (for tests and tools); empty when disabled. */
    public String scrape(ExpositionFormat format) {
        return registry == null ? "" : registry.scrape(format);
    }

    /** Stops the endpoint and the JVM listeners. */
    @Override
    public void close() {
        if (http != null) {
            http.close();
        }
        if (jvmMetrics != null) {
            jvmMetrics.close();
        }
    }
}
