package io.strata.chaos.checker;

import java.util.Arrays;

/**
 * An open-addressing hash map from {@code long} to {@code long} without boxing: a history of 10^6 ops
 * keeps one entry per value or offset, 16 bytes per slot at a load factor of at most 1/2 instead of ~80
 * bytes per boxed {@code HashMap} entry.
 *
 * <p>Layout: parallel arrays {@code keys}, {@code values}, {@code used}, capacity a power of two, linear
 * probing; no removal (checkers only add). Grows by doubling when half full.
 *
 * <p>Not thread-safe; each checker owns its maps.
 */
final class LongLongMap {
    private static final int INITIAL_CAPACITY = 16;

    private long[] keys = new long[INITIAL_CAPACITY];
    private long[] values = new long[INITIAL_CAPACITY];
    private boolean[] used = new boolean[INITIAL_CAPACITY];
    private int size;

    /** @return the value of {@code key}, or {@code missing} if absent */
    long get(long key, long missing) {
        int slot = find(key);
        return used[slot] ? values[slot] : missing;
    }

    boolean containsKey(long key) {
        return used[find(key)];
    }

    /** Sets {@code key} to {@code value}. */
    void put(long key, long value) {
        int slot = find(key);
        if (!used[slot]) {
            used[slot] = true;
            keys[slot] = key;
            size++;
        }
        values[slot] = value;
        if (size * 2 > keys.length) {
            grow();
        }
    }

    /** Sets {@code key} to {@code value} unless present; @return whether it was added. */
    boolean putIfAbsent(long key, long value) {
        if (containsKey(key)) {
            return false;
        }
        put(key, value);
        return true;
    }

    int size() {
        return size;
    }

    /** Calls {@code visitor} for every entry, in no particular order. */
    void forEach(EntryVisitor visitor) {
        for (int i = 0; i < keys.length; i++) {
            if (used[i]) {
                visitor.accept(keys[i], values[i]);
            }
        }
    }

    /** @return the keys, sorted ascending */
    long[] sortedKeys() {
        long[] result = new long[size];
        int n = 0;
        for (int i = 0; i < keys.length; i++) {
            if (used[i]) {
                result[n++] = keys[i];
            }
        }
        Arrays.sort(result);
        return result;
    }

    /** Receives one entry. */
    interface EntryVisitor {
        void accept(long key, long value);
    }

    private int find(long key) {
        int mask = keys.length - 1;
        int slot = mix(key) & mask;
        while (used[slot] && keys[slot] != key) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    private static int mix(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    private void grow() {
        long[] oldKeys = keys;
        long[] oldValues = values;
        boolean[] oldUsed = used;
        keys = new long[oldKeys.length * 2];
        values = new long[oldKeys.length * 2];
        used = new boolean[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldUsed[i]) {
                put(oldKeys[i], oldValues[i]);
            }
        }
    }
}
