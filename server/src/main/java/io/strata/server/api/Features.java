package io.strata.server.api;

import io.strata.common.config.ConfigException;
import io.strata.server.config.ServerConfig;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Feature versions this broker supports and the levels finalized on a new cluster. Clients
 * switch behaviour on the finalized levels (kafka-clients uses transactions v2 only when
 * {@code transaction.version} ≥ 2 is finalized), so a level is raised here only when what it
 * implies is implemented.
 *
 * <p>{@code metadata.version} 33 is Kafka 4.4-IV2; Strata's metadata log uses its own record
 * formats, so the level tells clients which Kafka release's semantics to expect.
 */
public final class Features {
    public static final String METADATA_VERSION = "metadata.version";
    public static final String KRAFT_VERSION = "kraft.version";
    public static final String GROUP_VERSION = "group.version";
    public static final String TRANSACTION_VERSION = "transaction.version";
    public static final String ELIGIBLE_LEADER_REPLICAS_VERSION = io.strata.metadata.ReplicationControl.ELR_FEATURE;

    /** Name → {min supported, max supported}. */
    private final Map<String, short[]> supported = new LinkedHashMap<>();
    /** Levels written to the metadata log when a cluster is created. */
    private final Map<String, Short> bootstrap = new LinkedHashMap<>();

    public Features() {
        supported.put(METADATA_VERSION, new short[] {7, 33});
        // kraft.version 1: the voters live in the metadata log and change with AddRaftVoter / RemoveRaftVoter (KIP-853).
        supported.put(KRAFT_VERSION, new short[] {0, 1});
        // group.version 1 is the consumer rebalance protocol (KIP-848); Kafka serves ConsumerGroupHeartbeat only when it is finalized.
        supported.put(GROUP_VERSION, new short[] {0, 1});
        // transaction.version 2 is transactions v2 (KIP-890 part 2): Produce v12, TxnOffsetCommit v5 and EndTxn v5 with an epoch bump
        // per transaction. Level 1 (KIP-890 part 1 verification) needs no client change and is served at every level.
        supported.put(TRANSACTION_VERSION, new short[] {0, 2});
        // eligible.leader.replicas.version 1 is KIP-966: the controller keeps ELR and elects from it (ReplicationControl). Kafka 4.4
        // finalizes 1 on new clusters; Strata does not yet, because ELR is only safe once partition leaders keep the high
        // watermark still while the ISR is below min.insync.replicas (strict min ISR, KAFKA-15583), which the replication
        // leader side brings. Until then an operator may finalize it with UpdateFeatures.
        supported.put(ELIGIBLE_LEADER_REPLICAS_VERSION, new short[] {0, 1});
        bootstrap.put(METADATA_VERSION, (short) 33);
        bootstrap.put(GROUP_VERSION, (short) 1);
        bootstrap.put(TRANSACTION_VERSION, (short) 2);
    }

    public Map<String, short[]> supported() {
        return supported;
    }

    public Map<String, Short> bootstrapLevels() {
        return bootstrap;
    }

    /**
     * The levels of a new cluster with {@code overrides} (NAME=LEVEL, as kafka-storage format
     * --feature) applied: each must name a supported feature at a supported level; level 0
     * leaves the feature unfinalized.
     *
     * @throws ConfigException naming the bad entry
     */
    public Map<String, Short> bootstrapLevels(List<String> overrides) {
        Map<String, Short> levels = new LinkedHashMap<>(bootstrap);
        for (String override : overrides) {
            int equals = override.indexOf('=');
            String name = equals < 0 ? override.trim() : override.substring(0, equals).trim();
            short[] range = supported.get(name);
            if (equals < 0 || range == null) {
                throw new ConfigException(ServerConfig.STRATA_FORMAT_FEATURES, override, "expected NAME=LEVEL for one of " + supported.keySet());
            }
            short level;
            try {
                level = Short.parseShort(override.substring(equals + 1).trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(ServerConfig.STRATA_FORMAT_FEATURES, override, "the level is not a number");
            }
            if (level < range[0] || level > range[1]) {
                throw new ConfigException(ServerConfig.STRATA_FORMAT_FEATURES, override,
                    name + " supports levels " + range[0] + "-" + range[1] + ", not " + level);
            }
            if (level == 0) {
                levels.remove(name);
            } else {
                levels.put(name, level);
            }
        }
        return levels;
    }
}
