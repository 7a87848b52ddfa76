package io.strata.server.config;

import io.strata.common.config.ConfigDef;
import io.strata.common.config.ConfigDef.Type;
import io.strata.common.config.ConfigException;
import io.strata.coordinator.group.consumer.ConsumerGroupSettings;
import io.strata.raft.RaftConfig;
import io.strata.storage.LogConfig;
import io.strata.storage.cleaner.CleanerConfig;

import java.io.IOException;
import java.io.Reader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The broker's configuration: Apache Kafka's key names and defaults, except where a single
 * node with embedded defaults needs a different starting point (listeners on 127.0.0.1:9092,
 * data in ./data, node id 1, replication factors of 1). Invalid values stop the start with
 * a message naming the key; unknown keys are reported. A listener or key that asks for security
 * Strata does not implement yet stops the start too ({@link ListenerSecurity}).
 *
 * <p>With neither {@code controller.quorum.voters} nor {@code controller.quorum.bootstrap.servers}
 * the node is the zero-config single node ({@link #isStandaloneDefault()}); otherwise it is a
 * member of a cluster and Kafka 4's rules on roles, listeners and voters apply
 * ({@link ClusterConfigRules}).
 *
 * <p>Immutable.
 */
public final class ServerConfig {
    public static final String NODE_ID = "node.id";
    public static final String BROKER_ID = "broker.id";
    public static final String PROCESS_ROLES = "process.roles";
    public static final String CLUSTER_ID = "cluster.id";
    public static final String LISTENERS = "listeners";
    public static final String ADVERTISED_LISTENERS = "advertised.listeners";
    public static final String CONTROLLER_LISTENER_NAMES = "controller.listener.names";
    public static final String LISTENER_SECURITY_PROTOCOL_MAP = "listener.security.protocol.map";
    public static final String INTER_BROKER_LISTENER_NAME = "inter.broker.listener.name";
    public static final String RACK = "broker.rack";
    public static final String LOG_DIRS = "log.dirs";
    public static final String LOG_DIR = "log.dir";
    public static final String NUM_PARTITIONS = "num.partitions";
    public static final String DEFAULT_REPLICATION_FACTOR = "default.replication.factor";
    public static final String AUTO_CREATE_TOPICS_ENABLE = "auto.create.topics.enable";
    public static final String DELETE_TOPIC_ENABLE = "delete.topic.enable";
    public static final String NUM_NETWORK_THREADS = "num.network.threads";
    public static final String NUM_IO_THREADS = "num.io.threads";
    public static final String QUEUED_MAX_REQUESTS = "queued.max.requests";
    public static final String QUEUED_MAX_REQUEST_BYTES = "queued.max.request.bytes";
    public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
    public static final String SOCKET_SEND_BUFFER_BYTES = "socket.send.buffer.bytes";
    public static final String SOCKET_RECEIVE_BUFFER_BYTES = "socket.receive.buffer.bytes";
    public static final String SOCKET_LISTEN_BACKLOG_SIZE = "socket.listen.backlog.size";
    public static final String MAX_CONNECTIONS = "max.connections";
    public static final String MAX_CONNECTIONS_PER_IP = "max.connections.per.ip";
    public static final String MAX_CONNECTIONS_PER_IP_OVERRIDES = "max.connections.per.ip.overrides";
    public static final String MAX_CONNECTION_CREATION_RATE = "max.connection.creation.rate";
    public static final String CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms";
    public static final String NUM_RECOVERY_THREADS_PER_DATA_DIR = "num.recovery.threads.per.data.dir";
    public static final String LOG_RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms";
    public static final String LOG_FLUSH_SCHEDULER_INTERVAL_MS = "log.flush.scheduler.interval.ms";
    public static final String LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS = "log.flush.offset.checkpoint.interval.ms";
    public static final String LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS = "log.flush.start.offset.checkpoint.interval.ms";
    public static final String LOG_CLEANER_ENABLE = "log.cleaner.enable";
    public static final String LOG_CLEANER_THREADS = "log.cleaner.threads";
    public static final String LOG_CLEANER_DEDUPE_BUFFER_SIZE = "log.cleaner.dedupe.buffer.size";
    public static final String LOG_CLEANER_IO_BUFFER_SIZE = "log.cleaner.io.buffer.size";
    public static final String LOG_CLEANER_IO_BUFFER_LOAD_FACTOR = "log.cleaner.io.buffer.load.factor";
    public static final String LOG_CLEANER_BACKOFF_MS = "log.cleaner.backoff.ms";
    public static final String LOG_CLEANER_IO_MAX_BYTES_PER_SECOND = "log.cleaner.io.max.bytes.per.second";
    public static final String FETCH_MAX_BYTES = "fetch.max.bytes";
    public static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";
    public static final String REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = "replica.high.watermark.checkpoint.interval.ms";
    public static final String REPLICA_FETCH_WAIT_MAX_MS = "replica.fetch.wait.max.ms";
    public static final String REPLICA_FETCH_MIN_BYTES = "replica.fetch.min.bytes";
    public static final String REPLICA_FETCH_MAX_BYTES = "replica.fetch.max.bytes";
    public static final String REPLICA_FETCH_RESPONSE_MAX_BYTES = "replica.fetch.response.max.bytes";
    public static final String REPLICA_FETCH_BACKOFF_MS = "replica.fetch.backoff.ms";
    public static final String NUM_REPLICA_FETCHERS = "num.replica.fetchers";
    public static final String LEADER_REPLICATION_THROTTLED_RATE = "leader.replication.throttled.rate";
    public static final String FOLLOWER_REPLICATION_THROTTLED_RATE = "follower.replication.throttled.rate";
    public static final String REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND = "replica.alter.log.dirs.io.max.bytes.per.second";
    public static final String REPLICATION_QUOTA_WINDOW_NUM = "replication.quota.window.num";
    public static final String REPLICATION_QUOTA_WINDOW_SIZE_SECONDS = "replication.quota.window.size.seconds";
    public static final String REPLICA_SOCKET_TIMEOUT_MS = "replica.socket.timeout.ms";
    public static final String REPLICA_SELECTOR_CLASS = "replica.selector.class";
    public static final String FETCH_PURGATORY_PURGE_INTERVAL_REQUESTS = "fetch.purgatory.purge.interval.requests";
    public static final String PRODUCER_PURGATORY_PURGE_INTERVAL_REQUESTS = "producer.purgatory.purge.interval.requests";
    public static final String MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS = "max.incremental.fetch.session.cache.slots";
    public static final String MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = "min.incremental.fetch.session.eviction.ms";
    public static final String OFFSETS_TOPIC_NUM_PARTITIONS = "offsets.topic.num.partitions";
    public static final String OFFSETS_TOPIC_REPLICATION_FACTOR = "offsets.topic.replication.factor";
    public static final String OFFSETS_TOPIC_SEGMENT_BYTES = "offsets.topic.segment.bytes";
    public static final String OFFSETS_RETENTION_MINUTES = "offsets.retention.minutes";
    public static final String OFFSETS_RETENTION_CHECK_INTERVAL_MS = "offsets.retention.check.interval.ms";
    public static final String OFFSET_METADATA_MAX_BYTES = "offset.metadata.max.bytes";
    public static final String GROUP_INITIAL_REBALANCE_DELAY_MS = "group.initial.rebalance.delay.ms";
    public static final String GROUP_MIN_SESSION_TIMEOUT_MS = "group.min.session.timeout.ms";
    public static final String GROUP_MAX_SESSION_TIMEOUT_MS = "group.max.session.timeout.ms";
    public static final String GROUP_MAX_SIZE = "group.max.size";
    public static final String GROUP_COORDINATOR_REBALANCE_PROTOCOLS = "group.coordinator.rebalance.protocols";
    public static final String GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS = "group.consumer.heartbeat.interval.ms";
    public static final String GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS = "group.consumer.min.heartbeat.interval.ms";
    public static final String GROUP_CONSUMER_MAX_HEARTBEAT_INTERVAL_MS = "group.consumer.max.heartbeat.interval.ms";
    public static final String GROUP_CONSUMER_SESSION_TIMEOUT_MS = "group.consumer.session.timeout.ms";
    public static final String GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS = "group.consumer.min.session.timeout.ms";
    public static final String GROUP_CONSUMER_MAX_SESSION_TIMEOUT_MS = "group.consumer.max.session.timeout.ms";
    public static final String GROUP_CONSUMER_MAX_SIZE = "group.consumer.max.size";
    public static final String GROUP_CONSUMER_ASSIGNORS = "group.consumer.assignors";
    public static final String TRANSACTION_STATE_LOG_NUM_PARTITIONS = "transaction.state.log.num.partitions";
    public static final String TRANSACTION_STATE_LOG_REPLICATION_FACTOR = "transaction.state.log.replication.factor";
    public static final String TRANSACTION_STATE_LOG_MIN_ISR = "transaction.state.log.min.isr";
    public static final String TRANSACTION_MAX_TIMEOUT_MS = "transaction.max.timeout.ms";
    public static final String TRANSACTIONAL_ID_EXPIRATION_MS = "transactional.id.expiration.ms";
    public static final String TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS = "transaction.abort.timed.out.transaction.cleanup.interval.ms";
    public static final String TRANSACTION_REMOVE_EXPIRED_TRANSACTION_CLEANUP_INTERVAL_MS = "transaction.remove.expired.transaction.cleanup.interval.ms";
    public static final String PRODUCER_ID_EXPIRATION_MS = "producer.id.expiration.ms";
    public static final String PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = "producer.id.expiration.check.interval.ms";
    public static final String STRATA_FSYNC = "strata.fsync";
    public static final String STRATA_FORMAT_FEATURES = "strata.format.features";
    public static final String METRICS_ENABLED = "metrics.enabled";
    public static final String METRICS_LISTENER = "metrics.listener";
    // The quorum and the cluster (Kafka 4's KRaft keys).
    public static final String CONTROLLER_QUORUM_VOTERS = "controller.quorum.voters";
    public static final String CONTROLLER_QUORUM_BOOTSTRAP_SERVERS = "controller.quorum.bootstrap.servers";
    public static final String CONTROLLER_QUORUM_ELECTION_TIMEOUT_MS = "controller.quorum.election.timeout.ms";
    public static final String CONTROLLER_QUORUM_FETCH_TIMEOUT_MS = "controller.quorum.fetch.timeout.ms";
    public static final String CONTROLLER_QUORUM_ELECTION_BACKOFF_MAX_MS = "controller.quorum.election.backoff.max.ms";
    public static final String CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS = "controller.quorum.request.timeout.ms";
    public static final String CONTROLLER_QUORUM_RETRY_BACKOFF_MS = "controller.quorum.retry.backoff.ms";
    public static final String CONTROLLER_QUORUM_APPEND_LINGER_MS = "controller.quorum.append.linger.ms";
    public static final String BROKER_SESSION_TIMEOUT_MS = "broker.session.timeout.ms";
    public static final String BROKER_HEARTBEAT_INTERVAL_MS = "broker.heartbeat.interval.ms";
    /** KIP-858: a broker that cannot get the controller to take a failed directory's replicas offline within this long halts. */
    public static final String LOG_DIR_FAILURE_TIMEOUT_MS = "log.dir.failure.timeout.ms";
    /** A Strata addition: how long a broker whose heartbeat connection closed may stay silent before it is fenced; 0 off. */
    public static final String STRATA_BROKER_DISCONNECT_FENCE_MS = "strata.broker.disconnect.fence.ms";
    public static final String METADATA_LOG_MAX_RECORD_BYTES_BETWEEN_SNAPSHOTS = "metadata.log.max.record.bytes.between.snapshots";
    public static final String METADATA_LOG_MAX_SNAPSHOT_INTERVAL_MS = "metadata.log.max.snapshot.interval.ms";
    public static final String METADATA_MAX_IDLE_INTERVAL_MS = "metadata.max.idle.interval.ms";
    public static final String AUTO_LEADER_REBALANCE_ENABLE = "auto.leader.rebalance.enable";
    public static final String LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS = "leader.imbalance.check.interval.seconds";
    public static final String METADATA_LOG_DIR = "metadata.log.dir";
    public static final String METADATA_LOG_SEGMENT_BYTES = "metadata.log.segment.bytes";
    public static final String METADATA_LOG_SEGMENT_MS = "metadata.log.segment.ms";
    public static final String INITIAL_BROKER_REGISTRATION_TIMEOUT_MS = "initial.broker.registration.timeout.ms";
    public static final String CONTROLLED_SHUTDOWN_ENABLE = "controlled.shutdown.enable";

    /** The {@code process.roles} values. */
    public static final String ROLE_BROKER = "broker";
    public static final String ROLE_CONTROLLER = "controller";

    public static final ConfigDef DEFINITION = buildDefinition();

    private static ConfigDef buildDefinition() {
        ConfigDef def = new ConfigDef()
            .define(NODE_ID, Type.INT, 1, ConfigDef.atLeast(0), "this node's id in the cluster")
            .define(BROKER_ID, Type.INT, null, "deprecated alias of node.id")
            .define(PROCESS_ROLES, Type.LIST, "broker,controller", ConfigDef.oneOf(ROLE_BROKER, ROLE_CONTROLLER), "roles of this node")
            .define(CLUSTER_ID, Type.STRING, null, "cluster id used when formatting a new data directory (random if unset)")
            .define(LISTENERS, Type.LIST, "PLAINTEXT://127.0.0.1:9092", "listeners as NAME://host:port; port 0 picks a free port")
            .define(ADVERTISED_LISTENERS, Type.LIST, null, "listeners given to clients; defaults to listeners")
            .define(CONTROLLER_LISTENER_NAMES, Type.LIST, "", "listener names used by the controller quorum")
            .define(LISTENER_SECURITY_PROTOCOL_MAP, Type.LIST, "PLAINTEXT:PLAINTEXT", "listener name to security protocol")
            .define(INTER_BROKER_LISTENER_NAME, Type.STRING, null, "listener for broker-to-broker traffic")
            .define(RACK, Type.STRING, null, "rack of this broker")
            .define(LOG_DIRS, Type.LIST, null, "data directories")
            .define(LOG_DIR, Type.STRING, "./data", "data directory when log.dirs is not set")
            .define(NUM_PARTITIONS, Type.INT, 1, ConfigDef.atLeast(1), "partitions of auto-created topics")
            .define(DEFAULT_REPLICATION_FACTOR, Type.SHORT, (short) 1, ConfigDef.atLeast(1), "replication factor of auto-created topics")
            .define(AUTO_CREATE_TOPICS_ENABLE, Type.BOOLEAN, true, "create topics on first Metadata request for them")
            .define(DELETE_TOPIC_ENABLE, Type.BOOLEAN, true, "allow DeleteTopics")
            .define(io.strata.server.security.Authorization.AUTHORIZER_CLASS_NAME, Type.STRING, "",
                "empty: no authorization; org.apache.kafka.metadata.authorizer.StandardAuthorizer: ACLs")
            .define(io.strata.server.security.Authorization.SUPER_USERS, Type.STRING, "", "semicolon-separated principals allowed everything")
            .define(io.strata.server.security.Authorization.ALLOW_EVERYONE_IF_NO_ACL_FOUND, Type.BOOLEAN, false,
                "allow a resource no ACL applies to")
            .define(NUM_NETWORK_THREADS, Type.INT, 3, ConfigDef.atLeast(1), "network event loop threads")
            .define(NUM_IO_THREADS, Type.INT, 8, ConfigDef.atLeast(1), "request handler threads")
            .define(QUEUED_MAX_REQUESTS, Type.INT, 500, ConfigDef.atLeast(1), "request channel depth before reading stops")
            .define(QUEUED_MAX_REQUEST_BYTES, Type.LONG, null,
                "request bytes buffered or in flight, all connections together, before reading stops; -1 (any value <= 0) for no bound; "
                    + "unset: a quarter of the JVM's maximum direct memory, at least socket.request.max.bytes")
            .define(SOCKET_REQUEST_MAX_BYTES, Type.INT, 104_857_600, ConfigDef.atLeast(1), "largest request accepted")
            .define(SOCKET_SEND_BUFFER_BYTES, Type.INT, 102_400, "SO_SNDBUF; -1 for the OS default")
            .define(SOCKET_RECEIVE_BUFFER_BYTES, Type.INT, 102_400, "SO_RCVBUF; -1 for the OS default")
            .define(SOCKET_LISTEN_BACKLOG_SIZE, Type.INT, 50, ConfigDef.atLeast(1), "accept backlog")
            .define(MAX_CONNECTIONS, Type.INT, Integer.MAX_VALUE, ConfigDef.atLeast(0), "connections allowed in total")
            .define(MAX_CONNECTIONS_PER_IP, Type.INT, Integer.MAX_VALUE, ConfigDef.atLeast(0), "connections allowed from one address")
            .define(MAX_CONNECTIONS_PER_IP_OVERRIDES, Type.STRING, "",
                "connections allowed from one host or address, over max.connections.per.ip: host:count,address:count")
            .define(MAX_CONNECTION_CREATION_RATE, Type.INT, Integer.MAX_VALUE, ConfigDef.atLeast(0),
                "new connections accepted per second, broker-wide; past it accepting waits, as in Kafka")
            .define(CONNECTIONS_MAX_IDLE_MS, Type.LONG, 600_000L, ConfigDef.atLeast(1), "close connections idle this long")
            .define(NUM_RECOVERY_THREADS_PER_DATA_DIR, Type.INT, 2, ConfigDef.atLeast(1), "threads loading logs at start")
            .define(LOG_RETENTION_CHECK_INTERVAL_MS, Type.LONG, 300_000L, ConfigDef.atLeast(1), "how often retention runs")
            .define(LOG_FLUSH_SCHEDULER_INTERVAL_MS, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(1), "how often the flusher checks logs")
            .define(LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS, Type.INT, 60_000, ConfigDef.atLeast(0), "recovery point checkpoint interval")
            .define(LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS, Type.INT, 60_000, ConfigDef.atLeast(0), "log start offset checkpoint interval")
            .define(LOG_CLEANER_ENABLE, Type.BOOLEAN, true, "compact the logs of topics with cleanup.policy=compact")
            .define(LOG_CLEANER_THREADS, Type.INT, 1, ConfigDef.atLeast(1), "log cleaner threads")
            .define(LOG_CLEANER_DEDUPE_BUFFER_SIZE, Type.LONG, 134_217_728L, ConfigDef.atLeast(1024 * 1024),
                "heap for the cleaners' key maps, all threads together (capped at an eighth of the heap)")
            .define(LOG_CLEANER_IO_BUFFER_SIZE, Type.INT, 524_288, ConfigDef.atLeast(0), "cleaner write buffering, all threads together")
            .define(LOG_CLEANER_IO_BUFFER_LOAD_FACTOR, Type.DOUBLE, 0.9, ConfigDef.between(0.01, 1), "how full a cleaner's key map may get")
            .define(LOG_CLEANER_BACKOFF_MS, Type.LONG, 15_000L, ConfigDef.atLeast(0),
                "longest pause of an idle cleaner thread (a compacted log that rolls a segment wakes it)")
            .define(LOG_CLEANER_IO_MAX_BYTES_PER_SECOND, Type.DOUBLE, Double.MAX_VALUE, ConfigDef.between(Double.MIN_VALUE, Double.MAX_VALUE),
                "read plus written bytes per second of all cleaner threads together")
            .define(FETCH_MAX_BYTES, Type.INT, 57_671_680, ConfigDef.atLeast(1024), "largest fetch response")
            .define(REPLICA_LAG_TIME_MAX_MS, Type.LONG, 30_000L, "ISR lag bound")
            .define(REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, Type.LONG, 5_000L,
                "how often each data directory's replication-offset-checkpoint (the high watermarks) is written")
            .define(REPLICA_FETCH_WAIT_MAX_MS, Type.INT, 500, ConfigDef.atLeast(0), "longest wait of a follower Fetch on the leader")
            .define(REPLICA_FETCH_MIN_BYTES, Type.INT, 1, ConfigDef.atLeast(0), "bytes a follower Fetch waits for")
            .define(REPLICA_FETCH_MAX_BYTES, Type.INT, 1_048_576, ConfigDef.atLeast(0),
                "bytes per partition a follower fetches (a larger first batch still comes whole)")
            .define(REPLICA_FETCH_RESPONSE_MAX_BYTES, Type.INT, 10_485_760, ConfigDef.atLeast(0), "bytes of a whole follower Fetch response")
            .define(REPLICA_FETCH_BACKOFF_MS, Type.INT, 1000, ConfigDef.atLeast(0), "pause after a failed follower fetch")
            .define(NUM_REPLICA_FETCHERS, Type.INT, 1, ConfigDef.atLeast(1), "fetchers (connections) per source broker")
            .define(LEADER_REPLICATION_THROTTLED_RATE, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(0),
                "bytes/s a leader sends to throttled out-of-sync followers (leader.replication.throttled.replicas)")
            .define(FOLLOWER_REPLICATION_THROTTLED_RATE, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(0),
                "bytes/s a follower fetches for its throttled out-of-sync replicas (follower.replication.throttled.replicas)")
            .define(REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(0),
                "bytes/s copied into future logs while moving replicas between log dirs (AlterReplicaLogDirs), all moves together")
            .define(REPLICATION_QUOTA_WINDOW_NUM, Type.INT, 11, ConfigDef.atLeast(1), "samples the replication throttles measure over")
            .define(REPLICATION_QUOTA_WINDOW_SIZE_SECONDS, Type.INT, 1, ConfigDef.atLeast(1), "length of one replication throttle sample")
            .define(REPLICA_SOCKET_TIMEOUT_MS, Type.INT, 30_000, ConfigDef.atLeast(1), "request timeout of follower fetches")
            .define(REPLICA_SELECTOR_CLASS, Type.STRING, null,
                "KIP-392 preferred read replica for consumers: " + io.strata.server.replica.ReplicaSelectors.KAFKA_RACK_AWARE
                    + " (our rack-aware selector), or unset: consumers read from the leader")
            .define(FETCH_PURGATORY_PURGE_INTERVAL_REQUESTS, Type.INT, 1000, "fetch purgatory purge interval")
            .define(PRODUCER_PURGATORY_PURGE_INTERVAL_REQUESTS, Type.INT, 1000, "produce purgatory purge interval")
            .define(MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS, Type.INT, 1000, ConfigDef.atLeast(0), "fetch sessions kept")
            .define(MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, Type.INT, 120_000, ConfigDef.atLeast(0),
                "how long a fetch session must go unused before any new session may evict it")
            .define(OFFSETS_TOPIC_NUM_PARTITIONS, Type.INT, 50, ConfigDef.atLeast(1), "partitions of __consumer_offsets")
            .define(OFFSETS_TOPIC_REPLICATION_FACTOR, Type.SHORT, (short) 3, ConfigDef.atLeast(1), "replication of __consumer_offsets")
            .define(OFFSETS_TOPIC_SEGMENT_BYTES, Type.INT, 104_857_600, ConfigDef.atLeast(1), "segment size of __consumer_offsets")
            .define(OFFSETS_RETENTION_MINUTES, Type.INT, 10_080, ConfigDef.atLeast(1),
                "committed offsets expire this long after their commit, or for a classic group after it became Empty")
            .define(OFFSETS_RETENTION_CHECK_INTERVAL_MS, Type.LONG, 600_000L, ConfigDef.atLeast(1),
                "how often each group coordinator shard removes expired offsets and empty groups")
            .define(OFFSET_METADATA_MAX_BYTES, Type.INT, 4096, "largest commit metadata")
            .define(GROUP_INITIAL_REBALANCE_DELAY_MS, Type.INT, 3000, "delay of the first rebalance of an empty group")
            .define(GROUP_MIN_SESSION_TIMEOUT_MS, Type.INT, 6000, "smallest session timeout")
            .define(GROUP_MAX_SESSION_TIMEOUT_MS, Type.INT, 1_800_000, "largest session timeout")
            .define(GROUP_MAX_SIZE, Type.INT, Integer.MAX_VALUE, ConfigDef.atLeast(1), "members per group")
            .define(GROUP_COORDINATOR_REBALANCE_PROTOCOLS, Type.LIST, "classic,consumer", ConfigDef.oneOf("classic", "consumer"),
                "group protocols served; without consumer, ConsumerGroupHeartbeat answers UNSUPPORTED_VERSION")
            .define(GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS, Type.INT, ConsumerGroupSettings.DEFAULT_HEARTBEAT_INTERVAL_MS, ConfigDef.atLeast(1),
                "heartbeat interval of consumer-protocol members")
            .define(GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS, Type.INT, ConsumerGroupSettings.DEFAULT_MIN_HEARTBEAT_INTERVAL_MS, ConfigDef.atLeast(1),
                "smallest allowed group.consumer.heartbeat.interval.ms")
            .define(GROUP_CONSUMER_MAX_HEARTBEAT_INTERVAL_MS, Type.INT, ConsumerGroupSettings.DEFAULT_MAX_HEARTBEAT_INTERVAL_MS, ConfigDef.atLeast(1),
                "largest allowed group.consumer.heartbeat.interval.ms")
            .define(GROUP_CONSUMER_SESSION_TIMEOUT_MS, Type.INT, ConsumerGroupSettings.DEFAULT_SESSION_TIMEOUT_MS, ConfigDef.atLeast(1),
                "a consumer-protocol member without a heartbeat for this long is removed")
            .define(GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS, Type.INT, ConsumerGroupSettings.DEFAULT_MIN_SESSION_TIMEOUT_MS, ConfigDef.atLeast(1),
                "smallest allowed group.consumer.session.timeout.ms")
            .define(GROUP_CONSUMER_MAX_SESSION_TIMEOUT_MS, Type.INT, ConsumerGroupSettings.DEFAULT_MAX_SESSION_TIMEOUT_MS, ConfigDef.atLeast(1),
                "largest allowed group.consumer.session.timeout.ms")
            .define(GROUP_CONSUMER_MAX_SIZE, Type.INT, Integer.MAX_VALUE, ConfigDef.atLeast(1), "members per consumer group")
            .define(GROUP_CONSUMER_ASSIGNORS, Type.LIST, "uniform,range",
                "server assignors of consumer groups (uniform, range or Kafka's class names); the first is the default")
            .define(TRANSACTION_STATE_LOG_NUM_PARTITIONS, Type.INT, 50, ConfigDef.atLeast(1), "partitions of __transaction_state")
            .define(TRANSACTION_STATE_LOG_REPLICATION_FACTOR, Type.SHORT, (short) 3, ConfigDef.atLeast(1), "replication of __transaction_state")
            .define(TRANSACTION_STATE_LOG_MIN_ISR, Type.INT, 2, ConfigDef.atLeast(1), "min ISR of __transaction_state")
            .define(TRANSACTION_MAX_TIMEOUT_MS, Type.INT, 900_000, ConfigDef.atLeast(1), "largest transaction timeout")
            .define(TRANSACTIONAL_ID_EXPIRATION_MS, Type.INT, 604_800_000, ConfigDef.atLeast(1),
                "a transactional id idle this long in Empty, CompleteCommit or CompleteAbort is removed")
            .define(TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS, Type.INT, 10_000, ConfigDef.atLeast(1),
                "how often transactions past their timeout are aborted")
            .define(TRANSACTION_REMOVE_EXPIRED_TRANSACTION_CLEANUP_INTERVAL_MS, Type.INT, 3_600_000, ConfigDef.atLeast(1),
                "how often expired transactional ids are removed")
            .define(PRODUCER_ID_EXPIRATION_MS, Type.INT, 86_400_000, ConfigDef.atLeast(1), "idle producer state expiry")
            .define(PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, Type.INT, 600_000, ConfigDef.atLeast(1), "producer expiry check interval")
            .define(STRATA_FSYNC, Type.STRING, "none", ConfigDef.oneOf("none", "on-ack"),
                "on-ack: fsync (off the handler threads) before acknowledging acks=1/all writes and making them visible; none: rely on flush.* and replication like Kafka")
            .define(STRATA_FORMAT_FEATURES, Type.LIST, "", "feature levels finalized when this node creates a new cluster, as NAME=LEVEL "
                + "(Kafka's kafka-storage format --feature), e.g. transaction.version=1; the others get their defaults. Ignored once the "
                + "cluster exists: change levels with UpdateFeatures (kafka-features)")
            .define(METRICS_ENABLED, Type.BOOLEAN, true, "serve /metrics and /health")
            .define(METRICS_LISTENER, Type.STRING, "http://127.0.0.1:9644", "address of the metrics endpoint");
        defineQuorum(def);
        // Broker-level log settings: every synonym of a topic configuration, with Kafka's defaults.
        def.define("log.retention.hours", Type.INT, 168, "retention in hours")
            .define("log.retention.minutes", Type.INT, null, "retention in minutes")
            .define("log.retention.ms", Type.LONG, null, "retention in ms")
            .define("log.roll.hours", Type.INT, 168, ConfigDef.atLeast(1), "segment roll in hours")
            .define("log.roll.ms", Type.LONG, null, "segment roll in ms")
            .define("log.roll.jitter.hours", Type.INT, 0, ConfigDef.atLeast(0), "segment roll jitter in hours")
            .define("log.roll.jitter.ms", Type.LONG, null, "segment roll jitter in ms")
            .define("log.flush.interval.ms", Type.LONG, null, "flush interval in ms");
        for (Map.Entry<String, List<String>> entry : LogConfig.BROKER_SYNONYMS.entrySet()) {
            ConfigDef.Key topicKey = LogConfig.DEFINITION.key(entry.getKey());
            for (String synonym : entry.getValue()) {
                if (def.key(synonym) == null) {
                    def.define(synonym, topicKey.type(), topicKey.defaultValue(), topicKey.validator(), topicKey.documentation());
                }
            }
        }
        return def;
    }

    /**
     * Kafka 4's quorum, lifecycle and metadata-log keys, with Kafka's types and defaults. The
     * quorum timings must be positive (Kafka allows 0; {@link RaftConfig} does not, as a zero
     * election or fetch timeout makes the quorum spin); the linger may be 0.
     */
    private static void defineQuorum(ConfigDef def) {
        def.define(CONTROLLER_QUORUM_VOTERS, Type.LIST, "",
                "the static voter set as id@host:port entries, e.g. 1@127.0.0.1:9093,2@127.0.0.1:9094; empty: the "
                    + "zero-config single node (one voter, this node, in-process) unless controller.quorum.bootstrap.servers is set")
            .define(CONTROLLER_QUORUM_BOOTSTRAP_SERVERS, Type.LIST, "",
                "controller endpoints (host:port) used to discover the quorum's leader (KIP-853 dynamic quorums)")
            .define(CONTROLLER_QUORUM_ELECTION_TIMEOUT_MS, Type.INT, 1000, ConfigDef.atLeast(1),
                "how long a voter without a leader waits before it asks for votes (randomised up to twice this)")
            .define(CONTROLLER_QUORUM_FETCH_TIMEOUT_MS, Type.INT, 2000, ConfigDef.atLeast(1),
                "a follower without a successful fetch for this long becomes a candidate")
            .define(CONTROLLER_QUORUM_ELECTION_BACKOFF_MAX_MS, Type.INT, 1000, ConfigDef.atLeast(1),
                "longest pause before a new election after a lost one")
            .define(CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS, Type.INT, 2000, ConfigDef.atLeast(1), "timeout of quorum requests")
            .define(CONTROLLER_QUORUM_RETRY_BACKOFF_MS, Type.INT, 20, ConfigDef.atLeast(1), "pause before resending a failed quorum request")
            .define(CONTROLLER_QUORUM_APPEND_LINGER_MS, Type.INT, 25, ConfigDef.atLeast(0),
                "how long the leader waits to gather writes into one batch before appending it")
            .define(BROKER_SESSION_TIMEOUT_MS, Type.INT, 9000, ConfigDef.atLeast(1),
                "a broker without a heartbeat for this long is fenced (set on the controllers)")
            .define(BROKER_HEARTBEAT_INTERVAL_MS, Type.INT, 2000, ConfigDef.atLeast(1), "how often a broker heartbeats to the controller")
            .define(LOG_DIR_FAILURE_TIMEOUT_MS, Type.LONG, 30_000L, ConfigDef.atLeast(1),
                "if the broker cannot tell the controller that a log directory failed (and have its replicas taken offline) "
                    + "within this long, it halts (KIP-858)")
            .define(STRATA_BROKER_DISCONNECT_FENCE_MS, Type.INT, 1000, ConfigDef.atLeast(0),
                "Strata addition (set on the controllers): a broker whose latest heartbeat's connection to the active controller "
                    + "closed is fenced if it sends no heartbeat within this long, instead of after broker.session.timeout.ms; 0: "
                    + "Kafka's behaviour (only the session timeout fences)")
            .define(METADATA_LOG_MAX_RECORD_BYTES_BETWEEN_SNAPSHOTS, Type.LONG, 20_971_520L, ConfigDef.atLeast(1),
                "metadata log bytes after the latest snapshot that trigger a new one")
            .define(METADATA_LOG_MAX_SNAPSHOT_INTERVAL_MS, Type.LONG, 3_600_000L, ConfigDef.atLeast(0),
                "longest time between snapshots while there are new committed records; 0: no time-based snapshots")
            .define(METADATA_MAX_IDLE_INTERVAL_MS, Type.INT, 500, ConfigDef.atLeast(0),
                "how often the active controller appends a no-op record so that the high watermark advances; 0: never")
            .define(AUTO_LEADER_REBALANCE_ENABLE, Type.BOOLEAN, true,
                "the active controller periodically elects each partition's preferred replica when it is in the ISR but does not lead")
            .define(LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS, Type.LONG, 300L, ConfigDef.atLeast(1),
                "how often the active controller looks for partitions whose preferred replica could lead but does not")
            .define(METADATA_LOG_DIR, Type.STRING, null, "directory of the metadata log (__cluster_metadata-0); unset: the first log dir")
            .define(METADATA_LOG_SEGMENT_BYTES, Type.INT, 1_073_741_824, ConfigDef.atLeast(8 * 1024 * 1024), "segment size of the metadata log")
            .define(METADATA_LOG_SEGMENT_MS, Type.LONG, 604_800_000L, ConfigDef.atLeast(1),
                "the metadata log rolls a new segment once its active one is this old")
            .define(INITIAL_BROKER_REGISTRATION_TIMEOUT_MS, Type.INT, 60_000, ConfigDef.atLeast(1),
                "a broker not registered with the controller within this long after start gives up and exits")
            .define(CONTROLLED_SHUTDOWN_ENABLE, Type.BOOLEAN, true,
                "on shutdown a broker first asks the controller to move its leaders away and waits for it");
    }

    private final ConfigDef.Parsed parsed;

    private ServerConfig(ConfigDef.Parsed parsed) {
        this.parsed = parsed;
    }

    public static ServerConfig fromMap(Map<String, String> properties) {
        if (isBlank(properties.get(CONTROLLER_QUORUM_VOTERS)) && isBlank(properties.get(CONTROLLER_QUORUM_BOOTSTRAP_SERVERS))) {
            // The zero-config single node: its internal topics have one replica, as Kafka's shipped server.properties sets.
            Map<String, String> single = new LinkedHashMap<>(STANDALONE_DEFAULTS);
            single.putAll(properties);
            properties = single;
        }
        ServerConfig config = new ServerConfig(DEFINITION.parse(properties));
        config.validate();
        return config;
    }

    /** Reads a Java properties file and applies {@code overrides} on top. */
    public static ServerConfig load(Path file, Map<String, String> overrides) throws IOException {
        Map<String, String> properties = new LinkedHashMap<>();
        if (file != null) {
            Properties loaded = new Properties();
            try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                loaded.load(reader);
            }
            for (String name : loaded.stringPropertyNames()) {
                properties.put(name, loaded.getProperty(name));
            }
        }
        properties.putAll(overrides);
        return fromMap(properties);
    }

    /**
     * Where the single node differs from Kafka's defaults, which a cluster node keeps
     * ({@code offsets.topic.replication.factor} 3, {@code transaction.state.log.replication.factor}
     * 3, {@code transaction.state.log.min.isr} 2).
     */
    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }

    static final Map<String, String> STANDALONE_DEFAULTS = Map.of(OFFSETS_TOPIC_REPLICATION_FACTOR, "1",
        TRANSACTION_STATE_LOG_REPLICATION_FACTOR, "1", TRANSACTION_STATE_LOG_MIN_ISR, "1");

    /**
     * A new instance of the {@code replica.selector.class} selector, or null when unset.
     *
     * @throws ConfigException naming the key and the class when it is not an accepted selector
     */
    public io.strata.server.replica.ReplicaSelector replicaSelector() {
        String className = getString(REPLICA_SELECTOR_CLASS);
        try {
            return io.strata.server.replica.ReplicaSelectors.create(className);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(REPLICA_SELECTOR_CLASS, className, e.getMessage());
        }
    }

    private void validate() {
        for (String listener : listeners()) {
            Endpoint.parse(listener);
        }
        if (parsed.values().get(ADVERTISED_LISTENERS) != null) {
            for (String listener : advertisedListenersRaw()) {
                Endpoint.parse(listener);
            }
        }
        if (listeners().isEmpty()) {
            throw new ConfigException(LISTENERS + " must name at least one listener");
        }
        Object queuedMaxRequestBytes = parsed.values().get(QUEUED_MAX_REQUEST_BYTES);
        if (queuedMaxRequestBytes != null && getLong(QUEUED_MAX_REQUEST_BYTES) > 0
            && getLong(QUEUED_MAX_REQUEST_BYTES) < getInt(SOCKET_REQUEST_MAX_BYTES)) {
            // Kafka's rule: a request of the largest accepted size must fit, or its connection would wait forever.
            throw new ConfigException(QUEUED_MAX_REQUEST_BYTES, queuedMaxRequestBytes,
                "must be at least " + SOCKET_REQUEST_MAX_BYTES + " (" + getInt(SOCKET_REQUEST_MAX_BYTES) + "), or -1 for no bound");
        }
        // Kafka's KafkaConfig checks on the fetch wait.
        if (getInt(REPLICA_FETCH_WAIT_MAX_MS) > getInt(REPLICA_SOCKET_TIMEOUT_MS)) {
            throw new ConfigException(REPLICA_SOCKET_TIMEOUT_MS, getInt(REPLICA_SOCKET_TIMEOUT_MS),
                "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary socket timeouts");
        }
        if (getInt(REPLICA_FETCH_WAIT_MAX_MS) > getLong(REPLICA_LAG_TIME_MAX_MS)) {
            throw new ConfigException(REPLICA_FETCH_WAIT_MAX_MS, getInt(REPLICA_FETCH_WAIT_MAX_MS),
                "replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent frequent changes in ISR");
        }
        ListenerSecurity.check(this);
        authorization(() -> io.strata.metadata.authorizer.AclIndex.EMPTY);
        replicaSelector();
        LogConfig.of(topicDefaults(), Map.of());
        maxConnectionsPerIpOverrides();
        if (getBoolean(METRICS_ENABLED)) {
            io.strata.server.metrics.MetricsHttpServer.Listener.parse(getString(METRICS_LISTENER));
        }
        try {
            consumerGroupSettings();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        quorumVoters();
        quorumBootstrapServers();
        if (!isStandaloneDefault()) {
            ClusterConfigRules.check(this);
        }
    }

    /**
     * {@code max.connections.per.ip.overrides} as host (or address) to limit, in the order given.
     * Kafka's format: comma-separated {@code host:count} pairs, blanks around them ignored; an
     * IPv6 address is the part before the last colon.
     *
     * @throws ConfigException naming the key and the offending pair
     */
    public Map<String, Integer> maxConnectionsPerIpOverrides() {
        Map<String, Integer> overrides = new LinkedHashMap<>();
        String text = getString(MAX_CONNECTIONS_PER_IP_OVERRIDES);
        if (text == null || text.isBlank()) {
            return overrides;
        }
        for (String pair : text.split(",")) {
            String trimmed = pair.strip();
            int colon = trimmed.lastIndexOf(':');
            if (colon <= 0 || colon == trimmed.length() - 1) {
                throw new ConfigException(MAX_CONNECTIONS_PER_IP_OVERRIDES, text, "expected host:count pairs, got '" + trimmed + "'");
            }
            int limit;
            try {
                limit = Integer.parseInt(trimmed.substring(colon + 1).strip());
            } catch (NumberFormatException e) {
                throw new ConfigException(MAX_CONNECTIONS_PER_IP_OVERRIDES, text, "the count of '" + trimmed + "' is not a number");
            }
            if (limit < 0) {
                throw new ConfigException(MAX_CONNECTIONS_PER_IP_OVERRIDES, text, "the count of '" + trimmed + "' is negative");
            }
            overrides.put(trimmed.substring(0, colon).strip(), limit);
        }
        return overrides;
    }

    /** The consumer group (KIP-848) settings, bounds checked as Kafka checks them. */
    @SuppressWarnings("unchecked")
    public ConsumerGroupSettings consumerGroupSettings() {
        return ConsumerGroupSettings.of(getInt(GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS), getInt(GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS),
            getInt(GROUP_CONSUMER_MAX_HEARTBEAT_INTERVAL_MS), getInt(GROUP_CONSUMER_SESSION_TIMEOUT_MS), getInt(GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS),
            getInt(GROUP_CONSUMER_MAX_SESSION_TIMEOUT_MS), getInt(GROUP_CONSUMER_MAX_SIZE), (List<String>) parsed.values().get(GROUP_CONSUMER_ASSIGNORS));
    }

    /** Whether consumer-protocol groups (KIP-848) are served ({@code group.coordinator.rebalance.protocols} has "consumer"). */
    @SuppressWarnings("unchecked")
    public boolean consumerGroupProtocolEnabled() {
        return ((List<String>) parsed.values().get(GROUP_COORDINATOR_REBALANCE_PROTOCOLS)).contains("consumer");
    }

    public List<String> unknownKeys() {
        return parsed.unknownKeys();
    }

    public Map<String, String> originals() {
        return parsed.originals();
    }

    public Object value(String name) {
        return parsed.values().get(name);
    }

    public int getInt(String name) {
        return ((Number) parsed.values().get(name)).intValue();
    }

    public long getLong(String name) {
        return ((Number) parsed.values().get(name)).longValue();
    }

    public short getShort(String name) {
        return ((Number) parsed.values().get(name)).shortValue();
    }

    /**
     * The authorizer {@code authorizer.class.name} selects, over {@code acls}.
     *
     * @throws ConfigException for the legacy AclAuthorizer or an unknown class
     */
    public io.strata.server.security.Authorization authorization(java.util.function.Supplier<io.strata.metadata.authorizer.AclIndex> acls) {
        String className = getString(io.strata.server.security.Authorization.AUTHORIZER_CLASS_NAME);
        return io.strata.server.security.Authorization.of(className, getString(io.strata.server.security.Authorization.SUPER_USERS),
            getBoolean(io.strata.server.security.Authorization.ALLOW_EVERYONE_IF_NO_ACL_FOUND), acls);
    }

    public boolean getBoolean(String name) {
        return (Boolean) parsed.values().get(name);
    }

    public String getString(String name) {
        return (String) parsed.values().get(name);
    }

    public int nodeId() {
        Object brokerId = parsed.values().get(BROKER_ID);
        return parsed.originals().containsKey(NODE_ID) || brokerId == null ? getInt(NODE_ID) : (Integer) brokerId;
    }

    @SuppressWarnings("unchecked")
    public List<String> formatFeatures() {
        return (List<String>) parsed.values().get(STRATA_FORMAT_FEATURES);
    }

    @SuppressWarnings("unchecked")
    public List<String> listeners() {
        return (List<String>) parsed.values().get(LISTENERS);
    }

    @SuppressWarnings("unchecked")
    private List<String> advertisedListenersRaw() {
        return (List<String>) parsed.values().get(ADVERTISED_LISTENERS);
    }

    /** Advertised endpoints by listener name; unset ones follow the bound listeners. */
    public List<Endpoint> advertisedListeners() {
        List<String> raw = parsed.values().get(ADVERTISED_LISTENERS) != null ? advertisedListenersRaw() : listeners();
        return raw.stream().map(Endpoint::parse).toList();
    }

    @SuppressWarnings("unchecked")
    public List<Path> logDirs() {
        List<String> dirs = (List<String>) parsed.values().get(LOG_DIRS);
        if (dirs == null || dirs.isEmpty()) {
            return List.of(Path.of(getString(LOG_DIR)));
        }
        return dirs.stream().map(Path::of).toList();
    }

    /** Topic-key defaults derived from this broker's log settings. */
    public Map<String, String> topicDefaults() {
        return LogConfig.brokerDefaults(parsed.originals());
    }

    /**
     * The bound on buffered request bytes ({@code queued.max.request.bytes}), or -1 for none.
     * Unset, it is {@link #defaultQueuedMaxRequestBytes} of this JVM's maximum direct memory.
     */
    public long queuedMaxRequestBytes() {
        int maxRequestBytes = getInt(SOCKET_REQUEST_MAX_BYTES);
        if (parsed.values().get(QUEUED_MAX_REQUEST_BYTES) == null) {
            return defaultQueuedMaxRequestBytes(maxRequestBytes, io.netty.util.internal.PlatformDependent.maxDirectMemory());
        }
        long configured = getLong(QUEUED_MAX_REQUEST_BYTES);
        return configured > 0 ? configured : -1;
    }

    /**
     * The bound when {@code queued.max.request.bytes} is unset (Kafka's default, -1, is no bound,
     * which lets pipelining connections exhaust direct memory). Frames live in direct memory, and
     * so do responses, socket reads and the allocator's partly used chunks: a quarter of
     * {@code maxDirectMemoryBytes} leaves them the rest. At least one request of the largest
     * size, so that it can always be read. With the default 1 GiB heap of {@code bin/strata}
     * (maximum direct memory follows the heap), 256 MiB: two maximal requests and room to spare.
     */
    public static long defaultQueuedMaxRequestBytes(int maxRequestBytes, long maxDirectMemoryBytes) {
        return Math.max(maxRequestBytes, maxDirectMemoryBytes / 4);
    }

    /** The log cleaner's settings (log.cleaner.*). */
    public CleanerConfig cleanerConfig() {
        return new CleanerConfig(getBoolean(LOG_CLEANER_ENABLE), getInt(LOG_CLEANER_THREADS), getLong(LOG_CLEANER_DEDUPE_BUFFER_SIZE),
            ((Number) value(LOG_CLEANER_IO_BUFFER_LOAD_FACTOR)).doubleValue(), getInt(LOG_CLEANER_IO_BUFFER_SIZE), getLong(LOG_CLEANER_BACKOFF_MS),
            ((Number) value(LOG_CLEANER_IO_MAX_BYTES_PER_SECOND)).doubleValue());
    }

    // ---------------------------------------------------------------- roles, listeners, quorum

    /**
     * Whether this is the zero-config single node: neither {@code controller.quorum.voters} nor
     * {@code controller.quorum.bootstrap.servers} is set. Such a node is the one voter of its
     * own quorum, in-process, and needs no controller listener; Kafka's KRaft rules
     * ({@link ClusterConfigRules}) apply only to the other nodes.
     */
    public boolean isStandaloneDefault() {
        return quorumVoters().isEmpty() && quorumBootstrapServers().isEmpty();
    }

    /** {@code process.roles}: "broker", "controller" or both, in the order given. */
    @SuppressWarnings("unchecked")
    public Set<String> processRoles() {
        return Collections.unmodifiableSet(new LinkedHashSet<>((List<String>) parsed.values().get(PROCESS_ROLES)));
    }

    public boolean isController() {
        return processRoles().contains(ROLE_CONTROLLER);
    }

    public boolean isBroker() {
        return processRoles().contains(ROLE_BROKER);
    }

    /**
     * {@code controller.quorum.voters}, parsed, in the order given (empty when unset).
     *
     * @throws ConfigException naming the key and the entry that is not {@code id@host:port}, or a repeated id
     */
    @SuppressWarnings("unchecked")
    public List<QuorumVoter> quorumVoters() {
        return QuorumVoter.parseAll(CONTROLLER_QUORUM_VOTERS, (List<String>) parsed.values().get(CONTROLLER_QUORUM_VOTERS));
    }

    /**
     * {@code controller.quorum.bootstrap.servers} as unresolved addresses, in the order given.
     *
     * @throws ConfigException naming the key and the entry that is not {@code host:port}
     */
    @SuppressWarnings("unchecked")
    public List<InetSocketAddress> quorumBootstrapServers() {
        List<String> entries = (List<String>) parsed.values().get(CONTROLLER_QUORUM_BOOTSTRAP_SERVERS);
        return entries.stream().map(entry -> QuorumVoter.parseHostPort(CONTROLLER_QUORUM_BOOTSTRAP_SERVERS, entry.strip(),
            () -> new ConfigException(CONTROLLER_QUORUM_BOOTSTRAP_SERVERS + ": expected host:port, got '" + entry + "'"))).toList();
    }

    /** {@code controller.listener.names}, in the order given. */
    @SuppressWarnings("unchecked")
    public List<String> controllerListenerNames() {
        return (List<String>) parsed.values().get(CONTROLLER_LISTENER_NAMES);
    }

    /** Every entry of {@code listeners}, parsed. */
    public List<Endpoint> listenerEndpoints() {
        return listeners().stream().map(Endpoint::parse).toList();
    }

    /**
     * This node's controller endpoint: the listener in {@code listeners} named by the first
     * entry of {@code controller.listener.names} that has one (the first name is the one
     * brokers and other voters use, as in Kafka), or null: no controller listener, as on a
     * broker-only node or the zero-config single node.
     */
    public Endpoint controllerEndpoint() {
        List<Endpoint> endpoints = listenerEndpoints();
        for (String name : controllerListenerNames()) {
            for (Endpoint endpoint : endpoints) {
                if (ClusterConfigRules.normalise(endpoint.listenerName()).equals(ClusterConfigRules.normalise(name))) {
                    return endpoint;
                }
            }
        }
        return null;
    }

    /** Whether {@code listenerName} is one of {@code controller.listener.names} (names compare as Kafka normalises them). */
    public boolean isControllerListener(String listenerName) {
        String normalised = ClusterConfigRules.normalise(listenerName);
        for (String name : controllerListenerNames()) {
            if (ClusterConfigRules.normalise(name).equals(normalised)) {
                return true;
            }
        }
        return false;
    }

    /** The advertised endpoints clients may use: {@link #advertisedListeners()} without the controller listeners. */
    public List<Endpoint> advertisedBrokerListeners() {
        return advertisedListeners().stream().filter(endpoint -> !isControllerListener(endpoint.listenerName())).toList();
    }

    /**
     * The listener brokers replicate and send inter-broker requests on: {@code
     * inter.broker.listener.name} when set, else the first listener of {@code listeners} that
     * is not a controller listener, or null when there is none. With {@code
     * security.inter.broker.protocol} set (and no listener name), the listener named after that
     * protocol, as Kafka picks it.
     */
    public String interBrokerListenerName() {
        String configured = getString(INTER_BROKER_LISTENER_NAME);
        if (configured != null) {
            return configured;
        }
        String protocol = originals().get(ListenerSecurity.SECURITY_INTER_BROKER_PROTOCOL);
        if (protocol != null) {
            for (Endpoint endpoint : listenerEndpoints()) {
                if (ClusterConfigRules.normalise(endpoint.listenerName()).equals(ClusterConfigRules.normalise(protocol.trim()))) {
                    return endpoint.listenerName();
                }
            }
        }
        for (Endpoint endpoint : listenerEndpoints()) {
            if (!isControllerListener(endpoint.listenerName())) {
                return endpoint.listenerName();
            }
        }
        return null;
    }

    /** {@code listener.security.protocol.map} with Kafka's defaults: listener name to protocol, both upper case. */
    public Map<String, String> listenerSecurityProtocolMap() {
        return ListenerSecurity.protocolMap(this, originals().containsKey(LISTENER_SECURITY_PROTOCOL_MAP));
    }

    /** The security protocol of {@code listenerName} (upper case: PLAINTEXT or SSL once the configuration is valid). */
    public String securityProtocol(String listenerName) {
        String protocol = listenerSecurityProtocolMap().get(ClusterConfigRules.normalise(listenerName));
        if (protocol == null) {
            throw new IllegalArgumentException("no security protocol for listener " + listenerName);
        }
        return protocol;
    }

    /** The quorum's timings ({@code controller.quorum.*}); fetch sizes are the raft module's defaults, as in Kafka. */
    public RaftConfig raftConfig() {
        RaftConfig defaults = RaftConfig.DEFAULTS;
        return new RaftConfig(getInt(CONTROLLER_QUORUM_ELECTION_TIMEOUT_MS), getInt(CONTROLLER_QUORUM_ELECTION_BACKOFF_MAX_MS),
            getInt(CONTROLLER_QUORUM_FETCH_TIMEOUT_MS), getInt(CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS), getInt(CONTROLLER_QUORUM_RETRY_BACKOFF_MS),
            defaults.fetchMaxBytes(), defaults.fetchSnapshotMaxBytes());
    }

    /** Where the metadata log lives: {@code metadata.log.dir}, else the first of {@link #logDirs()}. */
    public Path metadataLogDir() {
        String configured = getString(METADATA_LOG_DIR);
        return configured != null && !configured.isEmpty() ? Path.of(configured) : logDirs().get(0);
    }

    /**
     * Every directory this node formats ({@code meta.properties}) and locks: {@link #logDirs()},
     * then {@link #metadataLogDir()} if it is not one of them (Kafka formats and locks it too).
     */
    public List<Path> formattedDirectories() {
        List<Path> dirs = new java.util.ArrayList<>(logDirs());
        Path metadata = metadataLogDir();
        boolean listed = dirs.stream().anyMatch(dir -> dir.toAbsolutePath().normalize().equals(metadata.toAbsolutePath().normalize()));
        if (!listed) {
            dirs.add(metadata);
        }
        return dirs;
    }

    /**
     * The settings of the {@code __cluster_metadata} log: kept whole (no retention: snapshots
     * drop what is before them), segments of {@code metadata.log.segment.bytes}, rolled after
     * {@code metadata.log.segment.ms}, as Kafka's metadata log.
     */
    public Map<String, String> metadataLogOverrides() {
        return Map.of(LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1",
            LogConfig.SEGMENT_BYTES, Integer.toString(getInt(METADATA_LOG_SEGMENT_BYTES)),
            LogConfig.SEGMENT_MS, Long.toString(getLong(METADATA_LOG_SEGMENT_MS)));
    }

    public boolean fsyncOnAck() {
        return "on-ack".equals(getString(STRATA_FSYNC));
    }

    /** A listener: {@code NAME://host:port}. An empty host binds every interface. */
    public record Endpoint(String listenerName, String host, int port) {
        public static Endpoint parse(String text) {
            int scheme = text.indexOf("://");
            int colon = text.lastIndexOf(':');
            if (scheme <= 0 || colon <= scheme + 2) {
                throw new ConfigException(LISTENERS, text, "expected NAME://host:port");
            }
            String name = text.substring(0, scheme);
            String host = text.substring(scheme + 3, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(text.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new ConfigException(LISTENERS, text, "port is not a number");
            }
            if (port < 0 || port > 65535) {
                throw new ConfigException(LISTENERS, text, "port must be between 0 and 65535");
            }
            return new Endpoint(name, host, port);
        }
    }
}
