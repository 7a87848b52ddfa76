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
        int recordCount = batch.recordCount();
        if (recordCount < 0 || recordCount > records.remaining() / MIN_RECORD_BYTES) {
            throw new CorruptRecordException("record count does not fit the records section: recordCount=" + recordCount
                + ", recordsBytes=" + records.remaining() + ", baseOffset=" + batch.baseOffset());
        }
        BatchContext context = BatchContext.of(batch);
        ByteBuffer cursor = records.duplicate();
        List<Record> result = new ArrayList<>(recordCount);
        for (int i = 0; i < recordCount; i++) {
            if (!cursor.hasRemaining()) {
                throw new CorruptRecordException("records section ends before the declared records: recordCount=" + recordCount
                    + ", recordsRead=" + i + ", baseOffset=" + batch.baseOffset());
            }
            result.add(readRecordWithContext(cursor, context, i, recordCount));
        }
        if (cursor.hasRemaining()) {
            throw new CorruptRecordException("records section continues after the declared records: recordCount=" + recordCount
                + ", unreadBytes=" + cursor.remaining() + ", baseOffset=" + batch.baseOffset());
        }
        return Collections.unmodifiableList(result);
    }

    /**
     * Checks the framing of every record as {@link #readAll} would, without creating anything:
     * the declared count, each record's length, key, value and headers fitting inside it, each
     * record consumed exactly, nothing left over. For the produce path, where most batches are
     * stored as they came and only need to be known readable by consumers.
     */
    static void checkAll(DefaultRecordBatch batch, ByteBuffer records) {
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
                skipRecord(cursor);
            } catch (ProtocolException e) {
                throw new CorruptRecordException("malformed record " + i + " of " + recordCount + " in batch at baseOffset="
                    + batch.baseOffset() + ": " + e.getMessage(), e);
            }
        }
        if (cursor.hasRemaining()) {
            throw new CorruptRecordException("records section continues after the declared records: recordCount=" + recordCount
                + ", unreadBytes=" + cursor.remaining() + ", baseOffset=" + batch.baseOffset());
        }
    }

    /** Moves {@code cursor} past one record, checking what {@link #readRecord} checks. */
    private static void skipRecord(ByteBuffer cursor) {
        int bodyBytes = ByteUtils.readVarint(cursor);
        if (bodyBytes < MIN_RECORD_BODY_BYTES || bodyBytes > cursor.remaining()) {
            throw new CorruptRecordException("record length does not fit the records section: recordBodyBytes=" + bodyBytes
                + ", remainingBytes=" + cursor.remaining());
        }
        int end = cursor.position() + bodyBytes;
        ByteBuffer body = cursor.duplicate().limit(end);
        cursor.position(end);
        body.get(); // attributes
        ByteUtils.readVarlong(body); // timestamp delta
        ByteUtils.readVarint(body); // offset delta
        skipNullableBytes(body, "key");
        skipNullableBytes(body, "value");
        int headerCount = ByteUtils.readVarint(body);
        if (headerCount < 0 || headerCount > body.remaining() / MIN_HEADER_BYTES) {
            throw new CorruptRecordException("header count does not fit the record: headerCount=" + headerCount
                + ", remainingBytes=" + body.remaining());
        }
        for (int i = 0; i < headerCount; i++) {
            int keyLength = ByteUtils.readVarint(body);
            if (keyLength < 0 || keyLength > body.remaining()) {
                throw new CorruptRecordException("header key length does not fit the record (null keys are not allowed): keyLength="
                    + keyLength + ", remainingBytes=" + body.remaining());
            }
            body.position(body.position() + keyLength);
            skipNullableBytes(body, "headerValue");
        }
        if (body.hasRemaining()) {
            throw new CorruptRecordException("record continues after its last header: recordBodyBytes=" + bodyBytes
                + ", unreadBytes=" + body.remaining());
        }
    }

    private static void skipNullableBytes(ByteBuffer body, String field) {
        int length = ByteUtils.readVarint(body);
        if (length == -1) {
            return;
        }
        if (length < -1 || length > body.remaining()) {
            throw new CorruptRecordException("record " + field + " length does not fit the record: " + field + "Length=" + length
                + ", remainingBytes=" + body.remaining());
        }
        body.position(body.position() + length);
    }

    /** As {@link #readRecord}, naming the record and batch in the error so operators can find the bytes. */
    private static Record readRecordWithContext(ByteBuffer cursor, BatchContext context, int index, int recordCount) {
        try {
            return readRecord(cursor, context);
        } catch (ProtocolException e) {
            // Truncated varints surface as plain ProtocolException; give every record error the same type and context.
            throw new CorruptRecordException("malformed record " + index + " of " + recordCount + " in batch at baseOffset="
                + context.baseOffset + ": " + e.getMessage(), e);
        }
    }

    /** Reads one record at the position of {@code cursor} and moves the cursor past it. */
    private static Record readRecord(ByteBuffer cursor, BatchContext context) {
        int bodyBytes = ByteUtils.readVarint(cursor);
        if (bodyBytes < MIN_RECORD_BODY_BYTES || bodyBytes > cursor.remaining()) {
            throw new CorruptRecordException("record length does not fit the records section: recordBodyBytes=" + bodyBytes
                + ", remainingBytes=" + cursor.remaining());
        }
        ByteBuffer body = cursor.slice(cursor.position(), bodyBytes);
        cursor.position(cursor.position() + bodyBytes);

        byte attributes = body.get();
        long timestampDelta = ByteUtils.readVarlong(body);
        int offsetDelta = ByteUtils.readVarint(body);
        ByteBuffer key = readNullableBytes(body, "key");
        ByteBuffer value = readNullableBytes(body, "value");
        List<Header> headers = readHeaders(body);
        if (body.hasRemaining()) {
            throw new CorruptRecordException("record continues after its last header: recordBodyBytes=" + bodyBytes
                + ", unreadBytes=" + body.remaining());
        }
        long timestampMs = context.logAppendTime ? context.maxTimestamp : context.baseTimestamp + timestampDelta;
        return new Record(context.baseOffset + offsetDelta,
            DefaultRecordBatch.incrementSequence(context.baseSequence, offsetDelta),
            timestampMs, attributes, key, value, headers, Sizes.varintSize(bodyBytes) + bodyBytes);
    }

    /** A varint length (-1 for null) and that many bytes, as a slice of {@code body}. */
    private static ByteBuffer readNullableBytes(ByteBuffer body, String field) {
        int length = ByteUtils.readVarint(body);
        if (length == -1) {
            return null;
        }
        if (length < -1 || length > body.remaining()) {
            throw new CorruptRecordException("record " + field + " length does not fit the record: " + field + "Length=" + length
                + ", remainingBytes=" + body.remaining());
        }
        ByteBuffer bytes = body.slice(body.position(), length);
        body.position(body.position() + length);
        return bytes;
    }

    private static List<Header> readHeaders(ByteBuffer body) {
        int headerCount = ByteUtils.readVarint(body);
        if (headerCount < 0 || headerCount > body.remaining() / MIN_HEADER_BYTES) {
            throw new CorruptRecordException("header count does not fit the record: headerCount=" + headerCount
                + ", remainingBytes=" + body.remaining());
        }
        if (headerCount == 0) {
            return List.of();
        }
        List<Header> headers = new ArrayList<>(headerCount);
        for (int i = 0; i < headerCount; i++) {
            int keyLength = ByteUtils.readVarint(body);
            if (keyLength < 0 || keyLength > body.remaining()) {
                throw new CorruptRecordException("header key length does not fit the record (null keys are not allowed): keyLength="
                    + keyLength + ", remainingBytes=" + body.remaining());
            }
            String key = StandardCharsets.UTF_8.decode(body.slice(body.position(), keyLength)).toString();
            body.position(body.position() + keyLength);
            headers.add(new Header(key, readNullableBytes(body, "headerValue")));
        }
        return Collections.unmodifiableList(headers);
    }

    /** The header fields every record is resolved against, read once per batch. */
    private record BatchContext(long baseOffset, long baseTimestamp, long maxTimestamp, int baseSequence, boolean logAppendTime) {
        static BatchContext of(DefaultRecordBatch batch) {
            return new BatchContext(batch.baseOffset(), batch.baseTimestamp(), batch.maxTimestamp(), batch.baseSequence(),
                batch.timestampType() == TimestampType.LOG_APPEND_TIME);
        }
    }
}
