package io.strata.protocol.records;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RecordReader#checkAll} refuses exactly what {@link RecordReader#readAll} refuses. */
class RecordReaderCheckTest {
    private static boolean reads(DefaultRecordBatch batch, ByteBuffer records) {
        try {
            RecordReader.readAll(batch, records);
            return true;
        } catch (CorruptRecordException e) {
            return false;
        }
    }

    private static boolean checks(DefaultRecordBatch batch, ByteBuffer records) {
        try {
            RecordReader.checkAll(batch, records);
            return true;
        } catch (CorruptRecordException e) {
            return false;
        }
    }

    @Test
    void everySingleByteChangeAndEveryCutIsJudgedAlike() {
        ByteBuffer built = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
            .append(1L, "k".getBytes(StandardCharsets.UTF_8), "value".getBytes(StandardCharsets.UTF_8),
                List.of(new Header("h", ByteBuffer.wrap(new byte[] {1, 2})), new Header("n", null)))
            .append(2L, null, null)
            .append(3L, new byte[0], "x".repeat(200).getBytes(StandardCharsets.UTF_8))
            .build().buffer();
        DefaultRecordBatch batch = DefaultRecordBatch.wrap(built);
        ByteBuffer section = built.slice(RecordBatchDescriptor.RECORDS_OFFSET, built.limit() - RecordBatchDescriptor.RECORDS_OFFSET);
        assertThat(checks(batch, section)).isTrue();
        assertThat(reads(batch, section)).isTrue();
        int refused = 0;
        for (int position = 0; position < section.limit(); position++) {
            for (int delta : new int[] {1, -1, 0x40, 0x80}) {
                ByteBuffer changed = ByteBuffer.allocate(section.limit()).put(section.duplicate()).flip();
                changed.put(position, (byte) (changed.get(position) + delta));
                boolean read = reads(batch, changed);
                assertThat(checks(batch, changed)).as("byte %d changed by %d", position, delta).isEqualTo(read);
                refused += read ? 0 : 1;
            }
        }
        for (int cut = 0; cut < section.limit(); cut++) {
            ByteBuffer truncated = section.slice(0, cut);
            assertThat(checks(batch, truncated)).as("cut at %d", cut).isEqualTo(reads(batch, truncated)).isFalse();
        }
        assertThat(refused).as("the mutations hit the framing").isGreaterThan(20);
    }
}
