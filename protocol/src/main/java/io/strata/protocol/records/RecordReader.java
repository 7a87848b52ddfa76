package io.strata.protocol.records;

import io.strata.protocol.ByteUtils;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.Sizes;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static io.strata.protocol.records.RecordBatchDescriptor.MIN_HEADER_BYTES;
import static io.strata.protocol.records.RecordBatchDescriptor.MIN_RECORD_BODY_BYTES;
import static io.strata.protocol.records.RecordBatchDescriptor.MIN_RECORD_BYTES;

/**
 * Parses the uncompressed records section of a magic-2 batch (record layout in
 * {@link RecordBatchDescriptor}).
 *
 * <p>Every count and length is checked against the bytes that actually remain before
 * anything is sliced or allocated: the record count against {@code bytes / 7}, a record's
 * length against the section, key/value/header lengths against the record body, the header
 * count against {@code body / 2}. A record must consume exactly its declared length, and the
 * section must hold exactly the declared number of records. Stateless; thread-safe.
 */
final class RecordReader {
    private RecordReader() {
    }

    static List<Record> readAll(DefaultRecordBatch batch, ByteBuffer records) {
        List<Record> result = new ArrayList<>(Math.max(0, Math.min(batch.recordCount(), records.remaining() / MIN_RECORD_BYTES)));
        walk(batch, records, BatchContext.of(batch), result);
        return Collections.unmodifiableList(result);
    }

    /**
     * Checks the framing of every record exactly as {@link #readAll} does, without creating
     * anything: for the produce path, where most batches are stored as they came and only need
     * to be known readable by consumers.
     */
    static void checkAll(DefaultRecordBatch batch, ByteBuffer records) {
        walk(batch, records, null, null);
    }

    /**
     * Goes through the declared records, checking every count and length; with {@code out}
     * non-null, parses each into a {@link Record} (resolved against {@code context}) and adds it.
     */
    private static void walk(DefaultRecordBatch batch, ByteBuffer records, BatchContext context, List<Record> out) {
        int recordCount = batch.recordCount();
        if (recordCount < 0 || recordCount > records.remaining() / MIN_RECORD_BYTES) {
            throw new CorruptRecordException("record count does not fit the records section: recordCount=" + recordCount
                + ", recordsBytes=" + records.remaining() + ", baseOffset=" + batch.baseOffset());
        }
        ByteBuffer cursor = records.duplicate();
        for (int i = 0; i < recordCount; i++) {
            if (!cursor.hasRemaining()) {
                throw new CorruptRecordException("records section ends before the declared records: recordCount=" + recordCount
                    + ", recordsRead=" + i + ", baseOffset=" + batch.baseOffset());
            }
            try {
                Record record = readRecord(cursor, context, out != null);
                if (out != null) {
                    out.add(record);
                }
            } catch (ProtocolException e) {
                // Truncated varints surface as plain ProtocolException; give every record error the same type and
                // context, naming the record and batch so operators can find the bytes.
                throw new CorruptRecordException("malformed record " + i + " of " + recordCount + " in batch at baseOffset="
                    + batch.baseOffset() + ": " + e.getMessage(), e);
            }
        }
        if (cursor.hasRemaining()) {
            throw new CorruptRecordException("records section continues after the declared records: recordCount=" + recordCount
                + ", unreadBytes=" + cursor.remaining() + ", baseOffset=" + batch.baseOffset());
        }
    }

    /**
     * Reads one record at the position of {@code cursor} and moves the cursor past it; with
     * {@code keep} false only checks it and returns null.
     */
    private static Record readRecord(ByteBuffer cursor, BatchContext context, boolean keep) {
        int bodyBytes = ByteUtils.readVarint(cursor);
        if (bodyBytes < MIN_RECORD_BODY_BYTES || bodyBytes > cursor.remaining()) {
            throw new CorruptRecordException("record length does not fit the records section: recordBodyBytes=" + bodyBytes
                + ", remainingBytes=" + cursor.remaining());
        }
        int end = cursor.position() + bodyBytes;
        ByteBuffer body = keep ? cursor.slice(cursor.position(), bodyBytes) : cursor.duplicate().limit(end);
        cursor.position(end);

        byte attributes = body.get();
        long timestampDelta = ByteUtils.readVarlong(body);
        int offsetDelta = ByteUtils.readVarint(body);
        ByteBuffer key = readNullableBytes(body, "key", keep);
        ByteBuffer value = readNullableBytes(body, "value", keep);
        List<Header> headers = readHeaders(body, keep);
        if (body.hasRemaining()) {
            throw new CorruptRecordException("record continues after its last header: recordBodyBytes=" + bodyBytes
                + ", unreadBytes=" + body.remaining());
        }
        if (!keep) {
            return null;
        }
        long timestampMs = context.logAppendTime ? context.maxTimestamp : context.baseTimestamp + timestampDelta;
        return new Record(context.baseOffset + offsetDelta,
            DefaultRecordBatch.incrementSequence(context.baseSequence, offsetDelta),
            timestampMs, attributes, key, value, headers, Sizes.varintSize(bodyBytes) + bodyBytes);
    }

    /** A varint length (-1 for null) and that many bytes: a slice of {@code body} if {@code keep}, else skipped (null). */
    private static ByteBuffer readNullableBytes(ByteBuffer body, String field, boolean keep) {
        int length = ByteUtils.readVarint(body);
        if (length == -1) {
            return null;
        }
        if (length < -1 || length > body.remaining()) {
            throw new CorruptRecordException("record " + field + " length does not fit the record: " + field + "Length=" + length
                + ", remainingBytes=" + body.remaining());
        }
        ByteBuffer bytes = keep ? body.slice(body.position(), length) : null;
        body.position(body.position() + length);
        return bytes;
    }

    private static List<Header> readHeaders(ByteBuffer body, boolean keep) {
        int headerCount = ByteUtils.readVarint(body);
        if (headerCount < 0 || headerCount > body.remaining() / MIN_HEADER_BYTES) {
            throw new CorruptRecordException("header count does not fit the record: headerCount=" + headerCount
                + ", remainingBytes=" + body.remaining());
        }
        if (headerCount == 0) {
            return List.of();
        }
        List<Header> headers = keep ? new ArrayList<>(headerCount) : null;
        for (int i = 0; i < headerCount; i++) {
            int keyLength = ByteUtils.readVarint(body);
            if (keyLength < 0 || keyLength > body.remaining()) {
                throw new CorruptRecordException("header key length does not fit the record (null keys are not allowed): keyLength="
                    + keyLength + ", remainingBytes=" + body.remaining());
            }
            String key = keep ? StandardCharsets.UTF_8.decode(body.slice(body.position(), keyLength)).toString() : null;
            body.position(body.position() + keyLength);
            ByteBuffer headerValue = readNullableBytes(body, "headerValue", keep);
            if (keep) {
                headers.add(new Header(key, headerValue));
            }
        }
        return keep ? Collections.unmodifiableList(headers) : null;
    }

    /** The header fields every record is resolved against, read once per batch. */
    private record BatchContext(long baseOffset, long baseTimestamp, long maxTimestamp, int baseSequence, boolean logAppendTime) {
        static BatchContext of(DefaultRecordBatch batch) {
            return new BatchContext(batch.baseOffset(), batch.baseTimestamp(), batch.maxTimestamp(), batch.baseSequence(),
                batch.timestampType() == TimestampType.LOG_APPEND_TIME);
        }
    }
}
