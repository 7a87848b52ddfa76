package io.strata.it.compat;

import io.strata.it.compat.CompatManifest.CommittedOffset;
import io.strata.it.compat.CompatManifest.Group;
import io.strata.it.compat.CompatManifest.Header;
import io.strata.it.compat.CompatManifest.Partition;
import io.strata.it.compat.CompatManifest.RecordEntry;
import io.strata.it.compat.CompatManifest.Topic;
import io.strata.it.compat.CompatManifest.Transaction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * What a running node shows kafka-clients: the observations a {@link CompatManifest} is made of.
 * The generator records them from the release that writes a fixture; the compatibility test
 * takes them again from the current code and compares. Waits have deadlines, never sleeps.
 */
final class ClusterSnapshot {
    static final long TIMEOUT_MS = 30_000;

    private ClusterSnapshot() {
    }

    static Properties clientProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(TIMEOUT_MS));
        properties.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return properties;
    }

    /** The user topics (internal ones excluded), by name, with their dynamic configs and every partition read both ways. */
    static List<Topic> topics(Admin admin, String bootstrap) throws Exception {
        Set<String> names = new java.util.TreeSet<>(admin.listTopics().names().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        Map<String, TopicDescription> descriptions = admin.describeTopics(names).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        List<Topic> topics = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> uncommitted = consumer(bootstrap, "read_uncommitted");
             KafkaConsumer<byte[], byte[]> committed = consumer(bootstrap, "read_committed")) {
            for (String name : names) {
                TopicDescription description = descriptions.get(name);
                List<Partition> contents = new ArrayList<>();
                for (int partition : description.partitions().stream().map(info -> info.partition()).sorted().toList()) {
                    contents.add(partition(admin, uncommitted, committed, new TopicPartition(name, partition)));
                }
                topics.add(new Topic(name, description.topicId().toString(),
                    dynamicConfigs(admin, new ConfigResource(ConfigResource.Type.TOPIC, name), ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG), contents));
            }
        }
        return topics;
    }

    /** One partition read with both isolation levels, by a read_uncommitted and a read_committed consumer. */
    static Partition partition(Admin admin, KafkaConsumer<byte[], byte[]> uncommittedConsumer, KafkaConsumer<byte[], byte[]> committedConsumer,
                               TopicPartition partition) throws Exception {
        long logStartOffset = admin.listOffsets(Map.of(partition, OffsetSpec.earliest())).partitionResult(partition)
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).offset();
        long endOffset = admin.listOffsets(Map.of(partition, OffsetSpec.latest())).partitionResult(partition)
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).offset();
        List<ConsumerRecord<byte[], byte[]>> uncommitted = read(uncommittedConsumer, partition, endOffset);
        Set<Long> committedOffsets = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> record : read(committedConsumer, partition, endOffset)) {
            committedOffsets.add(record.offset());
        }
        List<RecordEntry> records = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : uncommitted) {
            records.add(entry(record, !committedOffsets.contains(record.offset())));
        }
        if (!committedOffsets.stream().allMatch(offset -> uncommitted.stream().anyMatch(record -> record.offset() == offset))) {
            throw new IllegalStateException("read_committed returned records read_uncommitted did not: " + partition);
        }
        List<CompatManifest.Producer> producers = admin.describeProducers(List.of(partition)).partitionResult(partition)
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).activeProducers().stream()
            .map(state -> new CompatManifest.Producer(state.producerId(), state.producerEpoch(), state.lastSequence(), state.lastTimestamp()))
            .sorted(java.util.Comparator.comparingLong(CompatManifest.Producer::producerId)).toList();
        return new Partition(partition.partition(), logStartOffset, endOffset, records, producers);
    }

    static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String isolation) {
        Properties properties = clientProperties(bootstrap);
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(properties);
    }

    /** {@link #read(KafkaConsumer, TopicPartition, long)} with a consumer of its own at {@code isolation}. */
    static List<ConsumerRecord<byte[], byte[]>> read(String bootstrap, TopicPartition partition, String isolation, long endOffset) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap, isolation)) {
            return read(consumer, partition, endOffset);
        }
    }

    /**
     * Every record of {@code partition} from its log start up to {@code endOffset}, at the
     * consumer's isolation level (the consumer is assigned that partition alone). Ends when the
     * position reaches {@code endOffset} (it passes markers and aborted data too); fails after
     * {@link #TIMEOUT_MS}.
     */
    static List<ConsumerRecord<byte[], byte[]>> read(KafkaConsumer<byte[], byte[]> consumer, TopicPartition partition, long endOffset) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        consumer.assign(List.of(partition));
        consumer.seekToBeginning(List.of(partition));
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (consumer.position(partition) < endOffset) {
            if (System.nanoTime() > deadlineNanos) {
                throw new IllegalStateException("read of " + partition + " stuck at " + consumer.position(partition) + " before end offset "
                    + endOffset + " after " + records.size() + " records");
            }
            consumer.poll(Duration.ofMillis(200)).records(partition).forEach(records::add);
        }
        return records;
    }

    static RecordEntry entry(ConsumerRecord<byte[], byte[]> record, boolean aborted) {
        List<Header> headers = new ArrayList<>();
        record.headers().forEach(header -> headers.add(new Header(header.key(), crc(header.value()))));
        return new RecordEntry(record.offset(), record.timestamp(), crc(record.key()), crc(record.value()), headers, aborted);
    }

    static String crc(byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return String.format("%08x", crc.getValue());
    }

    static Map<String, String> dynamicConfigs(Admin admin, ConfigResource resource, ConfigEntry.ConfigSource source) throws Exception {
        Config config = admin.describeConfigs(List.of(resource)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(resource);
        Map<String, String> configs = new TreeMap<>();
        for (ConfigEntry entry : config.entries()) {
            if (entry.source() == source) {
                configs.put(entry.name(), entry.value());
            }
        }
        return configs;
    }

    /** Dynamic broker configs of {@code nodeId} and the cluster-wide defaults (key ""). */
    static Map<String, Map<String, String>> brokerConfigs(Admin admin, int nodeId) throws Exception {
        Map<String, Map<String, String>> configs = new TreeMap<>();
        configs.put(Integer.toString(nodeId), dynamicConfigs(admin, new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(nodeId)),
            ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG));
        configs.put("", dynamicConfigs(admin, new ConfigResource(ConfigResource.Type.BROKER, ""),
            ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
        return configs;
    }

    static List<Group> groups(Admin admin, Collection<String> groupIds) throws Exception {
        Map<String, ConsumerGroupDescription> descriptions = admin.describeConsumerGroups(groupIds).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        List<Group> groups = new ArrayList<>();
        for (String groupId : new java.util.TreeSet<>(groupIds)) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<String, CommittedOffset> offsets = new TreeMap<>();
            committed.forEach((partition, offset) -> offsets.put(partition.toString(), new CommittedOffset(offset.offset(), offset.metadata())));
            groups.add(new Group(groupId, descriptions.get(groupId).type().name(), offsets));
        }
        return groups;
    }

    /** A transactional id's state; the record lists are the caller's (they come from what it wrote). */
    static TransactionDescription transaction(Admin admin, String transactionalId) throws Exception {
        return admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    static Transaction transaction(Admin admin, String transactionalId, List<String> committedRecords, List<String> abortedRecords)
        throws Exception {
        TransactionDescription description = transaction(admin, transactionalId);
        return new Transaction(transactionalId, description.producerId(), description.producerEpoch(), description.state().name(),
            committedRecords, abortedRecords);
    }

    static RecordHeader header(String key, String value) {
        return new RecordHeader(key, value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
