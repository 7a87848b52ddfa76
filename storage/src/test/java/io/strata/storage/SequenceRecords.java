package io.strata.storage;

import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;

/**
 * Records that carry consecutive sequence numbers, and the checks that a log holds exactly a
 * prefix of them. Used by the crash and corruption tests, and by {@link CrashWriterMain}.
 *
 * <p>Record {@code s} (s = 0, 1, 2, ...) has the value {@code "seq=<s>;"} followed by
 * {@link #paddingBytes(long)} filler bytes, no key, and the timestamp
 * {@code BASE_TIMESTAMP_MS + s}. A log written only with these records from an empty start
 * holds record {@code s} at offset {@code s}, so every check is exact: offset = sequence,
 * timestamps strictly increase, no gaps, nothing after the last valid batch.
 */
final class SequenceRecords {
    static final long BASE_TIMESTAMP_MS = 1_700_000_000_000L;
    /**
     * The clock of every writer and reader of these logs: after every record timestamp used
     * (well within message.timestamp.after.max.ms) and less than a day after them, so that
     * producer.id.expiration.ms (one day) keeps idempotent producers alive across a restart.
     */
    static final long NOW_MS = BASE_TIMESTAMP_MS + 10_000_000L;
    static final long PRODUCER_ID = 4_242L;
    static final short PRODUCER_EPOCH = 0;
    private static final String PREFIX = "seq=";
    private static final int MAX_PADDING_BYTES = 200;

    private SequenceRecords() {
    }

    static long timestampOf(long sequence) {
        return BASE_TIMESTAMP_MS + sequence;
    }

    /** Filler after the sequence, varying in length so batches and segment rolls fall unevenly. */
    static int paddingBytes(long sequence) {
        return (int) ((sequence * 7_919L) % MAX_PADDING_BYTES);
    }

    static byte[] valueOf(long sequence) {
        byte[] head = (PREFIX + sequence + ";").getBytes(StandardCharsets.US_ASCII);
        byte[] value = new byte[head.length + paddingBytes(sequence)];
        System.arraycopy(head, 0, value, 0, head.length);
        for (int i = head.length; i < value.length; i++) {
            value[i] = (byte) ('a' + (sequence + i) % 26);
        }
        return value;
    }

    /** The sequence a record carries; fails if the value is not exactly {@link #valueOf} of it. */
    static long sequenceOf(Record record) {
        if (!record.hasValue()) {
            throw new AssertionError("record at offset " + record.offset() + " has no value");
        }
        ByteBuffer buffer = record.value();
        byte[] value = new byte[buffer.remaining()];
        buffer.get(value);
        String text = new String(value, StandardCharsets.US_ASCII);
        int end = text.indexOf(';');
        if (!text.startsWith(PREFIX) || end < 0) {
            throw new AssertionError("record at offset " + record.offset() + " is not a sequence record: " + abbreviate(text));
        }
        long sequence = Long.parseLong(text.substring(PREFIX.length(), end));
        if (!Arrays.equals(value, valueOf(sequence))) {
            throw new AssertionError("record at offset " + record.offset() + " with sequence " + sequence + " has a damaged value");
        }
        return sequence;
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }

    /**
     * A batch of {@code count} records with sequences {@code firstSequence...}; with
     * {@code idempotent} it carries {@link #PRODUCER_ID} and producer sequence = record sequence.
     */
    static MemoryRecords batch(CompressionType compression, long firstSequence, int count, boolean idempotent) {
        RecordBatchBuilder builder = new RecordBatchBuilder(compression, TimestampType.CREATE_TIME, 0L);
        if (idempotent) {
            builder.producerState(PRODUCER_ID, PRODUCER_EPOCH, Math.toIntExact(firstSequence), false);
        }
        for (long sequence = firstSequence; sequence < firstSequence + count; sequence++) {
            builder.append(timestampOf(sequence), null, valueOf(sequence));
        }
        return builder.build();
    }

    /**
     * Checks that the log holds exactly the records 0..n-1 at offsets 0..n-1 and returns n:
     * every batch passes its CRC, segments follow each other without gaps, each segment file
     * ends exactly after its last batch, the log end offset is n, and each batch's leader
     * epoch is the one the epoch cache gives for its offsets.
     */
    static long verifyPrefix(UnifiedLog log) {
        return verifyRange(log, 0L);
    }

