package io.strata.raft;

import java.nio.ByteBuffer;

/**
 * A snapshot being written: raw bytes appended in order, then {@link #freeze() frozen}. Until it
 * is frozen the snapshot does not exist for readers, and a crash leaves nothing of it behind
 * (on disk it is a {@code .part} file that is fsynced and then renamed atomically, so neither a
 * zero-length nor a partial {@code .checkpoint} file can appear: KAFKA-15312).
 *
 * <p>The content is record batches v2: a SNAPSHOT_HEADER control batch first, a SNAPSHOT_FOOTER
 * control batch last ({@link RecordsSnapshotWriter} writes them); a follower copying the
 * leader's snapshot appends the bytes as they arrive, which may cut a batch anywhere.
 *
 * <p>Not thread-safe.
 */
public interface SnapshotWriter extends AutoCloseable {
    /** The end offset and epoch of the snapshot: it holds every entry below {@code offset}, the last of epoch {@code epoch}. */
    OffsetAndEpoch snapshotId();

    /** Bytes appended so far. */
    long sizeInBytes();

    /** Appends {@code bytes} (all remaining) at the end. @throws IllegalStateException once frozen */
    void append(ByteBuffer bytes);

    /** Makes the snapshot durable and visible; nothing can be appended afterwards. */
    void freeze();

    /** Abandons the snapshot if it was not frozen (its partial bytes are deleted). */
    @Override
    void close();
}
