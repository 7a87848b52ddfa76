package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Kafka's Java clients as the referee of the third-party group tests: they create the topic,
 * produce the records, and read back what the group committed.
 */
final class GroupClients {
    private static final long TIMEOUT_SECONDS = 30;

    private GroupClients() {
    }

    private static Properties base(String bootstrap) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return properties;
    }

    /** Creates the topic and writes values "value-0".. "value-(count-1)", round robin over the partitions. */
    static void createAndProduce(String bootstrap, String topic, int partitions, int count) throws Exception {
        try (Admin admin = Admin.create(base(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
        produce(bootstrap, topic, partitions, 0, count);
    }

    /** Writes values "value-from".. "value-(to-1)", round robin over the partitions. */
    static void produce(String bootstrap, String topic, int partitions, int from, int to) throws Exception {
        Properties properties = base(bootstrap);
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, "key-" + i, "value-" + i));
            }
            producer.flush();
        }
    }

    /** The log end offset of each partition of the topic. */
    static Map<TopicPartition, Long> endOffsets(String bootstrap, String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(base(bootstrap))) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int partition = 0; partition < partitions; partition++) {
                latest.put(new TopicPartition(topic, partition), OffsetSpec.latest());
            }
            return admin.listOffsets(latest).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().offset()));
        }
    }

    /** The offsets the group has committed (Admin.listConsumerGroupOffsets). */
    static Map<TopicPartition, Long> committedOffsets(String bootstrap, String group) throws Exception {
        try (Admin admin = Admin.create(base(bootstrap))) {
            return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().offset()));
        }
    }

    static ConsumerGroupDescription describe(String bootstrap, String group) throws Exception {
        try (Admin admin = Admin.create(base(bootstrap))) {
            return admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }
}
