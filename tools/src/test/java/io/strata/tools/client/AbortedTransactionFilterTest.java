package io.strata.tools.client;

import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class AbortedTransactionFilterTest {
    private static DefaultRecordBatch data(long baseOffset, long producerId, boolean transactional) {
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, baseOffset);
        if (producerId >= 0) {
            builder.producerState(producerId, (short) 0, (int) baseOffset, transactional);
        }
        MemoryRecords records = builder.append(1L, null, new byte[] {1}).append(2L, null, new byte[] {2}).build();
        return DefaultRecordBatch.wrap(records.buffer());
    }

    private static DefaultRecordBatch marker(long offset, long producerId, ControlRecordType type) {
        MemoryRecords records = RecordBatchBuilder.endTransactionMarker(offset, 3L, 0, producerId, (short) 0,
            new EndTransactionMarker(type, 0));
        return DefaultRecordBatch.wrap(records.buffer());
    }

    private static FetchResponseData.AbortedTransaction aborted(long producerId, long firstOffset) {
        return new FetchResponseData.AbortedTransaction().setProducerId(producerId).setFirstOffset(firstOffset);
    }

    @Test
    void abortedTransactionsAreWithheldUntilTheirMarker() {
        AbortedTransactionFilter filter = new AbortedTransactionFilter(List.of(aborted(7L, 2L)));

        assertThat(filter.skip(data(0, 7L, true))).as("before the aborted transaction began").isFalse();
        assertThat(filter.skip(data(2, 7L, true))).as("inside the aborted transaction").isTrue();
        assertThat(filter.skip(data(4, 8L, true))).as("another producer's transaction").isFalse();
        assertThat(filter.skip(marker(6, 7L, ControlRecordType.ABORT))).as("markers are never handed out").isTrue();
        assertThat(filter.skip(data(7, 7L, true))).as("the producer's next transaction").isFalse();
    }

    @Test
    void committedTransactionsAndPlainBatchesPass() {
        AbortedTransactionFilter filter = new AbortedTransactionFilter(List.of());

        assertThat(filter.skip(data(0, 5L, true))).isFalse();
        assertThat(filter.skip(marker(2, 5L, ControlRecordType.COMMIT))).isTrue();
        assertThat(filter.skip(data(3, -1L, false))).isFalse();
        assertThat(filter.skip(data(5, 9L, false))).isFalse();
    }

    @Test
    void readUncommittedWithholdsOnlyMarkers() {
        AbortedTransactionFilter filter = new AbortedTransactionFilter(null);

        assertThat(filter.skip(data(0, 7L, true))).isFalse();
        assertThat(filter.skip(marker(2, 7L, ControlRecordType.ABORT))).isTrue();
    }
}
