package io.strata.bench;

import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

/**
 * What the storage benchmarks share: the batch they write (1 KiB records, 64 of them, so
 * 64 KiB of record values per batch, uncompressed, as a producer with batch.size=65536 would
 * send), option parsing, percentiles and file clean-up.
 */
final class StorageBenchSupport {
    static final int RECORD_VALUE_BYTES = 1024;
    static final int RECORDS_PER_BATCH = 64;
    static final long MIB = 1024L * 1024L;
    static final long GIB = 1024L * MIB;

    private StorageBenchSupport() {
    }

    /**
     * One batch of {@link #RECORDS_PER_BATCH} records with {@link #RECORD_VALUE_BYTES}-byte
     * random values (incompressible, as most payloads are once compressed by a producer).
     */
    static MemoryRecords batch(long timestampMs, Random random) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0L);
        byte[] value = new byte[RECORD_VALUE_BYTES];
        for (int i = 0; i < RECORDS_PER_BATCH; i++) {
            random.nextBytes(value);
            builder.append(timestampMs, null, value);
        }
        return builder.build();
    }

    /** Options as {@code --name value} or {@code --name=value}. */
    static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("expected --name value, got: " + arg);
            }
            int equals = arg.indexOf('=');
            if (equals > 0) {
                options.put(arg.substring(2, equals), arg.substring(equals + 1));
            } else if (i + 1 < args.length) {
                options.put(arg.substring(2), args[++i]);
            } else {
                throw new IllegalArgumentException("option without a value: " + arg);
            }
        }
        return options;
    }

    static long longOption(Map<String, String> options, String name, long defaultValue) {
        String value = options.get(name);
        return value == null ? defaultValue : Long.parseLong(value);
    }

    static Path dirOption(Map<String, String> options, String name, String defaultValue) {
        return Path.of(options.getOrDefault(name, defaultValue)).toAbsolutePath();
    }

    /** The {@code percent}th percentile (nearest rank) of {@code sortedValues}. */
    static long percentile(long[] sortedValues, double percent) {
        if (sortedValues.length == 0) {
            throw new IllegalArgumentException("no values");
        }
        int rank = (int) Math.ceil(percent / 100.0 * sortedValues.length);
        return sortedValues[Math.max(0, Math.min(sortedValues.length - 1, rank - 1))];
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    static String micros(long nanos) {
        return String.format("%.1f us", nanos / 1_000.0);
    }

    static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path path : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static long directoryBytes(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(file -> {
                try {
                    return Files.size(file);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).sum();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
