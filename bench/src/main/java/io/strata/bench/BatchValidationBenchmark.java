package io.strata.bench;

import io.strata.protocol.records.DefaultRecordBatch;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Validating a RecordBatch v2 the way a broker does on produce: header checks and the CRC32C
 * over attributes..end. Strata's DefaultRecordBatch vs kafka-clients' DefaultRecordBatch over
 * the same bytes, in the same run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class BatchValidationBenchmark {
    @Param({"1024", "65536", "1048576"})
    public int batchBytes;

    private ByteBuffer batch;

    @Setup
    public void setUp() {
        Random random = new Random(7);
        int recordBytes = Math.min(1024, batchBytes / 4);
        int records = Math.max(1, batchBytes / (recordBytes + 16));
        ByteBuffer buffer = ByteBuffer.allocate(batchBytes + 4096);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.CURRENT_MAGIC_VALUE, Compression.NONE,
            TimestampType.CREATE_TIME, 0L);
        byte[] value = new byte[recordBytes];
        for (int i = 0; i < records; i++) {
            random.nextBytes(value);
            builder.append(1_700_000_000_000L + i, null, value);
        }
        batch = builder.build().buffer();
    }

    @Benchmark
    public long strata() {
        DefaultRecordBatch view = DefaultRecordBatch.wrap(batch.duplicate());
        view.ensureValid();
        return view.lastOffset();
    }

    @Benchmark
    public long kafkaClients() {
        org.apache.kafka.common.record.internal.MutableRecordBatch view =
            MemoryRecords.readableRecords(batch.duplicate()).batches().iterator().next();
        view.ensureValid();
        return view.lastOffset();
    }
}
