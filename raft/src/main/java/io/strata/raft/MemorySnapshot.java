package io.strata.raft;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A snapshot held in memory, for {@link RaftLog}s that live in memory (the simulation's):
 * a writer until frozen, then a reader. {@code onFreeze} publishes it to its log; an unfrozen
 * one is simply dropped, as a crash drops a {@code .part} file.
 *
 * <p>Not thread-safe.
 */
public final class MemorySnapshot implements SnapshotWriter, SnapshotReader {
    private final OffsetAndEpoch snapshotId;
    private final Consumer<MemorySnapshot> onFreeze;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private byte[] frozen;
    private boolean closed;

    public MemorySnapshot(OffsetAndEpoch snapshotId, Consumer<MemorySnapshot> onFreeze) {
        this.snapshotId = snapshotId;
        this.onFreeze = onFreeze;
    }

    @Override
    public OffsetAndEpoch snapshotId() {
        return snapshotId;
    }

    @Override
    public long sizeInBytes() {
        return frozen != null ? frozen.length : bytes.size();
    }

    @Override
    public void append(ByteBuffer data) {
        if (frozen != null || closed) {
            throw new IllegalStateException("snapshot " + snapshotId + " is " + (closed ? "closed" : "frozen") + ": cannot append");
        }
        byte[] copy = new byte[data.remaining()];
        data.duplicate().get(copy);
        bytes.writeBytes(copy);
    }

    @Override
    public void freeze() {
        if (closed) {
            throw new IllegalStateException("snapshot " + snapshotId + " was abandoned: cannot freeze");
        }
        if (frozen == null) {
            frozen = bytes.toByteArray();
            onFreeze.accept(this);
        }
    }

    @Override
    public void close() {
        closed = frozen == null;
    }

    @Override
    public ByteBuffer read(long position, int maxBytes) {
        if (frozen == null) {
            throw new IllegalStateException("snapshot " + snapshotId + " is not frozen: cannot read");
        }
        if (position < 0 || maxBytes < 0) {
            throw new IllegalArgumentException("position and maxBytes must not be negative: position=" + position + ", maxBytes=" + maxBytes);
        }
        int start = (int) Math.min(position, frozen.length);
        int length = Math.min(maxBytes, frozen.length - start);
        return ByteBuffer.wrap(frozen, start, length).slice().asReadOnlyBuffer();
    }
}
