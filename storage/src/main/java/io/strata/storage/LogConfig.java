package io.strata.storage;

import io.strata.common.config.ConfigDef;
import io.strata.common.config.ConfigDef.Type;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Topic-level log configuration with Apache Kafka's names and defaults. Each topic key has a
 * broker-level synonym (e.g. {@code retention.ms} ← {@code log.retention.ms} ←
 * {@code log.retention.minutes} ← {@code log.retention.hours}); a topic's effective value is
 * its own override, else the broker's setting, else the default. DescribeConfigs reports
 * the same chain as synonyms.
 *
 * <p>Immutable.
 */
public final class LogConfig {
    public static final String CLEANUP_POLICY = "cleanup.policy";
    public static final String COMPRESSION_TYPE = "compression.type";
    public static final String COMPRESSION_GZIP_LEVEL = "compression.gzip.level";
    public static final String COMPRESSION_LZ4_LEVEL = "compression.lz4.level";
    public static final String COMPRESSION_ZSTD_LEVEL = "compression.zstd.level";
    public static final String DELETE_RETENTION_MS = "delete.retention.ms";
    public static final String FILE_DELETE_DELAY_MS = "file.delete.delay.ms";
    public static final String FLUSH_MESSAGES = "flush.messages";
    public static final String FLUSH_MS = "flush.ms";
    public static final String FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas";
    public static final String INDEX_INTERVAL_BYTES = "index.interval.bytes";
    public static final String LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas";
    public static final String LOCAL_RETENTION_BYTES = "local.retention.bytes";
    public static final String LOCAL_RETENTION_MS = "local.retention.ms";
    public static final String MAX_COMPACTION_LAG_MS = "max.compaction.lag.ms";
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    public static final String MESSAGE_TIMESTAMP_AFTER_MAX_MS = "message.timestamp.after.max.ms";
    public static final String MESSAGE_TIMESTAMP_BEFORE_MAX_MS = "message.timestamp.before.max.ms";
    public static final String MESSAGE_TIMESTAMP_TYPE = "message.timestamp.type";
    public static final String MIN_CLEANABLE_DIRTY_RATIO = "min.cleanable.dirty.ratio";
    public static final String MIN_COMPACTION_LAG_MS = "min.compaction.lag.ms";
    public static final String MIN_IN_SYNC_REPLICAS = "min.insync.replicas";
    public static final String PREALLOCATE = "preallocate";
    public static final String REMOTE_STORAGE_ENABLE = "remote.storage.enable";
    public static final String RETENTION_BYTES = "retention.bytes";
    public static final String RETENTION_MS = "retention.ms";
    public static final String SEGMENT_BYTES = "segment.bytes";
    public static final String SEGMENT_INDEX_BYTES = "segment.index.bytes";
    public static final String SEGMENT_JITTER_MS = "segment.jitter.ms";
    public static final String SEGMENT_MS = "segment.ms";
    public static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";

    /** The smallest segment Kafka accepts: a segment must hold at least one maximal batch header. */
    public static final int MIN_SEGMENT_BYTES = 14;

