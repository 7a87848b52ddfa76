package io.strata.tools;

import io.strata.protocol.records.CompressionType;
import io.strata.tools.client.ClientLimits;
import io.strata.tools.client.RecordProducer;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The producer options {@code strata produce} and {@code strata perf produce} share, with
 * Kafka's producer defaults. Idempotence is on by default, as in Kafka's producer since 3.0;
 * choosing {@code --acks 0} or {@code 1} without {@code --idempotence} turns it off, and asking
 * for both is an error.
 */
final class ProducerOptions {
    @Option(names = "--acks", paramLabel = "ACKS", defaultValue = "-1", converter = ProduceCommand.AcksConverter.class,
        description = "-1 or all: every in-sync replica; 1: the leader; 0: no acknowledgement (default: ${DEFAULT-VALUE}).")
    short acks;

    @Option(names = "--compression", paramLabel = "TYPE", defaultValue = "none", converter = ProduceCommand.CompressionConverter.class,
        description = "none, gzip, snappy, lz4 or zstd (default: ${DEFAULT-VALUE}).")
    CompressionType compression;

    @Option(names = "--idempotence", negatable = true,
        description = "Idempotent delivery: producer id and sequence numbers, so retries never duplicate (default: on with --acks -1).")
    Boolean idempotence;

    @Option(names = "--batch-size", paramLabel = "BYTES", defaultValue = "" + ClientLimits.DEFAULT_BATCH_SIZE_BYTES,
        description = "Close a partition's batch when it reaches this size (default: ${DEFAULT-VALUE}).")
    int batchSizeBytes;

    /** The producer settings these options ask for; a contradiction is a usage error of {@code commandLine}. */
    RecordProducer.Settings settings(CommandLine commandLine, int deliveryTimeoutMs) {
        if (Boolean.TRUE.equals(idempotence) && acks != -1) {
            throw new CommandLine.ParameterException(commandLine, "--idempotence needs --acks -1 (all), got --acks " + acks);
        }
        if (batchSizeBytes <= 0 || batchSizeBytes > ClientLimits.MAX_REQUEST_BYTES) {
            throw new CommandLine.ParameterException(commandLine, "--batch-size must be 1.." + ClientLimits.MAX_REQUEST_BYTES + ", got " + batchSizeBytes);
        }
        if (deliveryTimeoutMs <= 0) {
            throw new CommandLine.ParameterException(commandLine, "--delivery-timeout-ms must be positive, got " + deliveryTimeoutMs);
        }
        boolean idempotent = idempotence != null ? idempotence : acks == -1;
        return new RecordProducer.Settings(acks, compression, idempotent, batchSizeBytes, deliveryTimeoutMs);
    }
}
