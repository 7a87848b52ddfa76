package io.strata.raft;

import io.strata.protocol.Reader;
import io.strata.protocol.message.KRaftVersionRecord;
import io.strata.protocol.message.VotersRecord;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.Records;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;

/**
 * The voter sets and kraft.version levels of a replica's log, by the offset of the control
 * record that set them (KIP-853). The voter set in effect is the latest one in the log,
 * committed or not (a replica uses a VotersRecord as soon as it has it, Raft's single-server
 * change rule); truncating the log rolls back to the set before the truncation point. Since a
 * leader changes one voter at a time and only once the previous change committed, at most one
 * set lies between the high watermark and the log end (KAFKA-16580).
 *
 * <p>Two modes:
 * <ul>
 *   <li><b>static</b> (kraft.version 0, {@code controller.quorum.voters}): the configured set,
 *       always; control records in the log are not read;</li>
 *   <li><b>dynamic</b> (kraft.version 1): nothing until a snapshot or the log says otherwise.
 *       {@code strata format} writes the bootstrap snapshot {@code 0-0} holding a
 *       KRaftVersionRecord and (unless {@code --no-initial-controllers}) a VotersRecord. A
 *       snapshot's control records take offset {@code snapshotEnd - 1}.</li>
 * </ul>
 *
 * <p>Fed by its {@link RaftClient}: the latest snapshot at start, then the log from the
 * snapshot's end ({@link #catchUp}), the batches a follower appends ({@link #scan}), the
 * leader's own appends, truncations ({@link #truncateTo}) and snapshots loaded from the leader.
 * Memory: one entry per voter change still in the log; {@link #trimBefore} drops those that the
 * log start passed (keeping the one in effect there).
 *
 * <p>Not thread-safe: the quorum's thread.
 */
final class VoterSetHistory {
    /** The most bytes read from the log at once when catching up. */
    private static final int READ_BYTES = 1 << 20;
    /**
     * The most bytes of a snapshot read for its kraft.version and voters: they are in the control
     * batch right after the header, and a VotersRecord of even hundreds of voters is a few KiB; the
     * rest of the snapshot (the state) is not read.
     */
    private static final int SNAPSHOT_HEAD_BYTES = 1 << 20;

    private final boolean staticVoters;
    private final VoterSet staticSet;
    private final TreeMap<Long, VoterSet> voterSets = new TreeMap<>();
    private final TreeMap<Long, Short> kraftVersions = new TreeMap<>();
    /** The next log offset not looked at yet. */
    private long nextOffset;

    private VoterSetHistory(boolean staticVoters, VoterSet staticSet) {
        this.staticVoters = staticVoters;
        this.staticSet = staticSet;
    }

    static VoterSetHistory staticVoters(VoterSet voters) {
        if (voters.isEmpty()) {
            throw new IllegalArgumentException("a static quorum needs at least one voter");
        }
        return new VoterSetHistory(true, voters);
    }

    static VoterSetHistory dynamic() {
        return new VoterSetHistory(false, VoterSet.EMPTY);
    }

    boolean isStatic() {
        return staticVoters;
    }

    /** The voter set in effect: the latest in the log (the static set in static mode). */
    VoterSet latest() {
        return staticVoters || voterSets.isEmpty() ? staticSet : voterSets.lastEntry().getValue();
    }

    /** The offset of the record of the latest voter set, or -1 (static, or none yet). */
    long latestOffset() {
        return staticVoters || voterSets.isEmpty() ? -1 : voterSets.lastKey();
    }

    /** The voter set in effect once every entry below {@code highWatermark} is committed. */
    VoterSet committed(long highWatermark) {
        if (staticVoters) {
            return staticSet;
        }
        Map.Entry<Long, VoterSet> entry = voterSets.floorEntry(highWatermark - 1);
        return entry == null ? VoterSet.EMPTY : entry.getValue();
    }

    /** The offset of the record of {@link #committed}'s set, or -1 (static, bootstrap checkpoint, or none). */
    long committedOffset(long highWatermark) {
        if (staticVoters) {
            return -1;
        }
        Long offset = voterSets.floorKey(highWatermark - 1);
        return offset == null ? -1 : offset;
    }

    /** The finalized kraft.version at the log end: 0 for static quorums and before any KRaftVersionRecord. */
    short kraftVersion() {
        return staticVoters || kraftVersions.isEmpty() ? 0 : kraftVersions.lastEntry().getValue();
    }