    public static final ConfigDef DEFINITION = new ConfigDef()
        .define(CLEANUP_POLICY, Type.LIST, "delete", ConfigDef.oneOf("delete", "compact"), "delete and/or compact old segments")
        .define(COMPRESSION_TYPE, Type.STRING, "producer",
            ConfigDef.oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), "final compression of the topic's data")
        .define(COMPRESSION_GZIP_LEVEL, Type.INT, -1, ConfigDef.between(-1, 9), "gzip level when compression.type is gzip")
        .define(COMPRESSION_LZ4_LEVEL, Type.INT, 9, ConfigDef.between(1, 17), "lz4 level when compression.type is lz4")
        .define(COMPRESSION_ZSTD_LEVEL, Type.INT, 3, ConfigDef.between(-131072, 22), "zstd level when compression.type is zstd")
        .define(DELETE_RETENTION_MS, Type.LONG, 86_400_000L, ConfigDef.atLeast(0), "how long delete tombstones are kept on compacted topics")
        .define(FILE_DELETE_DELAY_MS, Type.LONG, 60_000L, ConfigDef.atLeast(0), "delay before a deleted segment's files are removed")
        .define(FLUSH_MESSAGES, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(1), "fsync after this many messages")
        .define(FLUSH_MS, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(0), "fsync after this much time")
        .define(FOLLOWER_THROTTLED_REPLICAS, Type.LIST, "", ThrottledReplicaListValidator.INSTANCE, "replicas throttled on the follower side")
        .define(INDEX_INTERVAL_BYTES, Type.INT, 4096, ConfigDef.atLeast(0), "bytes of log between offset index entries")
        .define(LEADER_THROTTLED_REPLICAS, Type.LIST, "", ThrottledReplicaListValidator.INSTANCE, "replicas throttled on the leader side")
        .define(LOCAL_RETENTION_BYTES, Type.LONG, -2L, ConfigDef.atLeast(-2), "local retention with tiered storage")
        .define(LOCAL_RETENTION_MS, Type.LONG, -2L, ConfigDef.atLeast(-2), "local retention with tiered storage")
        .define(MAX_COMPACTION_LAG_MS, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(1), "longest a message stays uncompacted")
        .define(MAX_MESSAGE_BYTES, Type.INT, 1_048_588, ConfigDef.atLeast(0), "largest record batch accepted")
        .define(MESSAGE_TIMESTAMP_AFTER_MAX_MS, Type.LONG, 3_600_000L, ConfigDef.atLeast(0), "how far in the future a CreateTime may be")
        .define(MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Type.LONG, Long.MAX_VALUE, ConfigDef.atLeast(0), "how far in the past a CreateTime may be")
        .define(MESSAGE_TIMESTAMP_TYPE, Type.STRING, "CreateTime", ConfigDef.oneOf("CreateTime", "LogAppendTime"), "timestamp type of stored records")
        .define(MIN_CLEANABLE_DIRTY_RATIO, Type.DOUBLE, 0.5, ConfigDef.between(0, 1), "dirty ratio that triggers compaction")
        .define(MIN_COMPACTION_LAG_MS, Type.LONG, 0L, ConfigDef.atLeast(0), "shortest a message stays uncompacted")
        .define(MIN_IN_SYNC_REPLICAS, Type.INT, 1, ConfigDef.atLeast(1), "replicas that must acknowledge acks=all")
        .define(PREALLOCATE, Type.BOOLEAN, false, "preallocate segment files")
        .define(REMOTE_STORAGE_ENABLE, Type.BOOLEAN, false, "tiered storage (not supported)")
        .define(RETENTION_BYTES, Type.LONG, -1L, "largest size of the partition log before old segments are deleted")
        .define(RETENTION_MS, Type.LONG, 604_800_000L, ConfigDef.atLeast(-1), "longest a segment is kept")
        .define(SEGMENT_BYTES, Type.INT, 1_073_741_824, ConfigDef.atLeast(MIN_SEGMENT_BYTES), "segment file size")
        .define(SEGMENT_INDEX_BYTES, Type.INT, 10_485_760, ConfigDef.atLeast(4), "index file size")
        .define(SEGMENT_JITTER_MS, Type.LONG, 0L, ConfigDef.atLeast(0), "random jitter subtracted from segment.ms")
        .define(SEGMENT_MS, Type.LONG, 604_800_000L, ConfigDef.atLeast(1), "roll a segment after this long")
        .define(UNCLEAN_LEADER_ELECTION_ENABLE, Type.BOOLEAN, false, "allow out-of-sync replicas to become leader (may lose data)");

    /**
     * Broker-level synonyms of each topic key, most specific first, as Kafka resolves them.
     * The hours/minutes forms are converted to ms by {@link #brokerDefaults}.
     */
    public static final Map<String, List<String>> BROKER_SYNONYMS = Map.ofEntries(
        Map.entry(CLEANUP_POLICY, List.of("log.cleanup.policy")),
        Map.entry(COMPRESSION_TYPE, List.of("compression.type")),
        Map.entry(COMPRESSION_GZIP_LEVEL, List.of("compression.gzip.level")),
        Map.entry(COMPRESSION_LZ4_LEVEL, List.of("compression.lz4.level")),
        Map.entry(COMPRESSION_ZSTD_LEVEL, List.of("compression.zstd.level")),
        Map.entry(DELETE_RETENTION_MS, List.of("log.cleaner.delete.retention.ms")),
        Map.entry(FILE_DELETE_DELAY_MS, List.of("log.segment.delete.delay.ms")),
        Map.entry(FLUSH_MESSAGES, List.of("log.flush.interval.messages")),
        Map.entry(FLUSH_MS, List.of("log.flush.interval.ms", "log.flush.scheduler.interval.ms")),
        Map.entry(INDEX_INTERVAL_BYTES, List.of("log.index.interval.bytes")),
        Map.entry(LOCAL_RETENTION_BYTES, List.of("log.local.retention.bytes")),
        Map.entry(LOCAL_RETENTION_MS, List.of("log.local.retention.ms")),
        Map.entry(MAX_COMPACTION_LAG_MS, List.of("log.cleaner.max.compaction.lag.ms")),
        Map.entry(MAX_MESSAGE_BYTES, List.of("message.max.bytes")),
        Map.entry(MESSAGE_TIMESTAMP_AFTER_MAX_MS, List.of("log.message.timestamp.after.max.ms")),
        Map.entry(MESSAGE_TIMESTAMP_BEFORE_MAX_MS, List.of("log.message.timestamp.before.max.ms")),
        Map.entry(MESSAGE_TIMESTAMP_TYPE, List.of("log.message.timestamp.type")),
        Map.entry(MIN_CLEANABLE_DIRTY_RATIO, List.of("log.cleaner.min.cleanable.ratio")),
        Map.entry(MIN_COMPACTION_LAG_MS, List.of("log.cleaner.min.compaction.lag.ms")),
        Map.entry(MIN_IN_SYNC_REPLICAS, List.of("min.insync.replicas")),
        Map.entry(PREALLOCATE, List.of("log.preallocate")),
        Map.entry(RETENTION_BYTES, List.of("log.retention.bytes")),
        Map.entry(RETENTION_MS, List.of("log.retention.ms", "log.retention.minutes", "log.retention.hours")),
        Map.entry(SEGMENT_BYTES, List.of("log.segment.bytes")),
        Map.entry(SEGMENT_INDEX_BYTES, List.of("log.index.size.max.bytes")),
        Map.entry(SEGMENT_JITTER_MS, List.of("log.roll.jitter.ms", "log.roll.jitter.hours")),
        Map.entry(SEGMENT_MS, List.of("log.roll.ms", "log.roll.hours")),
        Map.entry(UNCLEAN_LEADER_ELECTION_ENABLE, List.of("unclean.leader.election.enable")));

    private final Map<String, Object> values;
    private final Map<String, String> overrides;

    public final List<String> cleanupPolicy;
    public final boolean compact;
    public final boolean delete;
    public final String compressionType;
    public final long deleteRetentionMs;
    public final long fileDeleteDelayMs;
    public final long flushMessages;
    public final long flushMs;
    public final int indexIntervalBytes;
    public final long maxCompactionLagMs;
    public final int maxMessageBytes;
    public final long messageTimestampAfterMaxMs;
    public final long messageTimestampBeforeMaxMs;
    public final boolean logAppendTime;
    public final double minCleanableDirtyRatio;
    public final long minCompactionLagMs;
    public final int minInSyncReplicas;
    public final boolean preallocate;
    public final long retentionBytes;
    public final long retentionMs;
    public final int segmentBytes;
    public final int segmentIndexBytes;
    public final long segmentJitterMs;
    public final long segmentMs;
    public final boolean uncleanLeaderElectionEnable;

    @SuppressWarnings("unchecked")
    private LogConfig(Map<String, Object> values, Map<String, String> overrides) {
        this.values = values;
        this.overrides = overrides;
        this.cleanupPolicy = (List<String>) values.get(CLEANUP_POLICY);
        this.compact = cleanupPolicy.contains("compact");
        this.delete = cleanupPolicy.contains("delete");
        this.compressionType = (String) values.get(COMPRESSION_TYPE);
        this.deleteRetentionMs = (Long) values.get(DELETE_RETENTION_MS);
        this.fileDeleteDelayMs = (Long) values.get(FILE_DELETE_DELAY_MS);
        this.flushMessages = (Long) values.get(FLUSH_MESSAGES);
        this.flushMs = (Long) values.get(FLUSH_MS);
        this.indexIntervalBytes = (Integer) values.get(INDEX_INTERVAL_BYTES);
        this.maxCompactionLagMs = (Long) values.get(MAX_COMPACTION_LAG_MS);
        this.maxMessageBytes = (Integer) values.get(MAX_MESSAGE_BYTES);
        this.messageTimestampAfterMaxMs = (Long) values.get(MESSAGE_TIMESTAMP_AFTER_MAX_MS);
        this.messageTimestampBeforeMaxMs = (Long) values.get(MESSAGE_TIMESTAMP_BEFORE_MAX_MS);
        this.logAppendTime = "LogAppendTime".equals(values.get(MESSAGE_TIMESTAMP_TYPE));
        this.minCleanableDirtyRatio = (Double) values.get(MIN_CLEANABLE_DIRTY_RATIO);
        this.minCompactionLagMs = (Long) values.get(MIN_COMPACTION_LAG_MS);
        this.minInSyncReplicas = (Integer) values.get(MIN_IN_SYNC_REPLICAS);
        this.preallocate = (Boolean) values.get(PREALLOCATE);
        this.retentionBytes = (Long) values.get(RETENTION_BYTES);
        this.retentionMs = (Long) values.get(RETENTION_MS);
        this.segmentBytes = (Integer) values.get(SEGMENT_BYTES);
        this.segmentIndexBytes = (Integer) values.get(SEGMENT_INDEX_BYTES);
        this.segmentJitterMs = (Long) values.get(SEGMENT_JITTER_MS);
        this.segmentMs = (Long) values.get(SEGMENT_MS);
        this.uncleanLeaderElectionEnable = (Boolean) values.get(UNCLEAN_LEADER_ELECTION_ENABLE);
    }

    /** Kafka's defaults, no broker settings and no topic overrides. */
    public static LogConfig defaults() {
        return of(Map.of(), Map.of());
    }

    /**
     * The effective configuration of a topic.
     *
     * @param brokerDefaults topic-key → value derived from the broker's settings ({@link #brokerDefaults})
     * @param topicOverrides the topic's own settings, as stored in the metadata log
     */
    public static LogConfig of(Map<String, String> brokerDefaults, Map<String, String> topicOverrides) {
        Map<String, String> merged = new HashMap<>(brokerDefaults);
        merged.putAll(topicOverrides);
        ConfigDef.Parsed parsed = DEFINITION.parse(merged);
        if (!parsed.unknownKeys().isEmpty()) {
            throw new io.strata.common.config.ConfigException("Unknown topic configuration " + parsed.unknownKeys());
        }
        return new LogConfig(parsed.values(), Map.copyOf(topicOverrides));
    }

    /**
     * Kafka's message when a topic asks for tiered storage on a broker without it
     * ({@code remote.log.storage.system.enable=false}); this broker has no tiered storage.
     */
    public static final String TIERED_STORAGE_DISABLED_MESSAGE =
        "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.";

    /**
     * Validates topic overrides without building a config: the one check every path that sets
     * topic configs runs (CreateTopics with or without validateOnly, AlterConfigs,
     * IncrementalAlterConfigs), so they refuse the same things with the same message.
     * {@code remote.storage.enable=true} is refused until tiered storage exists: accepting it
     * would tell the operator old segments go to remote storage while they are deleted.
     *
     * @throws io.strata.common.config.ConfigException naming the problem (the caller answers INVALID_CONFIG)
     */
    public static void validateOverrides(Map<String, String> topicOverrides) {
        LogConfig validated = of(Map.of(), topicOverrides);
        if (Boolean.TRUE.equals(validated.value(REMOTE_STORAGE_ENABLE))) {
            throw new io.strata.common.config.ConfigException(TIERED_STORAGE_DISABLED_MESSAGE);
        }
    }

    /**
     * Converts broker properties into topic-key defaults, applying Kafka's precedence among
     * synonyms (ms over minutes over hours).
     */
    public static Map<String, String> brokerDefaults(Map<String, String> brokerProperties) {
        Map<String, String> defaults = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> entry : BROKER_SYNONYMS.entrySet()) {
            for (String synonym : entry.getValue()) {
                String value = brokerProperties.get(synonym);
                if (value == null) {
                    continue;
                }
                defaults.put(entry.getKey(), toTopicUnit(synonym, value.trim()));
                break;
            }
        }
        return defaults;
    }

    private static String toTopicUnit(String synonym, String value) {
        try {
            if (synonym.endsWith(".hours")) {
                return Long.toString(Long.parseLong(value) * 3_600_000L);
            }
            if (synonym.endsWith(".minutes")) {
                return Long.toString(Long.parseLong(value) * 60_000L);
            }
        } catch (NumberFormatException e) {
            throw new io.strata.common.config.ConfigException(synonym, value, "not a valid number");
        }
        return value;
    }

    public Object value(String name) {
        return values.get(name);
    }

    public Map<String, Object> values() {
        return values;
    }

    /** The topic's own settings (what DescribeConfigs reports with source TOPIC_CONFIG). */
    public Map<String, String> overrides() {
        return overrides;
    }

    /**
     * How long the active segment may stay open: segment.ms, or less on a compacted topic with a
     * max.compaction.lag.ms, as in Kafka, since the cleaner never touches the active segment and
     * could not otherwise honour the lag.
     */
    public long maxSegmentMs() {
        return compact && maxCompactionLagMs > 0 ? Math.min(maxCompactionLagMs, segmentMs) : segmentMs;
    }

    /** A random jitter in [0, segmentJitterMs) bounded by segmentMs, chosen once per segment. */
    public long randomSegmentJitterMs(java.util.Random random) {
        if (segmentJitterMs == 0) {
            return 0;
        }
        return Math.abs(random.nextLong()) % Math.min(segmentJitterMs, segmentMs);
    }

    @Override
    public String toString() {
        return "LogConfig" + overrides;
    }
}
