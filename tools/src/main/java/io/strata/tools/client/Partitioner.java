package io.strata.tools.client;

import java.util.Random;

/**
 * Chooses the partition of a record the way Kafka's producer does by default (its
 * BuiltInPartitioner, KIP-794):
 * <ul>
 *   <li>a record with a key goes to {@code toPositive(murmur2(key)) % partitionCount}, so the CLI
 *       and every Kafka client put the same key in the same partition;</li>
 *   <li>records without a key stick to one partition until {@code stickyBatchBytes} of them
 *       have gone there, then switch to a randomly chosen partition, so batches fill up
 *       instead of spreading one record per partition.</li>
 * </ul>
 * The random source is passed in, so tests are repeatable.
 *
 * <p>Not thread-safe.
 */
public final class Partitioner {
    private static final int MURMUR2_SEED = 0x9747b28c;
    private static final int MURMUR2_M = 0x5bd1e995;
    private static final int MURMUR2_R = 24;

    private final int stickyBatchBytes;
    private final Random random;
    private int stickyPartition = -1;
    private int stickyPartitionCount = -1;
    private long stickyBytes;

    public Partitioner(int stickyBatchBytes, Random random) {
        if (stickyBatchBytes <= 0) {
            throw new IllegalArgumentException("sticky batch size must be positive: stickyBatchBytes=" + stickyBatchBytes);
        }
        this.stickyBatchBytes = stickyBatchBytes;
        this.random = random;
    }

    /**
     * The partition for a record.
     *
     * @param key         the serialized key, or null
     * @param recordBytes the record's approximate size, counted against the sticky partition
     */
    public int partition(byte[] key, int partitionCount, int recordBytes) {
        if (partitionCount <= 0) {
            throw new IllegalArgumentException("partition count must be positive: partitionCount=" + partitionCount);
        }
        if (key != null) {
            return partitionForKey(key, partitionCount);
        }
        if (stickyPartition < 0 || stickyPartitionCount != partitionCount || stickyBytes >= stickyBatchBytes) {
            stickyPartition = toPositive(random.nextInt()) % partitionCount;
            stickyPartitionCount = partitionCount;
            stickyBytes = 0;
        }
        stickyBytes += recordBytes;
        return stickyPartition;
    }

    /** Kafka's partition for a keyed record. */
    public static int partitionForKey(byte[] key, int partitionCount) {
        return toPositive(murmur2(key)) % partitionCount;
    }

    /** Clears the sign bit (not {@code Math.abs}, which leaves Integer.MIN_VALUE negative), as Kafka's Utils.toPositive. */
    public static int toPositive(int number) {
        return number & 0x7fffffff;
    }

    /** The 32-bit murmur2 hash with Kafka's seed, bit for bit as Kafka's Utils.murmur2. */
    public static int murmur2(byte[] data) {
        int length = data.length;
        int hash = MURMUR2_SEED ^ length;
        int wholeWords = length / 4;
        for (int i = 0; i < wholeWords; i++) {
            int offset = i * 4;
            int word = (data[offset] & 0xff) | ((data[offset + 1] & 0xff) << 8) | ((data[offset + 2] & 0xff) << 16)
                | ((data[offset + 3] & 0xff) << 24);
            word *= MURMUR2_M;
            word ^= word >>> MURMUR2_R;
            word *= MURMUR2_M;
            hash *= MURMUR2_M;
            hash ^= word;
        }
        int tail = length & ~3;
        switch (length % 4) {
            case 3:
                hash ^= (data[tail + 2] & 0xff) << 16;
                // fall through
            case 2:
                hash ^= (data[tail + 1] & 0xff) << 8;
                // fall through
            case 1:
                hash ^= data[tail] & 0xff;
                hash *= MURMUR2_M;
                break;
            default:
                break;
        }
        hash ^= hash >>> 13;
        hash *= MURMUR2_M;
        hash ^= hash >>> 15;
        return hash;
    }
}
