package io.strata.tools.client;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.protocol.records.Records;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Reads a fixed set of partitions of one topic, without a consumer group: positions are set
 * with the {@code seek} methods (ListOffsets for the beginning, the end or a timestamp) and
 * advanced by {@link #poll(int)}, which sends one sessionless Fetch per leader. Fetch v13+
 * names the topic by the id Metadata reported.
 *
 * <p>With read_committed, batches of aborted transactions are dropped using the aborted
 * transaction list the broker sends (Kafka's algorithm: a producer id is aborted from the
 * first offset of its aborted transaction until its ABORT marker); control batches are never
 * returned.
 *
 * <p>Errors: OFFSET_OUT_OF_RANGE moves the position by the reset policy and reports it to the
 * notice sink. Retriable errors and lost connections refresh the topic's metadata and retry;
 * if no Fetch has succeeded for the request timeout, the last failure is thrown. Other errors
 * are thrown at once.
 *
 * <p>Not thread-safe.
 */
public final class TopicConsumer {
    /** ListOffsets timestamp for the earliest offset. */
    public static final long EARLIEST_TIMESTAMP = -2L;
    /** ListOffsets timestamp for the latest offset (high watermark, or last stable offset for read_committed). */
    public static final long LATEST_TIMESTAMP = -1L;

    /** Where to go when the position is out of range. */
    public enum OffsetReset { EARLIEST, LATEST }

    private final ClusterClient cluster;
    private final IsolationLevel isolation;
    private final OffsetReset reset;
    private final Consumer<String> notices;
    private final List<Integer> partitions;
    private final Map<Integer, Long> positions = new TreeMap<>();
    private TopicInfo topic;
    private long lastSuccessMs;
    private ClientException lastFailure;

    public TopicConsumer(ClusterClient cluster, TopicInfo topic, List<Integer> partitions, IsolationLevel isolation, OffsetReset reset,
                         Consumer<String> notices) {
        if (partitions.isEmpty()) {
            throw new IllegalArgumentException("no partitions to consume from topic " + topic.name());
        }
        for (int partition : partitions) {
            topic.partition(partition);
        }
        this.cluster = cluster;
        this.topic = topic;
        this.partitions = List.copyOf(partitions);
        this.isolation = isolation;
        this.reset = reset;
        this.notices = notices;
        this.lastSuccessMs = cluster.time().hiResClockMs();
    }

    /** The next offset to read per partition. */
    public Map<Integer, Long> positions() {
        return Map.copyOf(positions);
    }

    public void seek(int partition, long offset) {
        if (!partitions.contains(partition)) {
            throw new IllegalArgumentException("partition " + partition + " is not assigned: assigned=" + partitions);
        }
        if (offset < 0) {
            throw new IllegalArgumentException("offset must not be negative: offset=" + offset);
        }
        positions.put(partition, offset);
    }

    public void seekToBeginning() {
        positions.putAll(listOffsets(partitions, EARLIEST_TIMESTAMP));
    }

    public void seekToEnd() {
        positions.putAll(listOffsets(partitions, LATEST_TIMESTAMP));
    }

    /** Each partition goes to its first record with a timestamp at or after {@code timestampMs}, or to its end if there is none. */
    public void seekToTimestamp(long timestampMs) {
        if (timestampMs < 0) {
            throw new IllegalArgumentException("timestamp must not be negative: timestampMs=" + timestampMs);
        }
        Map<Integer, Long> offsets = listOffsets(partitions, timestampMs);
        List<Integer> noRecord = new ArrayList<>();
        for (Map.Entry<Integer, Long> entry : offsets.entrySet()) {
            if (entry.getValue() < 0) {
                noRecord.add(entry.getKey());
            } else {
                positions.put(entry.getKey(), entry.getValue());
            }
        }
        if (!noRecord.isEmpty()) {
            positions.putAll(listOffsets(noRecord, LATEST_TIMESTAMP));
        }
    }

    /**
     * The offsets ListOffsets answers for {@code timestamp} (a time, or EARLIEST/LATEST) per
     * partition; -1 where no record has a timestamp at or after the time.
     */
    public Map<Integer, Long> listOffsets(List<Integer> targets, long timestamp) {
        long deadlineMs = cluster.time().hiResClockMs() + cluster.settings().requestTimeoutMs();
        Map<Integer, Long> offsets = new TreeMap<>();
        List<Integer> pending = new ArrayList<>(targets);
        while (true) {
            ClientException retriable = null;
            for (Map.Entry<Integer, List<Integer>> entry : groupByLeader(pending).entrySet()) {
                try {
                    retriable = listOffsetsFromLeader(entry.getKey(), entry.getValue(), timestamp, offsets);
                } catch (UnsupportedApiException | BrokerErrorException e) {
                    throw e;
                } catch (ClientException e) {
                    retriable = e;
                }
            }
            pending.removeAll(offsets.keySet());
            if (pending.isEmpty()) {
                return offsets;
            }
            if (retriable == null) {
                retriable = new BrokerErrorException("cannot list offsets of " + topic.name() + "-" + pending.get(0), ErrorCode.LEADER_NOT_AVAILABLE, null);
            }
            if (cluster.time().hiResClockMs() >= deadlineMs) {
                throw retriable;
            }
            cluster.backoff();
            topic = cluster.topic(topic.name(), false);
        }
    }

    private ClientException listOffsetsFromLeader(int leaderId, List<Integer> leaderPartitions, long timestamp, Map<Integer, Long> offsets) {
        KafkaConnection connection = cluster.connection(leaderId);
        short version = connection.versions().version(ApiMessageType.LIST_OFFSETS);
        ListOffsetsRequestData.ListOffsetsTopic requestTopic = new ListOffsetsRequestData.ListOffsetsTopic().setName(topic.name());
        for (int partition : leaderPartitions) {
            ListOffsetsRequestData.ListOffsetsPartition requestPartition = new ListOffsetsRequestData.ListOffsetsPartition()
                .setPartitionIndex(partition)
                .setTimestamp(timestamp);
            if (version >= 4) {
                requestPartition.setCurrentLeaderEpoch(topic.partition(partition).leaderEpoch());
            }
            requestTopic.partitions().add(requestPartition);
        }
        ListOffsetsRequestData request = new ListOffsetsRequestData()
            .setReplicaId(-1)
            .setIsolationLevel(isolation.id())
            .setTopics(new ArrayList<>(List.of(requestTopic)));
        if (version >= 10) {
            request.setTimeoutMs(cluster.settings().requestTimeoutMs());
        }
        ListOffsetsResponseData response = connection.send(request, ListOffsetsResponseData.class);
        ClientException retriable = null;
        for (ListOffsetsResponseData.ListOffsetsTopicResponse topicResponse : response.topics()) {
            if (!topic.name().equals(topicResponse.name())) {
                continue;
            }
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse partition : topicResponse.partitions()) {
                ErrorCode error = ErrorCode.forCode(partition.errorCode());
                String attempted = "cannot list offsets of " + topic.name() + "-" + partition.partitionIndex();
                if (error == ErrorCode.NONE) {
                    offsets.put(partition.partitionIndex(), partition.offset());
                } else if (error.isRetriable()) {
                    retriable = new BrokerErrorException(attempted, error, null);
                } else {
                    throw new BrokerErrorException(attempted, error, null);
                }
            }
        }
        return retriable;
    }

    /**
     * Fetches once from every leader and returns the records past the positions, advancing
     * them. The first leader may hold the request up to {@code maxWaitMs} for data; once
     * records have arrived, the rest answer at once.
     */
    public List<ConsumedRecord> poll(int maxWaitMs) {
        for (int partition : partitions) {
            if (!positions.containsKey(partition)) {
                throw new IllegalStateException("no position for partition " + partition + " of " + topic.name() + ": seek first");
            }
        }
        List<ConsumedRecord> records = new ArrayList<>();
        boolean refresh = false;
        int waitMs = maxWaitMs;
        Map<Integer, List<Integer>> byLeader = groupByLeader(partitions);
        int partitionsWithLeader = byLeader.values().stream().mapToInt(List::size).sum();
        if (partitionsWithLeader < partitions.size()) {
            refresh = true;
            lastFailure = new BrokerErrorException("cannot fetch from " + topic.name(), ErrorCode.LEADER_NOT_AVAILABLE, null);
        }
        for (Map.Entry<Integer, List<Integer>> entry : byLeader.entrySet()) {
            try {
                refresh |= fetchFromLeader(entry.getKey(), entry.getValue(), waitMs, records);
            } catch (UnsupportedApiException | BrokerErrorException e) {
                throw e;
            } catch (ClientException e) {
                refresh = true;
                lastFailure = e;
            }
            if (!records.isEmpty()) {
                waitMs = 0;
            }
        }
        if (!refresh) {
            lastSuccessMs = cluster.time().hiResClockMs();
            return records;
        }
        if (cluster.time().hiResClockMs() - lastSuccessMs >= cluster.settings().requestTimeoutMs()) {
            throw new ClientException(lastFailure.getMessage() + " (no successful fetch for "
                + cluster.settings().requestTimeoutMs() + " ms)", lastFailure);
        }
        cluster.backoff();
        try {
            topic = cluster.topic(topic.name(), false);
        } catch (BrokerErrorException e) {
            throw e;
        } catch (ClientException e) {
            lastFailure = e; // unreachable for now: retried by the next poll until the request timeout
        }
        return records;
    }

    /** One Fetch; returns whether metadata should be refreshed (a retriable partition error). */
    private boolean fetchFromLeader(int leaderId, List<Integer> leaderPartitions, int maxWaitMs, List<ConsumedRecord> out) {
        KafkaConnection connection = cluster.connection(leaderId);
        short version = connection.versions().version(ApiMessageType.FETCH);
        boolean byId = version >= 13;
        if (byId && !topic.hasTopicId()) {
            throw new ClientException("the broker speaks Fetch v" + version + ", which needs topic ids, but Metadata gave none for " + topic.name());
        }
        FetchResponseData response = connection.send(fetchRequest(leaderPartitions, maxWaitMs, version), FetchResponseData.class);
        ErrorCode topLevel = ErrorCode.forCode(response.errorCode());
        if (topLevel != ErrorCode.NONE) {
            if (topLevel.isRetriable()) {
                lastFailure = new BrokerErrorException("cannot fetch from " + topic.name(), topLevel, null);
                return true;
            }
            throw new BrokerErrorException("cannot fetch from " + topic.name(), topLevel, null);
        }
        boolean refresh = false;
        for (FetchResponseData.FetchableTopicResponse topicResponse : response.responses()) {
            boolean ours = byId ? topic.topicId().equals(topicResponse.topicId()) : topic.name().equals(topicResponse.topic());
            if (!ours) {
                continue;
            }
            for (FetchResponseData.PartitionData partition : topicResponse.partitions()) {
                refresh |= handlePartition(partition, out);
            }
        }
        return refresh;
    }

    private FetchRequestData fetchRequest(List<Integer> leaderPartitions, int maxWaitMs, short version) {
        FetchRequestData.FetchTopic fetchTopic = new FetchRequestData.FetchTopic();
        if (version >= 13) {
            fetchTopic.setTopicId(topic.topicId());
        } else {
            fetchTopic.setTopic(topic.name());
        }
        for (int partition : leaderPartitions) {
            FetchRequestData.FetchPartition fetchPartition = new FetchRequestData.FetchPartition()
                .setPartition(partition)
                .setFetchOffset(positions.get(partition))
                .setPartitionMaxBytes(ClientLimits.PARTITION_FETCH_MAX_BYTES);
            if (version >= 9) {
                fetchPartition.setCurrentLeaderEpoch(topic.partition(partition).leaderEpoch());
            }
            fetchTopic.partitions().add(fetchPartition);
        }
        // Session id 0 with epoch -1: a full fetch that opens no session (KIP-227).
        return new FetchRequestData()
            .setMaxWaitMs(maxWaitMs)
            .setMinBytes(1)
            .setMaxBytes(ClientLimits.FETCH_MAX_BYTES)
            .setIsolationLevel(isolation.id())
            .setSessionId(0)
            .setSessionEpoch(-1)
            .setTopics(new ArrayList<>(List.of(fetchTopic)));
    }

    private boolean handlePartition(FetchResponseData.PartitionData data, List<ConsumedRecord> out) {
        int partition = data.partitionIndex();
        if (!positions.containsKey(partition)) {
            return false;
        }
        ErrorCode error = ErrorCode.forCode(data.errorCode());
        String attempted = "cannot fetch from " + topic.name() + "-" + partition;
        if (error == ErrorCode.OFFSET_OUT_OF_RANGE) {
            long from = positions.get(partition);
            long to = listOffsets(List.of(partition), reset == OffsetReset.EARLIEST ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP).get(partition);
            positions.put(partition, to);
            notices.accept("offset " + from + " is out of range for " + topic.name() + "-" + partition + "; resetting to the "
                + (reset == OffsetReset.EARLIEST ? "earliest" : "latest") + " offset " + to);
            return false;
        }
        if (error != ErrorCode.NONE) {
            if (error.isRetriable()) {
                lastFailure = new BrokerErrorException(attempted, error, null);
                return true;
            }
            throw new BrokerErrorException(attempted, error, null);
        }
        try {
            positions.put(partition, readRecords(partition, data, out));
        } catch (ProtocolException e) {
            throw new ClientException(attempted + ": corrupt record data at offset " + positions.get(partition) + ": " + e.getMessage(), e);
        }
        return false;
    }

    /** Appends the readable records of one partition's fetched data to {@code out}; returns the new position. */
    private long readRecords(int partition, FetchResponseData.PartitionData data, List<ConsumedRecord> out) {
        long position = positions.get(partition);
        Records fetched = data.records();
        if (!(fetched instanceof MemoryRecords records) || records.sizeInBytes() == 0) {
            return position;
        }
        AbortedTransactionFilter aborted = new AbortedTransactionFilter(isolation == IsolationLevel.READ_COMMITTED ? data.abortedTransactions() : null);
        boolean anyBatch = false;
        for (RecordBatch entry : records.batches()) {
            anyBatch = true;
            if (!(entry instanceof DefaultRecordBatch batch)) {
                throw new ClientException("cannot read " + topic.name() + "-" + partition + ": a record batch of magic " + entry.magic()
                    + " (before record batches v2) near offset " + position);
            }
            if (batch.lastOffset() < position) {
                continue;
            }
            batch.ensureValid();
            if (!aborted.skip(batch)) {
                for (Record record : batch.records()) {
                    if (record.offset() >= position) {
                        out.add(toConsumedRecord(partition, batch, record));
                    }
                }
            }
            position = batch.nextOffset();
        }
        if (!anyBatch) {
            throw new ClientException("cannot read " + topic.name() + "-" + partition + " at offset " + position
                + ": the fetch returned only part of a record batch (" + records.sizeInBytes() + " bytes)");
        }
        return position;
    }

    private ConsumedRecord toConsumedRecord(int partition, DefaultRecordBatch batch, Record record) {
        return new ConsumedRecord(topic.name(), partition, record.offset(), record.timestamp(), batch.timestampType(),
            copy(record.key()), copy(record.value()), record.headers());
    }

    private static byte[] copy(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    private Map<Integer, List<Integer>> groupByLeader(List<Integer> targets) {
        Map<Integer, List<Integer>> byLeader = new LinkedHashMap<>();
        for (int partition : targets) {
            PartitionInfo info = topic.partition(partition);
            if (info.hasLeader()) {
                byLeader.computeIfAbsent(info.leaderId(), id -> new ArrayList<>()).add(partition);
            }
        }
        return byLeader;
    }

    /** The assigned partitions. */
    public List<Integer> partitions() {
        return partitions;
    }
}