    /**
     * As {@link #verifyPrefix}, for a log whose older segments were deleted: it must hold
     * exactly the records {@code firstOffset..n-1}, starting at its log start offset.
     */
    static long verifyRange(UnifiedLog log, long firstOffset) {
        if (log.logStartOffset() != firstOffset) {
            throw new AssertionError("log start offset " + log.logStartOffset() + ", expected " + firstOffset);
        }
        long expected = firstOffset;
        for (LogSegment segment : log.logSegments()) {
            if (segment.baseOffset() != expected) {
                throw new AssertionError("segment " + segment + " starts at " + segment.baseOffset() + ", expected " + expected);
            }
            int position = 0;
            for (FileRecords.FileBatch header : segment.log().batchesFrom(0)) {
                if (header.position() != position) {
                    throw new AssertionError("batch at position " + header.position() + " of " + segment + ", expected " + position);
                }
                DefaultRecordBatch batch = header.load();
                batch.ensureValid();
                expected = verifyBatch(log, batch, expected);
                position += batch.sizeInBytes();
            }
            if (position != segment.size()) {
                throw new AssertionError(segment + " holds " + (segment.size() - position) + " bytes after its last batch at " + position);
            }
        }
        if (log.logEndOffset() != expected) {
            throw new AssertionError("log end offset " + log.logEndOffset() + " but the segments hold offsets 0.." + (expected - 1));
        }
        return expected;
    }

    private static long verifyBatch(UnifiedLog log, DefaultRecordBatch batch, long expected) {
        if (batch.baseOffset() != expected) {
            throw new AssertionError("batch " + batch + " starts at " + batch.baseOffset() + ", expected " + expected);
        }
        int epoch = log.epochForOffset(batch.baseOffset());
        if (batch.partitionLeaderEpoch() != epoch) {
            throw new AssertionError("batch at " + batch.baseOffset() + " has leader epoch " + batch.partitionLeaderEpoch()
                + " but the epoch cache says " + epoch + ": " + log.leaderEpochCache().epochEntries());
        }
        List<Record> records = batch.records();
        for (Record record : records) {
            if (record.offset() != expected || sequenceOf(record) != expected || record.timestamp() != timestampOf(expected)) {
                throw new AssertionError("record at offset " + record.offset() + " (timestamp " + record.timestamp()
                    + ") does not carry sequence " + expected);
            }
            expected++;
        }
        return expected;
    }

    /**
     * Checks index lookups on a log verified by {@link #verifyPrefix}: for {@code samples}
     * random offsets, a read returns the batch holding the offset first, and the time lookup
     * of the record's timestamp finds the record; one past the end finds nothing.
     */
    static void verifyLookups(UnifiedLog log, Random random, int samples) {
        long start = log.logStartOffset();
        long end = log.logEndOffset();
        if (end == start) {
            return;
        }
        for (int i = 0; i < samples; i++) {
            long offset = i == 0 ? start : i == 1 ? end - 1 : start + (long) (random.nextDouble() * (end - start));
            verifyReadAt(log, offset);
            UnifiedLog.OffsetAndTimestamp found = log.fetchOffsetByTimestamp(timestampOf(offset));
            if (found == null || found.offset() != offset || found.timestamp() != timestampOf(offset)) {
                throw new AssertionError("time lookup of " + timestampOf(offset) + " found " + found + ", expected offset " + offset);
            }
        }
        if (log.fetchOffsetByTimestamp(timestampOf(end)) != null) {
            throw new AssertionError("time lookup past the last record found " + log.fetchOffsetByTimestamp(timestampOf(end)));
        }
    }

    static void verifyReadAt(UnifiedLog log, long offset) {
        FetchDataInfo info = log.read(offset, 1, FetchIsolation.LOG_END, true);
        ByteBuffer bytes = ((FileRecords) info.records()).readAll();
        Iterator<RecordBatch> batches = MemoryRecords.readableRecords(bytes).batches().iterator();
        if (!batches.hasNext()) {
            throw new AssertionError("read at offset " + offset + " returned no batch; log end " + log.logEndOffset());
        }
        DefaultRecordBatch first = (DefaultRecordBatch) batches.next();
        if (first.baseOffset() > offset || first.lastOffset() < offset) {
            throw new AssertionError("read at offset " + offset + " returned the batch " + first.baseOffset() + ".." + first.lastOffset());
        }
    }
}
