package io.strata.raft;

/**
 * A position in the replicated log named by its offset and the leader epoch of the entry
 * before it: {@code (offset, epoch)} is the log end offset and the epoch of the last entry, as
 * a Vote request and the diverging-epoch check of Fetch carry them. Two logs that agree on an
 * entry's offset and epoch hold the same entry and the same prefix (the log matching property).
 *
 * <p>Ordered by epoch first, then offset: a log whose last entry has a higher epoch is more up
 * to date whatever its length (Raft §5.4.1).
 */
public record OffsetAndEpoch(long offset, int epoch) implements Comparable<OffsetAndEpoch> {
    public static final OffsetAndEpoch ZERO = new OffsetAndEpoch(0, 0);

    public OffsetAndEpoch {
        if (offset < 0 || epoch < 0) {
            throw new IllegalArgumentException("offset and epoch must not be negative: offset=" + offset + ", epoch=" + epoch);
        }
    }

    @Override
    public int compareTo(OffsetAndEpoch other) {
        int byEpoch = Integer.compare(epoch, other.epoch);
        return byEpoch != 0 ? byEpoch : Long.compare(offset, other.offset);
    }
}
