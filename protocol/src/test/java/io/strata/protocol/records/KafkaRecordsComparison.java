package io.strata.protocol.records;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MutableRecordBatch;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Field-by-field comparison of batches as kafka-clients and Strata read the same bytes. */
final class KafkaRecordsComparison {
    private KafkaRecordsComparison() {
    }

    static Compression kafkaCompression(CompressionType type) {
        return switch (type) {
            case NONE -> Compression.NONE;
            case GZIP -> Compression.gzip().build();
            case SNAPPY -> Compression.snappy().build();
            case LZ4 -> Compression.lz4().build();
            case ZSTD -> Compression.zstd().build();
        };
    }

    /** Reads {@code bytes} with both libraries and asserts every header field and record agrees. */
    static void assertSameBatches(ByteBuffer bytes) {
        org.apache.kafka.common.record.internal.MemoryRecords kafka =
            org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(bytes.duplicate());
        MemoryRecords strata = MemoryRecords.readableRecords(bytes.duplicate());
        List<MutableRecordBatch> kafkaBatches = new ArrayList<>();
        kafka.batches().forEach(kafkaBatches::add);
        List<RecordBatch> strataBatches = new ArrayList<>();
        strata.batches().forEach(strataBatches::add);
        assertThat(strataBatches).hasSameSizeAs(kafkaBatches).isNotEmpty();
        assertThat(strata.validBytes()).isEqualTo(kafka.validBytes());
        for (int i = 0; i < kafkaBatches.size(); i++) {
            assertThat(strataBatches.get(i)).isInstanceOf(DefaultRecordBatch.class);
            assertSameBatch(kafkaBatches.get(i), (DefaultRecordBatch) strataBatches.get(i));
        }
    }

    static void assertSameBatch(org.apache.kafka.common.record.internal.RecordBatch kafka, DefaultRecordBatch strata) {
        kafka.ensureValid();
        strata.ensureValid();
        assertThat(strata.magic()).isEqualTo(kafka.magic());
        assertThat(strata.baseOffset()).isEqualTo(kafka.baseOffset());
        assertThat(strata.lastOffset()).isEqualTo(kafka.lastOffset());
        assertThat(strata.nextOffset()).isEqualTo(kafka.nextOffset());
        assertThat(strata.sizeInBytes()).isEqualTo(kafka.sizeInBytes());
        assertThat(strata.checksum()).isEqualTo(kafka.checksum());
        assertThat(strata.partitionLeaderEpoch()).isEqualTo(kafka.partitionLeaderEpoch());
        assertThat(strata.compressionType().id()).isEqualTo(kafka.compressionType().id);
        assertThat(strata.timestampType().id()).isEqualTo(kafka.timestampType().id);
        assertThat(strata.isTransactional()).isEqualTo(kafka.isTransactional());
        assertThat(strata.isControlBatch()).isEqualTo(kafka.isControlBatch());
        assertThat(strata.deleteHorizonMs()).isEqualTo(kafka.deleteHorizonMs());
        assertThat(strata.maxTimestamp()).isEqualTo(kafka.maxTimestamp());
        assertThat(strata.producerId()).isEqualTo(kafka.producerId());
        assertThat(strata.hasProducerId()).isEqualTo(kafka.hasProducerId());
        assertThat(strata.producerEpoch()).isEqualTo(kafka.producerEpoch());
        assertThat(strata.baseSequence()).isEqualTo(kafka.baseSequence());
        assertThat(strata.lastSequence()).isEqualTo(kafka.lastSequence());
        assertThat(strata.recordCount()).isEqualTo(kafka.countOrNull());
        assertSameRecords(kafka, strata.records());
    }

    static void assertSameRecords(org.apache.kafka.common.record.internal.RecordBatch kafka, List<Record> strata) {
        Iterator<org.apache.kafka.common.record.internal.Record> expected = kafka.iterator();
        for (Record actual : strata) {
            assertThat(expected.hasNext()).as("Kafka has fewer records than Strata").isTrue();
            assertSameRecord(expected.next(), actual);
        }
        assertThat(expected.hasNext()).as("Kafka has more records than Strata").isFalse();
    }

    static void assertSameRecord(org.apache.kafka.common.record.internal.Record kafka, Record strata) {
        assertThat(strata.offset()).isEqualTo(kafka.offset());
        assertThat(strata.timestamp()).isEqualTo(kafka.timestamp());
        assertThat(strata.sequence()).isEqualTo(kafka.sequence());
        assertThat(strata.sizeInBytes()).isEqualTo(kafka.sizeInBytes());
        assertThat(strata.keySize()).isEqualTo(kafka.keySize());
        assertThat(strata.valueSize()).isEqualTo(kafka.valueSize());
        assertThat(strata.key()).isEqualTo(kafka.key());
        assertThat(strata.value()).isEqualTo(kafka.value());
        org.apache.kafka.common.header.Header[] kafkaHeaders = kafka.headers();
        assertThat(strata.headers()).hasSize(kafkaHeaders.length);
        for (int i = 0; i < kafkaHeaders.length; i++) {
            Header header = strata.headers().get(i);
            assertThat(header.key()).isEqualTo(kafkaHeaders[i].key());
            assertThat(bytes(header.value())).isEqualTo(kafkaHeaders[i].value());
        }
    }

    static byte[] bytes(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
