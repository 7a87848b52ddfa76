package io.strata.protocol.records;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.NoSuchElementException;

import static io.strata.protocol.records.RecordBatchDescriptor.LEGACY_RECORD_OVERHEAD_V0;
import static io.strata.protocol.records.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LOG_OVERHEAD;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V0;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V1;
import static io.strata.protocol.records.RecordBatchDescriptor.MAGIC_V2;

/**
 * Walks the batches of a record set by their length fields, without reading their contents.
 *
 * <p>Per entry, in this order (Kafka's order, so the same bytes fail the same way):
 * <ol>
 *   <li>fewer than 12 bytes left: end of iteration (a truncated tail);</li>
 *   <li>length field below the smallest entry of any magic (14): corrupt;</li>
 *   <li>12 + length beyond the remaining bytes: end of iteration (a truncated tail, which a
 *       Fetch response may legitimately end with);</li>
 *   <li>magic not 0, 1 or 2, or a length below that magic's minimum: corrupt.</li>
 * </ol>
 * Corruption is thrown from {@link #hasNext()} as {@link CorruptRecordException}. After the
 * iteration ends, {@link #validBytes()} tells how many bytes the complete entries covered.
 *
 * <p>Not thread-safe; one iterator per traversal.
 */
final class BatchIterator implements Iterator<RecordBatch> {
    private final ByteBuffer records;
    private RecordBatch next;

    BatchIterator(ByteBuffer records) {
        this.records = records.slice();
    }

    @Override
    public boolean hasNext() {
        if (next == null) {
            next = readNext();
        }
        return next != null;
    }

    @Override
    public RecordBatch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("no more record batches");
        }
        RecordBatch batch = next;
        next = null;
        return batch;
    }

    /** Bytes covered by the entries returned or found so far; less than the total if the tail is truncated. */
    int validBytes() {
        return records.position() - (next == null ? 0 : next.sizeInBytes());
    }

    private RecordBatch readNext() {
        int start = records.position();
        int remaining = records.remaining();
        if (remaining < LOG_OVERHEAD) {
            return null;
        }
        int length = records.getInt(start + LENGTH_OFFSET);
        if (length < LEGACY_RECORD_OVERHEAD_V0) {
            throw new CorruptRecordException("record batch length is below the minimum of any format: batchLength=" + length
                + ", minimum=" + LEGACY_RECORD_OVERHEAD_V0 + ", position=" + start);
        }
        if ((long) length + LOG_OVERHEAD > remaining) {
            return null;
        }
        int sizeInBytes = length + LOG_OVERHEAD;
        byte magic = records.get(start + MAGIC_OFFSET);
        ByteBuffer entry = records.slice(start, sizeInBytes);
        RecordBatch batch = switch (magic) {
            case MAGIC_V2 -> DefaultRecordBatch.wrap(entry);
            case MAGIC_V0, MAGIC_V1 -> LegacyRecordBatch.wrap(entry);
            default -> throw new CorruptRecordException("unknown record batch magic: magic=" + magic + ", position=" + start);
        };
        records.position(start + sizeInBytes);
        return batch;
    }
}
