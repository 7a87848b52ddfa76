package io.strata.tools.client;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.InitProducerIdRequestData;
import io.strata.protocol.message.InitProducerIdResponseData;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.Header;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Writes records to one topic the way Kafka's producer does, minus the background thread.
 *
 * <p>Batching: each partition has one open {@link RecordBatchBuilder}; a record that would grow
 * it past {@code batchSizeBytes} (estimated before compression) closes it into the partition's
 * queue of ready batches. {@link #sendReadyBatches()} sends the closed batches,
 * {@link #flush()} closes the open ones first. Sending is blocking: one Produce request per
 * leader at a time, each carrying at most one batch per partition (the broker's rule for
 * record batches v2) and up to {@link ClientLimits#MAX_REQUEST_BYTES}.
 *
 * <p>Idempotence: with {@code idempotent}, InitProducerId gives a producer id and epoch, and
 * every batch carries the partition's next sequence number, fixed when the batch is opened. A
 * batch that failed with a retriable error stays at the head of its partition's queue and is
 * sent again, unchanged, before any later batch of that partition, so sequences reach the
 * broker in order and a resend the broker already has is answered with
 * DUPLICATE_SEQUENCE_NUMBER, which counts as success.
 *
 * <p>Retries: retriable errors (NOT_LEADER_OR_FOLLOWER, a lost connection, ...) refresh the
 * topic's metadata and retry after {@link ClientLimits#RETRY_BACKOFF_MS} until
 * {@code deliveryTimeoutMs} has passed since sending began; other errors fail at once.
 *
 * <p>Not thread-safe.
 */
public final class RecordProducer {
    /** The estimated size of a record beyond its key, value and header bytes: every varint at its widest. */
    static final int RECORD_OVERHEAD_BYTES_MAX = 1 + 10 + 5 + 5 + 5 + 5 + 5;
    /** The estimated size of a header beyond its key and value bytes. */
    static final int HEADER_OVERHEAD_BYTES_MAX = 5 + 5;
    /** The size of a record batch v2 header. */
    static final int BATCH_OVERHEAD_BYTES = 61;

    /**
     * @param acks              -1 (all in-sync replicas), 1 (the leader) or 0 (no answer)
     * @param batchSizeBytes    when to close a partition's batch
     * @param deliveryTimeoutMs how long retriable failures are retried
     */
    public record Settings(short acks, CompressionType compression, boolean idempotent, int batchSizeBytes, int deliveryTimeoutMs) {
        public Settings {
            if (acks != -1 && acks != 0 && acks != 1) {
                throw new IllegalArgumentException("acks must be -1, 0 or 1: acks=" + acks);
            }
            if (idempotent && acks != -1) {
                throw new IllegalArgumentException("idempotence needs acks=-1: acks=" + acks);
            }
            if (batchSizeBytes <= 0 || batchSizeBytes > ClientLimits.MAX_REQUEST_BYTES) {
                throw new IllegalArgumentException("batch size must be 1.." + ClientLimits.MAX_REQUEST_BYTES + ": batchSizeBytes=" + batchSizeBytes);
            }
        }
    }

    /** Told of every batch the broker acknowledged (with acks=0: every batch sent), in each partition's append order. */
    @FunctionalInterface
    public interface AcknowledgementListener {
        void acknowledged(int partition, int recordCount);
    }

    /** What was sent so far: acknowledged records (all sent records with acks=0), partitions, batches and requests. */
    public record Summary(long records, Set<Integer> partitions, long batches, long requests) {
    }

    private final ClusterClient cluster;
    private final Settings settings;
    private final Partitioner partitioner;
    private TopicInfo topic;
    private long producerId = -1;
    private short producerEpoch = -1;
    private final Map<Integer, OpenBatch> openBatches = new HashMap<>();
    private final Map<Integer, ArrayDeque<ReadyBatch>> readyBatches = new TreeMap<>();
    private final Map<Integer, Integer> nextSequences = new HashMap<>();
    private final Set<Integer> partitionsWritten = new TreeSet<>();
    private long recordsAcknowledged;
    private long batchesAcknowledged;
    private long requestsSent;
    private AcknowledgementListener acknowledgementListener = (partition, recordCount) -> { };

    /** An open batch of one partition. */
    private static final class OpenBatch {
        final RecordBatchBuilder builder;
        final int baseSequence;
        int estimatedBytes = BATCH_OVERHEAD_BYTES;

        OpenBatch(RecordBatchBuilder builder, int baseSequence) {
            this.builder = builder;
            this.baseSequence = baseSequence;
        }
    }

    /** A closed batch waiting to be acknowledged. */
    private record ReadyBatch(int partition, MemoryRecords records, int recordCount) {
    }

    /**
     * Looks the topic up (a producer may have the broker create it, as Kafka's may) and, if
     * idempotent, obtains a producer id.
     */
    public RecordProducer(ClusterClient cluster, String topicName, Settings settings, Partitioner partitioner) {
        this.cluster = cluster;
        this.settings = settings;
        this.partitioner = partitioner;
        this.topic = cluster.topic(topicName, true);
        if (settings.idempotent()) {
            initProducerId();
        }
    }

    public TopicInfo topic() {
        return topic;
    }

    /** Replaces the listener told of acknowledged batches (by default nobody is told). */
    public void onAcknowledged(AcknowledgementListener listener) {
        this.acknowledgementListener = listener;
    }

    /** The producer id, or -1 without idempotence. */
    public long producerId() {
        return producerId;
    }

    private void initProducerId() {
        long deadlineMs = cluster.time().hiResClockMs() + settings.deliveryTimeoutMs();
        InitProducerIdRequestData request = new InitProducerIdRequestData()
            .setTransactionalId(null)
            .setTransactionTimeoutMs(Integer.MAX_VALUE);
        while (true) {
            InitProducerIdResponseData response = cluster.anyConnection().send(request, InitProducerIdResponseData.class);
            ErrorCode error = ErrorCode.forCode(response.errorCode());
            if (error == ErrorCode.NONE) {
                producerId = response.producerId();
                producerEpoch = response.producerEpoch();
                return;
            }
            if (!error.isRetriable() || cluster.time().hiResClockMs() >= deadlineMs) {
                throw new BrokerErrorException("cannot get a producer id (InitProducerId)", error, null);
            }
            cluster.backoff();
        }
    }

    /**
     * Adds a record to its partition's batch.
     *
     * @param partition the partition, or null to let the {@link Partitioner} choose
     * @return the partition the record went to
     * @throws ClientException if {@code partition} does not exist
     */
    public int append(Integer partition, long timestampMs, byte[] key, byte[] value, List<Header> headers) {
        int recordBytes = estimateRecordBytes(key, value, headers);
        int target = partition != null ? topic.partition(partition).partition()
            : partitioner.partition(key, topic.partitionCount(), recordBytes);
        OpenBatch batch = openBatches.get(target);
        if (batch != null && batch.builder.recordCount() > 0 && batch.estimatedBytes + recordBytes > settings.batchSizeBytes()) {
            closeBatch(target);
            batch = null;
        }
        if (batch == null) {
            batch = openBatch(target);
        }
        batch.builder.append(timestampMs, key, value, headers);
        batch.estimatedBytes += recordBytes;
        return target;
    }

    static int estimateRecordBytes(byte[] key, byte[] value, List<Header> headers) {
        long bytes = RECORD_OVERHEAD_BYTES_MAX + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        for (Header header : headers) {
            bytes += HEADER_OVERHEAD_BYTES_MAX + header.key().getBytes(StandardCharsets.UTF_8).length
                + (header.value() == null ? 0 : header.value().remaining());
        }
        return (int) Math.min(Integer.MAX_VALUE, bytes);
    }

    private OpenBatch openBatch(int partition) {
        RecordBatchBuilder builder = new RecordBatchBuilder(settings.compression(), TimestampType.CREATE_TIME, 0L);
        int baseSequence = -1;
        if (settings.idempotent()) {
            baseSequence = nextSequences.getOrDefault(partition, 0);
            builder.producerState(producerId, producerEpoch, baseSequence, false);
        }
        OpenBatch batch = new OpenBatch(builder, baseSequence);
        openBatches.put(partition, batch);
        return batch;
    }

    private void closeBatch(int partition) {
        OpenBatch batch = openBatches.remove(partition);
        int recordCount = batch.builder.recordCount();
        if (recordCount == 0) {
            return;
        }
        if (settings.idempotent()) {
            // Sequences wrap to 0 after Integer.MAX_VALUE, as Kafka's do.
            long next = (long) batch.baseSequence + recordCount;
            nextSequences.put(partition, (int) (next > Integer.MAX_VALUE ? next - Integer.MAX_VALUE - 1 : next));
        }
        readyBatches.computeIfAbsent(partition, p -> new ArrayDeque<>()).add(new ReadyBatch(partition, batch.builder.build(), recordCount));
    }

    /** Whether closed batches are waiting to be sent. */
    public boolean hasReadyBatches() {
        return !readyBatches.isEmpty();
    }

    /** Closes every open batch and sends everything. */
    public void flush() {
        for (Integer partition : new ArrayList<>(openBatches.keySet())) {
            closeBatch(partition);
        }
        sendReadyBatches();
    }

    /**
     * Sends the closed batches and waits for them to be acknowledged.
     *
     * @throws ClientException for a non-retriable error, or a retriable one past the delivery timeout
     */
    public void sendReadyBatches() {
        long deadlineMs = cluster.time().hiResClockMs() + settings.deliveryTimeoutMs();
        while (!readyBatches.isEmpty()) {
            ClientException retriable = sendRound();
            if (retriable == null) {
                continue;
            }
            if (cluster.time().hiResClockMs() >= deadlineMs) {
                throw new ClientException(retriable.getMessage() + " (gave up after " + settings.deliveryTimeoutMs() + " ms)", retriable);
            }
            cluster.backoff();
            try {
                topic = cluster.topic(topic.name(), true);
            } catch (ClientException e) {
                // The next round fails again and is retried, or gives up at the deadline.
            }
        }
    }

    /** Sends the head batch of every partition, grouped by leader; returns the last retriable failure, or null. */
    private ClientException sendRound() {
        Map<Integer, List<ReadyBatch>> byLeader = new LinkedHashMap<>();
        ClientException retriable = null;
        for (ArrayDeque<ReadyBatch> queue : readyBatches.values()) {
            ReadyBatch head = queue.peekFirst();
            PartitionInfo partition = topic.partition(head.partition());
            if (!partition.hasLeader()) {
                retriable = new BrokerErrorException("cannot produce to " + topic.name() + "-" + head.partition(), ErrorCode.LEADER_NOT_AVAILABLE, null);
                continue;
            }
            byLeader.computeIfAbsent(partition.leaderId(), id -> new ArrayList<>()).add(head);
        }
        for (Map.Entry<Integer, List<ReadyBatch>> entry : byLeader.entrySet()) {
            for (List<ReadyBatch> request : splitByRequestSize(entry.getValue())) {
                ClientException failure = sendToLeader(entry.getKey(), request);
                if (failure != null) {
                    retriable = failure;
                }
            }
        }
        return retriable;
    }

    private static List<List<ReadyBatch>> splitByRequestSize(List<ReadyBatch> batches) {
        List<List<ReadyBatch>> requests = new ArrayList<>();
        List<ReadyBatch> current = new ArrayList<>();
        long currentBytes = 0;
        for (ReadyBatch batch : batches) {
            int bytes = batch.records().sizeInBytes();
            if (!current.isEmpty() && currentBytes + bytes > ClientLimits.MAX_REQUEST_BYTES) {
                requests.add(current);
                current = new ArrayList<>();
                currentBytes = 0;
            }
            current.add(batch);
            currentBytes += bytes;
        }
        if (!current.isEmpty()) {
            requests.add(current);
        }
        return requests;
    }

    /** One Produce request to one leader; returns a retriable failure, or null if every batch is settled. */
    private ClientException sendToLeader(int leaderId, List<ReadyBatch> batches) {
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic.name());
        for (ReadyBatch batch : batches) {
            topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(batch.partition()).setRecords(batch.records()));
        }
        ProduceRequestData request = new ProduceRequestData()
            .setTransactionalId(null)
            .setAcks(settings.acks())
            .setTimeoutMs(cluster.settings().requestTimeoutMs())
            .setTopicData(new ArrayList<>(List.of(topicData)));
        ProduceResponseData response;
        try {
            KafkaConnection connection = cluster.connection(leaderId);
            requestsSent++;
            if (settings.acks() == 0) {
                connection.sendWithoutResponse(request);
                batches.forEach(this::acknowledged);
                return null;
            }
            response = connection.send(request, ProduceResponseData.class);
        } catch (UnsupportedApiException e) {
            throw e;
        } catch (ClientException e) {
            return e;
        }
        return handleResponse(batches, response);
    }

    private ClientException handleResponse(List<ReadyBatch> batches, ProduceResponseData response) {
        Map<Integer, ProduceResponseData.PartitionProduceResponse> results = new HashMap<>();
        for (ProduceResponseData.TopicProduceResponse topicResponse : response.responses()) {
            if (topic.name().equals(topicResponse.name())) {
                for (ProduceResponseData.PartitionProduceResponse partition : topicResponse.partitionResponses()) {
                    results.put(partition.index(), partition);
                }
            }
        }
        ClientException retriable = null;
        for (ReadyBatch batch : batches) {
            ProduceResponseData.PartitionProduceResponse result = results.get(batch.partition());
            String attempted = "cannot produce to " + topic.name() + "-" + batch.partition();
            if (result == null) {
                throw new ClientException(attempted + ": the Produce response does not mention the partition");
            }
            ErrorCode error = ErrorCode.forCode(result.errorCode());
            if (error == ErrorCode.NONE || error == ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
                acknowledged(batch);
            } else if (error.isRetriable()) {
                retriable = new BrokerErrorException(attempted, error, result.errorMessage());
            } else {
                throw new BrokerErrorException(attempted, error, result.errorMessage());
            }
        }
        return retriable;
    }

    private void acknowledged(ReadyBatch batch) {
        ArrayDeque<ReadyBatch> queue = readyBatches.get(batch.partition());
        ReadyBatch head = queue.pollFirst();
        if (head != batch) {
            throw new IllegalStateException("acknowledged a batch that is not the head of partition " + batch.partition()
                + ": head=" + head + ", batch=" + batch);
        }
        if (queue.isEmpty()) {
            readyBatches.remove(batch.partition());
        }
        recordsAcknowledged += batch.recordCount();
        batchesAcknowledged++;
        partitionsWritten.add(batch.partition());
        acknowledgementListener.acknowledged(batch.partition(), batch.recordCount());
    }

    public Summary summary() {
        return new Summary(recordsAcknowledged, Collections.unmodifiableSet(new TreeSet<>(partitionsWritten)), batchesAcknowledged, requestsSent);
    }
}
