package io.strata.server.api;

import io.strata.coordinator.group.CoordinatorLog;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.MetadataPublisher;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.server.replica.Partition;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.FileRecords;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * An internal topic a coordinator keeps its state in ({@code __consumer_offsets},
 * {@code __transaction_state}): created on first use, written through the replica manager with
 * acks=all, replayed when this node leads a partition, and the coordinator told which
 * partitions it leads (with their leader epochs) whenever the metadata image changes.
 */
public final class InternalTopic implements CoordinatorLog, MetadataPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(InternalTopic.class);
    private static final long WRITE_TIMEOUT_MS = 30_000;

    private final String name;
    private final int partitions;
    private final short replicationFactor;
    private final Map<String, String> configs;
    private final ControllerApi controller;
    private final java.util.function.Supplier<MetadataImage> images;
    private final ReplicaManager replicaManager;
    private final int nodeId;
    private final AtomicBoolean creating = new AtomicBoolean();
    private volatile Consumer<Map<Integer, Integer>> onLed;

    public InternalTopic(String name, int partitions, short replicationFactor, Map<String, String> configs, ControllerApi controller,
                         java.util.function.Supplier<MetadataImage> images,
                         ReplicaManager replicaManager, int nodeId) {
        this.name = name;
        this.partitions = partitions;
        this.replicationFactor = replicationFactor;
        this.configs = configs;
        this.controller = controller;
        this.images = images;
        this.replicaManager = replicaManager;
        this.nodeId = nodeId;
    }

    public String name() {
        return name;
    }

    /** Tells the coordinator which partitions (→ leader epoch) this node leads, now and after every change. */
    public void onPartitionsLed(Consumer<Map<Integer, Integer>> listener) {
        this.onLed = listener;
        publish(MetadataImage.EMPTY, images.get());
    }

    /** True if the topic exists; otherwise starts creating it (once) and returns false so clients retry. */
    public boolean ensureReady() {
        if (images.get().topic(name) != null) {
            return true;
        }
        if (creating.compareAndSet(false, true)) {
            List<CreateTopicsRequestData.CreatableTopicConfig> topicConfigs = new ArrayList<>();
            configs.forEach((key, value) -> topicConfigs.add(new CreateTopicsRequestData.CreatableTopicConfig().setName(key).setValue(value)));
            short replication = (short) Math.min(replicationFactor, Math.max(1, images.get().brokers().size()));
            CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName(name)
                .setNumPartitions(partitions).setReplicationFactor(replication).setConfigs(topicConfigs);
            controller.createTopics(List.of(topic), false).whenComplete((results, error) -> {
                creating.set(false);
                if (error != null || results.get(0).errorCode() != ErrorCode.NONE.code() && results.get(0).errorCode() != ErrorCode.TOPIC_ALREADY_EXISTS.code()) {
                    LOG.warn("Could not create {}: {}", name, error != null ? error.toString() : results.get(0).errorMessage());
                } else {
                    LOG.info("Created {} with {} partitions", name, partitions);
                }
            });
        }
        return false;
    }

    @Override
    public void publish(MetadataImage previous, MetadataImage current) {
        Consumer<Map<Integer, Integer>> listener = onLed;
        TopicImage topic = current.topic(name);
        if (listener == null || topic == null) {
            return;
        }
        Map<Integer, Integer> led = new LinkedHashMap<>();
        for (Map.Entry<Integer, PartitionRegistration> partition : topic.partitions().entrySet()) {
            if (partition.getValue().leader() == nodeId) {
                led.put(partition.getKey(), partition.getValue().leaderEpoch());
            }
        }
        listener.accept(led);
    }

    @Override
    public void append(int partition, MemoryRecords records, Consumer<ErrorCode> callback) {
        TopicPartition topicPartition = new TopicPartition(name, partition);
        replicaManager.appendRecords(WRITE_TIMEOUT_MS, (short) -1, true, UnifiedLog.AppendOrigin.COORDINATOR, Map.of(topicPartition, records),
            results -> callback.accept(results.get(topicPartition).error()));
    }

    @Override
    public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> consumer) {
        replayTransactional(partition, new TransactionalReplay() {
            @Override
            public void record(ByteBuffer key, ByteBuffer value, long producerId, boolean transactional) {
                consumer.accept(key, value);
            }

            @Override
            public void marker(long producerId, boolean commit) {
            }
        });
    }

    @Override
    public void replayTransactional(int partition, TransactionalReplay replay) {
        Partition hosted = replicaManager.partition(new TopicPartition(name, partition));
        if (hosted == null) {
            return;
        }
        UnifiedLog log = hosted.log();
        long offset = log.logStartOffset();
        // To the log end, as Kafka's coordinator loaders do: a new leader's high watermark can lag writes its predecessor
        // acknowledged (it moves once the followers fetch in the new epoch), and all of its log will be committed as it leads.
        long end = log.logEndOffset();
        while (offset < end) {
            FetchDataInfo info = log.read(offset, 4 << 20, FetchIsolation.LOG_END, true);
            ByteBuffer bytes = info.records() instanceof FileRecords file ? file.readAll() : ((MemoryRecords) info.records()).buffer();
            long next = offset;
            for (RecordBatch entry : MemoryRecords.readableRecords(bytes).batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                next = batch.lastOffset() + 1;
                if (batch.lastOffset() < offset) {
                    continue;
                }
                if (batch.isControlBatch()) {
                    for (Record record : batch.records()) {
                        ControlRecordType type = ControlRecordType.parseKey(record.key());
                        if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                            replay.marker(batch.producerId(), type == ControlRecordType.COMMIT);
                        }
                    }
                    continue;
                }
                for (Record record : batch.records()) {
                    if (record.offset() >= offset) {
                        replay.record(record.key(), record.value(), batch.producerId(), batch.isTransactional(), record.offset());
                    }
                }
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
    }
}
