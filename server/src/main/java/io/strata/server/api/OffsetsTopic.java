package io.strata.server.api;

import io.strata.coordinator.group.CoordinatorLog;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.metadata.Controller;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.MetadataPublisher;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import io.strata.server.config.ServerConfig;
import io.strata.server.replica.Partition;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.FetchDataInfo;
import io.strata.storage.FetchIsolation;
import io.strata.storage.FileRecords;
import io.strata.storage.LogConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The {@code __consumer_offsets} topic as the group coordinator sees it: created on first use
 * (compacted, {@code offsets.topic.num.partitions} partitions), written through the replica
 * manager with acks=all, replayed when this node leads a partition, and the coordinator told
 * which partitions it leads whenever the metadata image changes.
 */
public final class OffsetsTopic implements CoordinatorLog, MetadataPublisher {
    public static final String NAME = "__consumer_offsets";
    private static final Logger LOG = LoggerFactory.getLogger(OffsetsTopic.class);
    private static final long WRITE_TIMEOUT_MS = 30_000;

    private final ServerConfig config;
    private final Controller controller;
    private final ReplicaManager replicaManager;
    private final int nodeId;
    private final AtomicBoolean creating = new AtomicBoolean();
    private volatile GroupCoordinator coordinator;

    public OffsetsTopic(ServerConfig config, Controller controller, ReplicaManager replicaManager, int nodeId) {
        this.config = config;
        this.controller = controller;
        this.replicaManager = replicaManager;
        this.nodeId = nodeId;
    }

    public void setCoordinator(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    /** True if the topic exists; otherwise starts creating it (once) and returns false so clients retry. */
    boolean ensureReady() {
        if (controller.image().topic(NAME) != null) {
            return true;
        }
        if (creating.compareAndSet(false, true)) {
            CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName(NAME)
                .setNumPartitions(config.getInt(ServerConfig.OFFSETS_TOPIC_NUM_PARTITIONS))
                .setReplicationFactor((short) Math.min(config.getShort(ServerConfig.OFFSETS_TOPIC_REPLICATION_FACTOR),
                    Math.max(1, controller.image().brokers().size())))
                .setConfigs(List.of(
                    new CreateTopicsRequestData.CreatableTopicConfig().setName(LogConfig.CLEANUP_POLICY).setValue("compact"),
                    new CreateTopicsRequestData.CreatableTopicConfig().setName(LogConfig.SEGMENT_BYTES)
                        .setValue(Integer.toString(config.getInt(ServerConfig.OFFSETS_TOPIC_SEGMENT_BYTES))),
                    new CreateTopicsRequestData.CreatableTopicConfig().setName(LogConfig.COMPRESSION_TYPE).setValue("producer")));
            controller.createTopics(List.of(topic), false).whenComplete((results, error) -> {
                creating.set(false);
                if (error != null || results.get(0).errorCode() != ErrorCode.NONE.code() && results.get(0).errorCode() != ErrorCode.TOPIC_ALREADY_EXISTS.code()) {
                    LOG.warn("Could not create {}: {}", NAME, error != null ? error.toString() : results.get(0).errorMessage());
                } else {
                    LOG.info("Created {}", NAME);
                }
            });
        }
        return false;
    }

    @Override
    public void publish(MetadataImage previous, MetadataImage current) {
        GroupCoordinator target = coordinator;
        TopicImage topic = current.topic(NAME);
        if (target == null || topic == null) {
            return;
        }
        Set<Integer> led = new HashSet<>();
        for (Map.Entry<Integer, PartitionRegistration> partition : topic.partitions().entrySet()) {
            if (partition.getValue().leader() == nodeId) {
                led.add(partition.getKey());
            }
        }
        target.onPartitionsLed(led);
    }

    @Override
    public void append(int partition, MemoryRecords records, Consumer<ErrorCode> callback) {
        TopicPartition topicPartition = new TopicPartition(NAME, partition);
        replicaManager.appendRecords(WRITE_TIMEOUT_MS, (short) -1, true, UnifiedLog.AppendOrigin.COORDINATOR, Map.of(topicPartition, records),
            results -> callback.accept(results.get(topicPartition).error()));
    }

    @Override
    public void replay(int partition, BiConsumer<ByteBuffer, ByteBuffer> consumer) {
        Partition hosted = replicaManager.partition(new TopicPartition(NAME, partition));
        if (hosted == null) {
            return;
        }
        UnifiedLog log = hosted.log();
        long offset = log.logStartOffset();
        long end = log.highWatermark();
        while (offset < end) {
            FetchDataInfo info = log.read(offset, 4 << 20, FetchIsolation.HIGH_WATERMARK, true);
            ByteBuffer bytes = info.records() instanceof FileRecords file ? file.readAll() : ((MemoryRecords) info.records()).buffer();
            long next = offset;
            for (RecordBatch entry : MemoryRecords.readableRecords(bytes).batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                if (!batch.isControlBatch()) {
                    for (Record record : batch.records()) {
                        if (record.offset() >= offset) {
                            consumer.accept(record.key(), record.value());
                        }
                    }
                }
                next = batch.lastOffset() + 1;
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
    }
}