    /** Whether a voter change lies at or above {@code highWatermark} (it is not committed yet). */
    boolean hasUncommittedChange(long highWatermark) {
        return latestOffset() >= highWatermark;
    }

    long nextOffset() {
        return nextOffset;
    }

    /** Forgets everything and reads the control records of {@code snapshot} (the log now starts at its end). */
    void loadSnapshot(SnapshotReader snapshot) {
        voterSets.clear();
        kraftVersions.clear();
        long at = snapshot.snapshotId().offset() - 1;
        if (!staticVoters) {
            ByteBuffer head = snapshot.read(0, (int) Math.min(snapshot.sizeInBytes(), SNAPSHOT_HEAD_BYTES));
            // Iteration ends quietly at a batch the head cuts; the control batches come before the first data batch.
            for (RecordBatch batch : MemoryRecords.readableRecords(head).batches()) {
                if (!((DefaultRecordBatch) batch).isControlBatch()) {
                    break;
                }
                for (Record record : ((DefaultRecordBatch) batch).records()) {
                    apply(at, record);
                }
            }
        }
        nextOffset = snapshot.snapshotId().offset();
    }

    /** Reads whatever the log holds past what was looked at. */
    void catchUp(RaftLog log) {
        if (staticVoters) {
            nextOffset = log.endOffset().offset(); // a static quorum's log holds no voters to read
            return;
        }
        nextOffset = Math.max(nextOffset, log.logStartOffset());
        while (nextOffset < log.endOffset().offset()) {
            long before = nextOffset;
            scan(log.read(nextOffset, READ_BYTES));
            if (nextOffset == before) {
                throw new IllegalStateException("the log holds no batch at " + nextOffset + " below its end " + log.endOffset());
            }
        }
    }

    /** Looks at batches just appended (in offset order); batches already looked at are skipped. */
    void scan(Records records) {
        if (staticVoters) {
            return;
        }
        for (RecordBatch entry : MemoryRecords.of(records).batches()) {
            DefaultRecordBatch batch = (DefaultRecordBatch) entry;
            if (batch.lastOffset() < nextOffset) {
                continue;
            }
            if (batch.isControlBatch() && !staticVoters) {
                long offset = batch.baseOffset();
                for (Record record : batch.records()) {
                    apply(offset++, record);
                }
            }
            nextOffset = batch.lastOffset() + 1;
        }
    }

    /** The leader appended data (or a LEADER_CHANGE) ending below {@code endOffset}: nothing to learn from it. */
    void skipTo(long endOffset) {
        nextOffset = Math.max(nextOffset, endOffset);
    }

    /** The leader appended a VotersRecord at {@code offset}. */
    void appended(long offset, VoterSet voters) {
        if (staticVoters) {
            throw new IllegalStateException("a static quorum (kraft.version 0) has no voter records: offset=" + offset + ", voters=" + voters);
        }
        voterSets.put(offset, voters);
        nextOffset = Math.max(nextOffset, offset + 1);
    }

    /** The log lost every entry at or above {@code offset}: the sets they named are gone. */
    void truncateTo(long offset) {
        voterSets.tailMap(offset, true).clear();
        kraftVersions.tailMap(offset, true).clear();
        nextOffset = Math.min(nextOffset, offset);
    }

    /** The log now starts at {@code logStartOffset}: keep only the set (and version) in effect there and the later ones. */
    void trimBefore(long logStartOffset) {
        Long keep = voterSets.floorKey(logStartOffset - 1);
        if (keep != null) {
            voterSets.headMap(keep, false).clear();
        }
        Long keepVersion = kraftVersions.floorKey(logStartOffset - 1);
        if (keepVersion != null) {
            kraftVersions.headMap(keepVersion, false).clear();
        }
    }

    private void apply(long offset, Record record) {
        ControlRecordType type = ControlRecordType.parseKey(record.key());
        if (type == ControlRecordType.KRAFT_VOTERS) {
            voterSets.put(offset, VoterSet.fromRecord(new VotersRecord(new Reader(record.value().duplicate()), (short) 0)));
        } else if (type == ControlRecordType.KRAFT_VERSION) {
            kraftVersions.put(offset, new KRaftVersionRecord(new Reader(record.value().duplicate()), (short) 0).kRaftVersion());
        }
    }

    @Override
    public String toString() {
        return staticVoters ? "static " + staticSet : "dynamic(kraft.version=" + kraftVersion() + ", sets=" + voterSets + ")";
    }
}
