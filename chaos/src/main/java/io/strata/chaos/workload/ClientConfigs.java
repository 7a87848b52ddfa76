package io.strata.chaos.workload;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.Properties;

/**
 * The client settings every workload shares, and why. The limits keep every operation's outcome resolved within
 * a run (Kafka's defaults would let a send hang for two minutes: {@code delivery.timeout.ms} 120000) and make a
 * client give up on a silent (dropped, paused) node quickly enough to try another.
 */
final class ClientConfigs {
    /** A send resolves (ok or error) within this long after {@code send()} returned. */
    static final int DELIVERY_TIMEOUT_MS = 12_000;
    /** One request; a paused node costs this much before the client retries elsewhere. */
    static final int REQUEST_TIMEOUT_MS = 4_000;
    /** {@code send()} blocks at most this long for metadata; then the record never entered the producer. */
    static final int MAX_BLOCK_MS = 5_000;
    /** A SYN to a partitioned node is dropped: give up on it quickly. */
    static final int CONNECT_TIMEOUT_MS = 2_000;
    /** Small batches: many batches, many sequence numbers, many chances for an idempotence bug to show. */
    static final int LINGER_MS = 2;
    /** A transaction the workload lost track of is aborted by the coordinator after this long (drains wait on it). */
    static final int TRANSACTION_TIMEOUT_MS = 15_000;
    /** Consumer calls (commit, committed, position) give up after this long. */
    static final int DEFAULT_API_TIMEOUT_MS = 8_000;

    static {
        if (DELIVERY_TIMEOUT_MS < LINGER_MS + REQUEST_TIMEOUT_MS) {
            throw new AssertionError("delivery.timeout.ms must be >= linger.ms + request.timeout.ms (kafka-clients refuses it)");
        }
    }

    private ClientConfigs() {
    }

    /** An idempotent acks=all producer of byte arrays. */
    static Properties idempotentProducer(String bootstrapServers, String clientId) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        properties.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(DELIVERY_TIMEOUT_MS));
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(REQUEST_TIMEOUT_MS));
        properties.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Integer.toString(MAX_BLOCK_MS));
        properties.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(LINGER_MS));
        properties.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        properties.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, "1000");
        properties.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, Integer.toString(CONNECT_TIMEOUT_MS));
        properties.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, Integer.toString(CONNECT_TIMEOUT_MS));
        properties.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "5000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return properties;
    }

    /** A transactional producer (idempotent, acks=all) with this transactional id. */
    static Properties transactionalProducer(String bootstrapServers, String clientId, String transactionalId) {
        Properties properties = idempotentProducer(bootstrapServers, clientId);
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        properties.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, Integer.toString(TRANSACTION_TIMEOUT_MS));
        return properties;
    }

    /**
     * A consumer of byte arrays without auto commit, reading from the earliest offset when the group has none.
     *
     * @param groupProtocol {@code classic} or {@code consumer}; null for a consumer outside any group
     */
    static Properties consumer(String bootstrapServers, String clientId, String groupId, String groupProtocol,
                               boolean readCommitted, int maxPollRecords) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        if (groupId != null) {
            properties.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
            properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, groupProtocol);
            if ("classic".equals(groupProtocol)) {
                // The consumer protocol takes these from the broker (group.consumer.* configs) and refuses them here.
                properties.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
                properties.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
            }
        }
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(maxPollRecords));
        properties.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(REQUEST_TIMEOUT_MS));
        properties.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(DEFAULT_API_TIMEOUT_MS));
        properties.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, Integer.toString(CONNECT_TIMEOUT_MS));
        properties.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, Integer.toString(CONNECT_TIMEOUT_MS));
        properties.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "5000");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return properties;
    }
}
