package io.strata.protocol.records;

import io.strata.protocol.records.compression.CompressionCodec;
import io.strata.protocol.records.compression.GzipCodec;
import io.strata.protocol.records.compression.Lz4FrameCodec;
import io.strata.protocol.records.compression.NoCompressionCodec;
import io.strata.protocol.records.compression.SnappyCodec;
import io.strata.protocol.records.compression.ZstdCodec;

import java.util.Locale;

/**
 * The compression of a batch's records section: attribute bits 0-2. Each type carries a codec
 * at Kafka's default level. Immutable and thread-safe.
 */
public enum CompressionType {
    NONE(0, "none", NoCompressionCodec.INSTANCE),
    GZIP(1, "gzip", new GzipCodec()),
    SNAPPY(2, "snappy", SnappyCodec.INSTANCE),
    LZ4(3, "lz4", new Lz4FrameCodec()),
    ZSTD(4, "zstd", new ZstdCodec());

    private static final CompressionType[] BY_ID = values();

    private final int id;
    private final String configName;
    private final CompressionCodec codec;

    CompressionType(int id, String configName, CompressionCodec codec) {
        this.id = id;
        this.configName = configName;
        this.codec = codec;
    }

    /** The value of attribute bits 0-2. */
    public int id() {
        return id;
    }

    /** The name used in configs such as {@code compression.type}. */
    public String configName() {
        return configName;
    }

    /** The codec at Kafka's default level. */
    public CompressionCodec codec() {
        return codec;
    }

    /**
     * The type for attribute bits 0-2 read from a batch.
     *
     * @throws CorruptRecordException for ids 5..7 (and anything outside 0..7)
     */
    public static CompressionType forId(int id) {
        if (id < 0 || id >= BY_ID.length) {
            throw new CorruptRecordException("unknown compression type: id=" + id);
        }
        assert BY_ID[id].id == id : "enum order must equal ids: id=" + id;
        return BY_ID[id];
    }

    /** The type for a config value such as "lz4"; a misconfiguration, so IllegalArgumentException. */
    public static CompressionType forConfigName(String name) {
        for (CompressionType type : BY_ID) {
            if (type.configName.equals(name.toLowerCase(Locale.ROOT))) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown compression type: name=" + name);
    }
}
