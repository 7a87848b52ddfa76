package io.strata.server.config;

import io.strata.storage.LogConfig;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Every broker configuration Apache Kafka 4.4 can change while the broker runs, with Kafka's
 * update mode and what Strata does with a change: the one place that answers "can I change X
 * with kafka-configs / IncrementalAlterConfigs, and what happens then".
 *
 * <p>The key set and the modes are Kafka's {@code DynamicBrokerConfig.dynamicConfigUpdateModes()}
 * (the "Update Mode" column of Kafka's broker config documentation); DynamicBrokerConfigTableTest
 * in the {@code it} module compares this table with that method of the kafka-server 4.4 jar, so a
 * key Kafka adds or drops fails the build until it is entered here.
 *
 * <p>Modes, as Kafka defines them:
 * <ul>
 *   <li>{@link UpdateMode#PER_BROKER}: only on one broker's resource (name = node id); Kafka
 *       refuses it on the cluster default with INVALID_REQUEST.</li>
 *   <li>{@link UpdateMode#CLUSTER_WIDE}: on a broker's resource or on the cluster default
 *       (empty name); the per-broker value wins.</li>
 * </ul>
 *
 * <p>Statuses:
 * <ul>
 *   <li>{@link Status#LIVE}: accepted and applied to the running broker with Kafka's effect;
 *       {@link Entry#detail} says how. Deleting the override reverts to the cluster default,
 *       then the static value, then the built-in default.</li>
 *   <li>{@link Status#LOG_CLEANER}: the log cleaner's own settings, applied by
 *       {@code LogCleaner.reconfigure(CleanerConfig)} (threads resized, backoff and I/O throttle
 *       changed on the running cleaner; see {@link DynamicBrokerConfig#CLEANER_RECONFIGURABLE}).</li>
 *   <li>{@link Status#REFUSED}: refused with INVALID_REQUEST until the subsystem it tunes exists
 *       in Strata; {@link Entry#detail} names it. Storing such a change would be worse than
 *       refusing it: the operator would believe it took effect.</li>
 * </ul>
 *
 * <p>Immutable; safe from any thread.
 */
public final class DynamicBrokerConfigTable {
    /** Kafka's update modes of dynamic broker configs. */
    public enum UpdateMode {
        PER_BROKER("per-broker"),
        CLUSTER_WIDE("cluster-wide");

        private final String kafkaName;

        UpdateMode(String kafkaName) {
            this.kafkaName = kafkaName;
        }

        /** The name Kafka's documentation and {@code dynamicConfigUpdateModes()} use. */
        public String kafkaName() {
            return kafkaName;
        }
    }

    /** What Strata does with a change of the key. */
    public enum Status { LIVE, LOG_CLEANER, REFUSED }

    /** One dynamic key: Kafka's mode, Strata's status, and how it applies or why it is refused. */
    public record Entry(String name, UpdateMode mode, Status status, String detail) {
    }

    private static final String SECURITY = "refused until the security issue (TLS, SASL, principals): Strata has no TLS or SASL listeners"
        + " yet; the security work refuses these keys at start-up too";
    private static final String TIERED = "refused until tiered storage: Strata keeps every segment locally"
        + " (remote.log.storage.system.enable is not supported)";
    private static final String LOG_DIR_MOVES = "refused until log dir cordoning (KIP-1066): Strata places new partitions on every"
        + " configured log dir";
    private static final String SHARE_GROUPS = "refused until share groups (KIP-932): Strata has no share coordinator";
    private static final String STREAMS_GROUPS = "refused until streams groups (KIP-1071): Strata serves classic and consumer groups only";
    private static final String OFFLOADED_ASSIGNORS = "refused until offloaded assignments: Strata's group coordinator assigns inline on"
        + " its shard thread, so there is no assignment interval or offload pool to tune";
    private static final String TOPIC_DEFAULT = "a new default of its topic config for every log without a topic override:"
        + " ReplicaManager re-applies the LogConfig of every partition when the dynamic broker configs change";

    /** By key name, sorted. */
    public static final Map<String, Entry> ENTRIES = build();

    private DynamicBrokerConfigTable() {
    }

    private static Map<String, Entry> build() {
        List<Entry> entries = new ArrayList<>();
        // Kafka's DynamicLogConfig: the primary broker synonym of each topic config (LogConfig.BROKER_SYNONYMS).
        for (List<String> synonyms : LogConfig.BROKER_SYNONYMS.values()) {
            entries.add(new Entry(synonyms.get(0), UpdateMode.CLUSTER_WIDE, Status.LIVE, TOPIC_DEFAULT));
        }
        entries.add(refused("log.remote.copy.lag.bytes", TIERED));
        entries.add(refused("log.remote.copy.lag.ms", TIERED));
        entries.add(refused("max.decompressed.message.bytes", "refused until the topic config max.decompressed.message.bytes exists:"
            + " Strata caps the decompressed size of a batch at the fixed limits of RecordLimits"));
        entries.add(new Entry("cordoned.log.dirs", UpdateMode.PER_BROKER, Status.REFUSED, LOG_DIR_MOVES));

        // Kafka's DynamicThreadPool.
        entries.add(live(ServerConfig.NUM_IO_THREADS, "RequestHandlerPool.resize: new handler threads start at once; surplus ones stop"
            + " after the request they are handling"));
        entries.add(refused(ServerConfig.NUM_NETWORK_THREADS, "refused until the network layer can resize its Netty event loop group:"
            + " Netty fixes the number of event loops of a group when it is created"));
        entries.add(live(ServerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR, "LogManager.setRecoveryThreadsPerDataDir: used by the next"
            + " loading of the logs; at start-up the value from the metadata log applies, as in Kafka"));
        entries.add(live(ServerConfig.NUM_REPLICA_FETCHERS, "ReplicaFetcherManager.resize: every followed partition moves to the fetcher"
            + " of its new fetcher id, keeping its fetch offset and epochs (no truncation), as Kafka's resizeThreadPool; may at most"
            + " halve or double at a time (Kafka's DynamicThreadPool rule)"));
        entries.add(refused("background.threads", "refused until a shared background pool exists: Strata's background work"
            + " runs on per-component scheduler threads (retention, flush, checkpoints, coordinators), none sized by this key"));

        // Kafka's DynamicConnectionQuota.
        entries.add(live(ServerConfig.MAX_CONNECTIONS, "ConnectionQuotas.reconfigure: new connections past the limit are closed; open ones"
            + " stay"));
        entries.add(live(ServerConfig.MAX_CONNECTIONS_PER_IP, "ConnectionQuotas.reconfigure: new connections from an address past its limit"
            + " are closed; open ones stay"));
        entries.add(live(ServerConfig.MAX_CONNECTIONS_PER_IP_OVERRIDES, "ConnectionQuotas.reconfigure: per-host or per-address limits"
            + " (host:count,...) over max.connections.per.ip"));
        entries.add(live(ServerConfig.MAX_CONNECTION_CREATION_RATE, "ConnectionRateThrottle: past the broker-wide rate the listeners"
            + " stop accepting until the rate allows the next connection (clients wait in the backlog), as Kafka's acceptor waits"));

        // Kafka's DynamicProducerStateManagerConfig and transaction settings.
        entries.add(live(ServerConfig.PRODUCER_ID_EXPIRATION_MS, "LogManager.setProducerIdExpirationMs: every log's producer state expires"
            + " idle producers after the new time from its next expiry check"));
        entries.add(refused("transaction.partition.verification.enable", "refused: Strata always verifies the partitions of transactional"
            + " produce (KIP-890); running without the verification is not supported"));

        // Kafka's DynamicListenerConfig and the security keys.
        entries.add(new Entry(ServerConfig.LISTENERS, UpdateMode.PER_BROKER, Status.REFUSED, "refused until listeners can be added and"
            + " removed at runtime: the network layer binds its listeners once at start-up"));
        entries.add(new Entry(ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP, UpdateMode.PER_BROKER, Status.REFUSED,
            "refused until listeners can be added and removed at runtime, and until the security issue"));
        for (String key : List.of("principal.builder.class", "sasl.enabled.mechanisms", "sasl.jaas.config", "sasl.kerberos.kinit.cmd",
            "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.principal.to.local.rules", "sasl.kerberos.service.name",
            "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.ticket.renew.window.factor", "sasl.login.refresh.buffer.seconds",
            "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
            "sasl.mechanism.inter.broker.protocol", "ssl.cipher.suites", "ssl.client.auth", "ssl.enabled.protocols",
            "ssl.endpoint.identification.algorithm", "ssl.engine.factory.class", "ssl.key.password", "ssl.keymanager.algorithm",
            "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type",
            "ssl.protocol", "ssl.provider", "ssl.secure.random.implementation", "ssl.trustmanager.algorithm", "ssl.truststore.certificates",
            "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type")) {
            entries.add(new Entry(key, UpdateMode.PER_BROKER, Status.REFUSED, SECURITY));
        }

        // Kafka's LogCleaner.RECONFIGURABLE_CONFIGS (message.max.bytes, also listed there, is a topic default above).
        for (String key : List.of(ServerConfig.LOG_CLEANER_THREADS, ServerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE,
            ServerConfig.LOG_CLEANER_IO_BUFFER_SIZE, ServerConfig.LOG_CLEANER_IO_BUFFER_LOAD_FACTOR, ServerConfig.LOG_CLEANER_BACKOFF_MS,
            ServerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND)) {
            entries.add(new Entry(key, UpdateMode.CLUSTER_WIDE, Status.LOG_CLEANER, "LogCleaner.reconfigure(CleanerConfig): the cleaner"
                + " threads are replaced by ones with the new settings, as Kafka's LogCleaner.reconfigure does"));
        }

        // Kafka's DynamicReplicationConfig, DynamicQuotaConfig and remote log manager.
        entries.add(live(ServerConfig.LEADER_REPLICATION_THROTTLED_RATE, "ReplicationQuotaManager.updateQuota (leader side): bytes/s a"
            + " leader sends to out-of-sync followers of its leader.replication.throttled.replicas; the measured window is kept"));
        entries.add(live(ServerConfig.FOLLOWER_REPLICATION_THROTTLED_RATE, "ReplicationQuotaManager.updateQuota (follower side): bytes/s"
            + " this broker fetches for its out-of-sync follower.replication.throttled.replicas; the measured window is kept"));
        entries.add(live(ServerConfig.REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND, "ReplicationQuotaManager.updateQuota (alter-log-dirs"
            + " side): bytes/s the LogDirMover copies into future logs, all moves of this broker together; the measured window is kept"));
        entries.add(refused("follower.fetch.last.tiered.offset.enable", TIERED));
        for (String key : List.of("remote.fetch.max.wait.ms", "remote.list.offsets.request.timeout.ms",
            "remote.log.index.file.cache.total.size.bytes", "remote.log.manager.copier.thread.pool.size",
            "remote.log.manager.copy.max.bytes.per.second", "remote.log.manager.expiration.thread.pool.size",
            "remote.log.manager.fetch.max.bytes.per.second", "remote.log.manager.follower.thread.pool.size", "remote.log.reader.threads")) {
            entries.add(refused(key, TIERED));
        }

        // Kafka's metrics and config plumbing.
        entries.add(refused("metric.reporters", "refused until pluggable metric reporters: Strata exposes its metrics on its own Prometheus"
            + " endpoint (metrics.listener), without Kafka's reporter classes"));
        entries.add(refused("config.providers", "refused until config providers (KIP-297): Strata reads configuration values literally"));

        // Kafka's group and share coordinators.
        entries.add(refused("group.coordinator.cached.buffer.max.bytes", "refused until the group coordinator reuses write buffers:"
            + " Strata's shards build each record batch in a buffer of its own size"));
        entries.add(refused("group.consumer.assignment.interval.ms", OFFLOADED_ASSIGNORS));
        entries.add(refused("group.consumer.assignor.offload.enable", OFFLOADED_ASSIGNORS));
        entries.add(refused("group.streams.assignment.interval.ms", STREAMS_GROUPS));
        entries.add(refused("group.streams.assignor.offload.enable", STREAMS_GROUPS));
        entries.add(refused("group.share.assignment.interval.ms", SHARE_GROUPS));
        entries.add(refused("group.share.assignor.offload.enable", SHARE_GROUPS));
        entries.add(refused("share.coordinator.cached.buffer.max.bytes", SHARE_GROUPS));
        entries.add(refused("errors.deadletterqueue.auto.create.topics.enable", SHARE_GROUPS + " and its dead-letter queues"));
        entries.add(refused("errors.deadletterqueue.topic.name.prefix", SHARE_GROUPS + " and its dead-letter queues"));

        Map<String, Entry> byName = new TreeMap<>();
        for (Entry entry : entries) {
            Entry previous = byName.put(entry.name(), entry);
            if (previous != null) {
                throw new IllegalStateException("dynamic broker config listed twice: " + previous + " and " + entry);
            }
        }
        return Collections.unmodifiableMap(byName);
    }

    private static Entry live(String name, String how) {
        return new Entry(name, UpdateMode.CLUSTER_WIDE, Status.LIVE, how);
    }

    private static Entry refused(String name, String reason) {
        return new Entry(name, UpdateMode.CLUSTER_WIDE, Status.REFUSED, reason);
    }

    /** The entry of a key Kafka can change dynamically, or null if Kafka keeps it static (read-only). */
    public static Entry entry(String name) {
        return ENTRIES.get(name);
    }

    /** The keys with the given status, sorted. */
    public static Set<String> keys(Status status) {
        Set<String> keys = new TreeSet<>();
        for (Entry entry : ENTRIES.values()) {
            if (entry.status() == status) {
                keys.add(entry.name());
            }
        }
        return Collections.unmodifiableSet(keys);
    }
}
