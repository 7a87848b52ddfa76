package io.strata.raft;

import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatch;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A frozen snapshot: its bytes by position (FetchSnapshot serves them in chunks) and its
 * record batches in order (header, content, footer).
 *
 * <p>Not thread-safe.
 */
public interface SnapshotReader {
    OffsetAndEpoch snapshotId();

    long sizeInBytes();

    /** Up to {@code maxBytes} bytes from {@code position} (fewer at the end; none at or past it). */
    ByteBuffer read(long position, int maxBytes);

    /** Every record batch of the snapshot, in order, header and footer included. */
    default List<RecordBatch> batches() {
        if (sizeInBytes() > Integer.MAX_VALUE) {
            throw new IllegalStateException("snapshot " + snapshotId() + " too large to read at once: " + sizeInBytes() + " bytes");
        }
        ByteBuffer all = read(0, (int) sizeInBytes());
        List<RecordBatch> batches = new ArrayList<>();
        for (RecordBatch batch : MemoryRecords.readableRecords(all).batches()) {
            batches.add(batch);
        }
        return batches;
    }
}
