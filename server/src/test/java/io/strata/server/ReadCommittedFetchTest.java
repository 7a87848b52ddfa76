package io.strata.server;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A read_committed Fetch returns the aborted transactions that overlap the records it returns,
 * as Kafka does, not every aborted transaction up to the last stable offset.
 */
class ReadCommittedFetchTest {
    private static final int FETCH_VERSION = 12;
    private static final int ABORTED_TRANSACTIONS = 100;

    @TempDir
    Path dataDir;

    private TestBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        broker.createTopic("aborts", 1, Map.of());
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "aborter");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            producer.initTransactions();
            for (int i = 0; i < ABORTED_TRANSACTIONS; i++) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("aborts", 0, null, ("aborted-" + i).getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
                producer.abortTransaction();
            }
        }
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private static FetchResponseData.PartitionData fetch(RawClient client, long offset, int partitionMaxBytes) throws Exception {
        FetchRequestData request = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
            .setIsolationLevel((byte) 1).setSessionId(0).setSessionEpoch(-1)
            .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("aborts").setPartitions(List.of(new FetchRequestData.FetchPartition()
                .setPartition(0).setFetchOffset(offset).setPartitionMaxBytes(partitionMaxBytes).setCurrentLeaderEpoch(-1).setLogStartOffset(-1)))));
        FetchResponseData response = client.send(ApiMessageType.FETCH, FETCH_VERSION, request);
        FetchResponseData.PartitionData partition = response.responses().get(0).partitions().get(0);
        assertThat(partition.errorCode()).isEqualTo(ErrorCode.NONE.code());
        return partition;
    }

    @Test
    void aFetchOfOneBatchReturnsOnlyTheAbortedTransactionItOverlaps() throws Exception {
        // abortTransaction returns once the coordinator wrote PrepareAbort; the last marker follows asynchronously (as in Kafka).
        InProcessCluster.awaitCondition(() -> broker.log("aborts", 0).lastStableOffset() == 2L * ABORTED_TRANSACTIONS, 30_000,
            "the last abort marker");
        assertThat(broker.log("aborts", 0).lastStableOffset()).isEqualTo(2L * ABORTED_TRANSACTIONS);
        try (RawClient client = new RawClient(broker.port())) {
            // One byte: the first batch only (offset 0), which only the first transaction overlaps.
            FetchResponseData.PartitionData first = fetch(client, 0, 1);
            assertThat(first.abortedTransactions()).extracting(FetchResponseData.AbortedTransaction::firstOffset).containsExactly(0L);
            // From the 51st transaction's batch (offset 100): that transaction only.
            FetchResponseData.PartitionData middle = fetch(client, 100, 1);
            assertThat(middle.abortedTransactions()).extracting(FetchResponseData.AbortedTransaction::firstOffset).containsExactly(100L);
            // Everything: every aborted transaction.
            assertThat(fetch(client, 0, 1 << 20).abortedTransactions()).hasSize(ABORTED_TRANSACTIONS);
        }
    }
}
