package io.strata.storage.cleaner;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The cleaner's map from a record key to the offset of the key's latest record in the dirty
 * section, in a fixed amount of memory: keys are not stored, only their 16-byte MD5 digest
 * (as in Kafka's SkimpyOffsetMap). Two keys with the same digest would be treated as one; at
 * 2^-128 per pair that is accepted, as Kafka accepts it.
 *
 * <h2>Layout</h2>
 * An open-addressing table of {@code slots} entries in one heap buffer:
 * <pre>
 *   slot i at byte i * 24:
 *   +----------------------------+------------------+
 *   | MD5(key)  (16 bytes)       | offset + 1 (i64) |   offset + 1 == 0: the slot is empty
 *   +----------------------------+------------------+
 * </pre>
 * {@code slots} is the largest prime that fits the memory, so that double hashing visits every
 * slot: the probe sequence of a digest is {@code (h1 + attempt * step) mod slots} with
 * {@code h1} the digest's first 8 bytes and {@code step = 1 + (h2 mod (slots - 1))} from its
 * last 8 bytes. Any step in [1, slots) is coprime with a prime.
 *
 * <h2>Worked example</h2>
 * 1 MiB gives 1_048_576 / 24 = 43_690 entries; the largest prime at most that is 43_669, so
 * slots = 43_669 and 21 × 24 bytes go unused. With the cleaner's load factor of 0.9 at most
 * 39_302 keys go in; a lookup then costs about 1 / (1 − 0.9) = 10 probes when the key is
 * absent and about (1 / 0.9) ln(1 / (1 − 0.9)) ≈ 2.6 when present.
 *
 * <p>Not thread-safe: each cleaner thread owns one.
 */
public final class OffsetMap {
    public static final int HASH_BYTES = 16;
    public static final int ENTRY_BYTES = HASH_BYTES + Long.BYTES;
    /** The least memory that still gives a usable table (two slots). */
    public static final int MIN_MEMORY_BYTES = 2 * ENTRY_BYTES;

    private final ByteBuffer table;
    private final int slots;
    private final MessageDigest digest;
    private final byte[] hash = new byte[HASH_BYTES];
    /** The current digest's first and last 8 bytes, big-endian, as the table stores them. */
    private long hashHigh;
    private long hashLow;
    private int entries;
    private long latestOffset = -1L;
    /** Probes made by puts and gets since the last clear, for statistics. */
    private long probes;

    /** A map in {@code memoryBytes} of heap. */
    public OffsetMap(int memoryBytes) {
        if (memoryBytes < MIN_MEMORY_BYTES) {
            throw new IllegalArgumentException("an offset map needs at least " + MIN_MEMORY_BYTES + " bytes: memoryBytes=" + memoryBytes);
        }
        this.slots = largestPrimeAtMost(memoryBytes / ENTRY_BYTES);
        this.table = ByteBuffer.allocate(slots * ENTRY_BYTES);
        try {
            this.digest = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform provides MD5", e);
        }
    }

    /** The number of entries the table holds at most. */
    public int slots() {
        return slots;
    }

    public int size() {
        return entries;
    }

    /** The fraction of slots in use. */
    public double utilization() {
        return (double) entries / slots;
    }

    /** The largest offset the map has seen, including offsets of batches without keys; -1 if none. */
    public long latestOffset() {
        return latestOffset;
    }

    public void updateLatestOffset(long offset) {
        latestOffset = Math.max(latestOffset, offset);
    }

    public long probes() {
        return probes;
    }

    /** Empties the map. */
    public void clear() {
        Arrays.fill(table.array(), (byte) 0);
        entries = 0;
        latestOffset = -1L;
        probes = 0;
    }

    /**
     * Records that {@code key}'s latest record is at {@code offset}.
     *
     * @throws IllegalStateException if the key is new and every slot is taken (the caller bounds
     *                               the entries below {@link #slots()})
     */
    public void put(ByteBuffer key, long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offsets are not negative: offset=" + offset);
        }
        hashInto(key);
        int slot = findSlot();
        if (slot < 0) {
            throw new IllegalStateException("offset map is full: slots=" + slots + ", entries=" + entries);
        }
        int position = slot * ENTRY_BYTES;
        if (table.getLong(position + HASH_BYTES) == 0) {
            table.put(position, hash);
            entries++;
        }
        table.putLong(position + HASH_BYTES, offset + 1);
        latestOffset = Math.max(latestOffset, offset);
    }

    /** The offset recorded for {@code key}, or -1 if none. */
    public long get(ByteBuffer key) {
        hashInto(key);
        int slot = findSlot();
        if (slot < 0) {
            return -1L;
        }
        return table.getLong(slot * ENTRY_BYTES + HASH_BYTES) - 1;
    }

    /** The slot holding the current hash, else the first empty slot of its probe sequence, else -1 (table full). */
    private int findSlot() {
        long step = 1 + Math.floorMod(hashLow, slots - 1);
        long slot = Math.floorMod(hashHigh, slots);
        for (int attempt = 0; attempt < slots; attempt++) {
            probes++;
            int position = (int) slot * ENTRY_BYTES;
            if (table.getLong(position + HASH_BYTES) == 0 || sameHash(position)) {
                return (int) slot;
            }
            slot = (slot + step) % slots;
        }
        return -1;
    }

    private boolean sameHash(int position) {
        return table.getLong(position) == hashHigh && table.getLong(position + Long.BYTES) == hashLow;
    }

    private void hashInto(ByteBuffer key) {
        digest.reset();
        digest.update(key.duplicate());
        try {
            digest.digest(hash, 0, HASH_BYTES);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException("MD5 digests are " + HASH_BYTES + " bytes", e);
        }
        hashHigh = bytesToLong(0);
        hashLow = bytesToLong(Long.BYTES);
    }

    private long bytesToLong(int from) {
        long value = 0;
        for (int i = from; i < from + Long.BYTES; i++) {
            value = (value << 8) | (hash[i] & 0xff);
        }
        return value;
    }

    /** The largest prime {@code <= n}, for {@code n >= 2}; trial division, run once per map. */
    static int largestPrimeAtMost(int n) {
        if (n < 2) {
            throw new IllegalArgumentException("no prime at most " + n);
        }
        for (int candidate = n; ; candidate--) {
            if (isPrime(candidate)) {
                return candidate;
            }
        }
    }

    private static boolean isPrime(int n) {
        if (n < 4) {
            return n >= 2;
        }
        if (n % 2 == 0) {
            return false;
        }
        for (int divisor = 3; (long) divisor * divisor <= n; divisor += 2) {
            if (n % divisor == 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "OffsetMap(slots=" + slots + ", entries=" + entries + ", latestOffset=" + latestOffset + ")";
    }
}
