package io.strata.protocol.records;

/**
 * Limits the record layer enforces, each with its reason, kept in one place.
 *
 * <p>Thread-safe (constants only).
 */
public final class RecordLimits {
    /**
     * Default upper bound on the decompressed records of one batch: 64 MiB.
     *
     * <p>Why this value: Kafka producers close a batch at {@code batch.size} (16 KiB by
     * default) measured after estimated compression, and a Produce request is at most
     * {@code max.request.size} (1 MiB) on the wire; even generous settings give batches of a few
     * MiB decompressed. A 1 MiB batch expanding past 64 MiB is a compression ratio no real
     * payload reaches by accident, which is what a decompression bomb looks like. Kafka itself
     * has no such cap; brokers that need more pass their own limit to
     * {@link DefaultRecordBatch#records(int)}.
     */
    public static final int DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES = 64 * 1024 * 1024;

    static {
        // A cap below one maximal uncompressed Produce request would refuse ordinary traffic.
        assert DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES >= 1024 * 1024;
    }

    private RecordLimits() {
    }
}
