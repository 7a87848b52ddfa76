package io.strata.server.api;

import java.util.LinkedHashMap;
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

    /** Name → {min supported, max supported}. */
    private final Map<String, short[]> supported = new LinkedHashMap<>();
    /** Levels written to the metadata log when a cluster is created. */
    private final Map<String, Short> bootstrap = new LinkedHashMap<>();

    public Features() {
        supported.put(METADATA_VERSION, new short[] {7, 33});
        supported.put(KRAFT_VERSION, new short[] {0, 0});
        // group.version 1 is the consumer rebalance protocol (KIP-848); Kafka serves ConsumerGroupHeartbeat only when it is finalized.
        supported.put(GROUP_VERSION, new short[] {0, 1});
        // transaction.version 2 is transactions v2 (KIP-890 part 2): Produce v12, TxnOffsetCommit v5 and EndTxn v5 with an epoch bump
        // per transaction. Level 1 (KIP-890 part 1 verification) needs no client change and is served at every level.
        supported.put(TRANSACTION_VERSION, new short[] {0, 2});
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
}
