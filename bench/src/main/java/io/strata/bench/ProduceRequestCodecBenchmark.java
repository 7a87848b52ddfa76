package io.strata.bench;

import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.Reader;
import io.strata.protocol.message.ProduceRequestData;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
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
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Decode and re-encode a Produce request that carries 1 MiB of records (16 partitions of
 * 64 KiB batches of 1 KiB records), with Strata's generated codec and with kafka-clients'
 * own, in the same run. The records stay opaque bytes in both (neither decompresses nor
 * copies them through a record-by-record path), so this measures the message codec.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class ProduceRequestCodecBenchmark {
    static final int PARTITIONS = 16;
    static final int RECORD_BYTES = 1024;
    static final int RECORDS_PER_BATCH = 64;

    @Param({"9", "12"})
    public short version;

    private ByteBuffer requestBytes;
    private ByteBuffer output;

    @Setup
    public void setUp() {
        org.apache.kafka.common.message.ProduceRequestData request = new org.apache.kafka.common.message.ProduceRequestData()
            .setAcks((short) -1).setTimeoutMs(30_000);
        org.apache.kafka.common.message.ProduceRequestData.TopicProduceData topic =
            new org.apache.kafka.common.message.ProduceRequestData.TopicProduceData().setName("bench-topic");
        Random random = new Random(42);
        for (int partition = 0; partition < PARTITIONS; partition++) {
            topic.partitionData().add(new org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData()
                .setIndex(partition).setRecords(batch(random)));
        }
        request.topicData().add(topic);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        requestBytes = ByteBuffer.allocate(request.size(cache, version));
        request.write(new ByteBufferAccessor(requestBytes), cache, version);
        requestBytes.flip();
        output = ByteBuffer.allocate(requestBytes.remaining() + 1024);
    }

    static MemoryRecords batch(Random random) {
        ByteBuffer buffer = ByteBuffer.allocate(RECORDS_PER_BATCH * (RECORD_BYTES + 64));
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.CURRENT_MAGIC_VALUE, Compression.NONE,
            TimestampType.CREATE_TIME, 0L);
        byte[] value = new byte[RECORD_BYTES];
        for (int i = 0; i < RECORDS_PER_BATCH; i++) {
            random.nextBytes(value);
            builder.append(1_700_000_000_000L + i, null, value);
        }
        return builder.build();
    }

    @Benchmark
    public int strata() {
        ProduceRequestData request = new ProduceRequestData(new Reader(requestBytes.duplicate()), version);
        output.clear();
        request.write(new ByteBufferWriter(output), version);
        return output.position();
    }

    @Benchmark
    public int kafkaClients() {
        org.apache.kafka.common.message.ProduceRequestData request =
            new org.apache.kafka.common.message.ProduceRequestData(new ByteBufferAccessor(requestBytes.duplicate()), version);
        output.clear();
        ObjectSerializationCache cache = new ObjectSerializationCache();
        request.size(cache, version);
        request.write(new ByteBufferAccessor(output), cache, version);
        return output.position();
    }

    static List<String> names() {
        return List.of("strata", "kafkaClients");
    }
}
