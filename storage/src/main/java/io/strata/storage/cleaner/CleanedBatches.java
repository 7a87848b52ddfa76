package io.strata.storage.cleaner;

import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.RecordBatchDescriptor;
import io.strata.protocol.records.TimestampType;

import java.nio.ByteBuffer;
import java.util.List;

import static io.strata.protocol.records.RecordBatchDescriptor.ATTRIBUTES_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.BASE_TIMESTAMP_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.COMPRESSION_CODEC_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.CRC_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.DELETE_HORIZON_FLAG_MASK;
import static io.strata.protocol.records.RecordBatchDescriptor.LAST_OFFSET_DELTA_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.MIN_BATCH_LENGTH;
import static io.strata.protocol.records.RecordBatchDescriptor.RECORDS_COUNT_OFFSET;
import static io.strata.protocol.records.RecordBatchDescriptor.RECORD_BATCH_OVERHEAD;

/**
 * The batches the cleaner writes in place of a source batch. Whatever records remain, a cleaned
 * batch keeps the source batch's base offset, last offset, producer id, epoch, base sequence,
 * partition leader epoch, timestamp type and control/transactional flags (Kafka's rules):
 * records keep their offsets and sequences, and the batch's last sequence, which producer state
 * is rebuilt from, survives even when the last records do not.
 *
 * <p>The builder places the last offset at the last record appended; the source's last offset
 * is then written back into the header ({@code lastOffsetDelta}) and the CRC recomputed. Each
 * result is read back and checked before it is returned.
 *
 * <p>Stateless; thread-safe.
 */
final class CleanedBatches {
    private CleanedBatches() {
    }

    /** The source batch unchanged (a private copy of its bytes). */
    static MemoryRecords unchanged(DefaultRecordBatch source) {
        ByteBuffer copy = ByteBuffer.allocate(source.sizeInBytes()).put(source.buffer()).flip();
        return MemoryRecords.readableRecords(copy);
    }

    /**
     * The source batch with only {@code retained} (a non-empty subsequence of its records), and
     * the delete horizon {@code deleteHorizonMs} (or none, {@link RecordBatchDescriptor#NO_TIMESTAMP}).
     */
    static MemoryRecords retained(DefaultRecordBatch source, List<Record> retained, long deleteHorizonMs) {
        if (retained.isEmpty()) {
            throw new IllegalArgumentException("a rebuilt batch keeps at least one record; use empty(): baseOffset=" + source.baseOffset());
        }
        RecordBatchBuilder builder = new RecordBatchBuilder(source.compressionType(), source.timestampType(), source.baseOffset())
            .producerState(source.producerId(), source.producerEpoch(), source.baseSequence(), source.isTransactional())
            .controlBatch(source.isControlBatch())
            .partitionLeaderEpoch(source.partitionLeaderEpoch());
        if (source.timestampType() == TimestampType.LOG_APPEND_TIME) {
            builder.logAppendTimeMs(source.maxTimestamp());
        }
        if (deleteHorizonMs != RecordBatchDescriptor.NO_TIMESTAMP) {
            builder.deleteHorizonMs(deleteHorizonMs);
        }
        for (Record record : retained) {
            if (source.isControlBatch()) {
                // Control batches hold a single marker at the base offset, which is where the builder puts it.
                if (record.offset() != source.baseOffset()) {
                    throw new IllegalStateException("control record at offset " + record.offset() + " is not the only record of the batch at "
                        + source.baseOffset());
                }
                builder.appendControlRecord(record.timestamp(), ControlRecordType.parseKey(record.key()), record.value());
            } else {
                builder.appendWithOffset(record.offset(), record.timestamp(), record.key(), record.value(), record.headers());
            }
        }
        ByteBuffer builtBytes = builder.build().buffer();
        ByteBuffer batch = ByteBuffer.allocate(builtBytes.remaining()).put(builtBytes).flip();
        DefaultRecordBatch built = DefaultRecordBatch.wrap(batch);
        if (built.lastOffset() != source.lastOffset()) {
            batch.putInt(LAST_OFFSET_DELTA_OFFSET, source.lastOffsetDelta());
            writeCrc(batch);
        }
        return verified(batch, source, retained.size());
    }

    /**
     * A batch with no records that keeps the source's offsets and producer fields, written when
     * every record goes but the batch must stay (the last batch of an active producer, or the
     * last batch of a cleaning round). As in Kafka: uncompressed, no delete horizon, and both
     * timestamps set to the source's max timestamp.
     */
    static MemoryRecords empty(DefaultRecordBatch source) {
        ByteBuffer batch = ByteBuffer.allocate(RECORD_BATCH_OVERHEAD);
        batch.put(source.buffer().limit(RECORD_BATCH_OVERHEAD)).flip();
        batch.putInt(LENGTH_OFFSET, MIN_BATCH_LENGTH);
        batch.putShort(ATTRIBUTES_OFFSET, (short) (source.attributes() & ~(COMPRESSION_CODEC_MASK | DELETE_HORIZON_FLAG_MASK)));
        batch.putLong(BASE_TIMESTAMP_OFFSET, source.maxTimestamp());
        batch.putInt(RECORDS_COUNT_OFFSET, 0);
        writeCrc(batch);
        return verified(batch, source, 0);
    }

    private static void writeCrc(ByteBuffer batch) {
        batch.putInt(CRC_OFFSET, (int) DefaultRecordBatch.wrap(batch).computeChecksum());
    }

    /** Reads the written batch back: a mismatch is a bug here, never a property of the data. */
    private static MemoryRecords verified(ByteBuffer batch, DefaultRecordBatch source, int recordCount) {
        DefaultRecordBatch written = DefaultRecordBatch.wrap(batch);
        if (!written.isValid() || written.baseOffset() != source.baseOffset() || written.lastOffset() != source.lastOffset()
            || written.recordCount() != recordCount || written.producerId() != source.producerId()
            || written.producerEpoch() != source.producerEpoch() || written.baseSequence() != source.baseSequence()
            || written.isControlBatch() != source.isControlBatch() || written.isTransactional() != source.isTransactional()) {
            throw new IllegalStateException("cleaned batch " + written + " does not match its source " + source);
        }
        return MemoryRecords.readableRecords(batch);
    }
}
