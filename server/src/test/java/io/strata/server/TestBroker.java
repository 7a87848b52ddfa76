package io.strata.server;

import io.strata.common.Time;
import io.strata.server.config.ServerConfig;
import io.strata.storage.TopicPartition;
import io.strata.storage.UnifiedLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A real Strata node in this JVM on an ephemeral port, with an Admin client for it. Close it
 * after each test.
 */
final class TestBroker implements AutoCloseable {
    static final long TIMEOUT_MS = 30_000;

    private final Path dataDir;
    private final StrataServer server;
    private Admin admin;

    TestBroker(Path dataDir, Map<String, String> overrides) throws Exception {
        this(dataDir, overrides, Time.SYSTEM);
    }

    /** A node on {@code time} (e.g. a clock the test moves forward). */
    TestBroker(Path dataDir, Map<String, String> overrides, Time time) throws Exception {
        this(dataDir, overrides, time, server -> { });
    }

    /** A node on {@code time}; {@code beforeStartup} sees the server before it starts (e.g. to inject a halter). */
    TestBroker(Path dataDir, Map<String, String> overrides, Time time, java.util.function.Consumer<StrataServer> beforeStartup) throws Exception {
        this.dataDir = dataDir;
        Map<String, String> properties = new HashMap<>();
        properties.put("listeners", "PLAINTEXT://127.0.0.1:0");
        properties.put("log.dirs", dataDir.toString());
        properties.put("num.io.threads", "2");
        properties.put("num.network.threads", "1");
        properties.put("metrics.enabled", "false");
        properties.putAll(overrides);
        server = new StrataServer(ServerConfig.fromMap(properties), time);
        beforeStartup.accept(server);
        try {
            server.startup();
        } catch (Exception e) {
            server.close();
            throw e;
        }
    }

    Path dataDir() {
        return dataDir;
    }

    StrataServer server() {
        return server;
    }

    String bootstrap() {
        return "127.0.0.1:" + server.boundPort();
    }

    int port() {
        return server.boundPort();
    }

    Admin admin() {
        if (admin == null) {
            Properties properties = new Properties();
            properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
            properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
            properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(TIMEOUT_MS));
            admin = Admin.create(properties);
        }
        return admin;
    }

    void createTopic(String name, int partitions, Map<String, String> configs) throws Exception {
        admin().createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    /** Writes {@code count} records to partition 0 of {@code topic}, acknowledged by the broker (acks=all). */
    void produce(String topic, int count) throws Exception {
        produce(topic, 0, count);
    }

    /** Writes {@code count} records to one partition of {@code topic}, acknowledged by the broker (acks=all). */
    void produce(String topic, int partition, int count) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, partition, null, ("record-" + i).getBytes(StandardCharsets.UTF_8)))
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** The log of a hosted partition, or null. */
    UnifiedLog log(String topic, int partition) {
        var hosted = server.replicaManager().partition(new TopicPartition(topic, partition));
        return hosted == null ? null : hosted.log();
    }

    /**
     * Registers broker {@code id} with this node's controller and unfences it at once, as a real
     * broker's first heartbeats would. It never heartbeats again: a test that needs it for longer
     * than {@code broker.session.timeout.ms} sets that higher.
     */
    void registerBroker(int id, String host, int port, String rack) throws Exception {
        io.strata.protocol.message.BrokerRegistrationRequestData request = new io.strata.protocol.message.BrokerRegistrationRequestData()
            .setBrokerId(id).setClusterId(server.clusterId()).setIncarnationId(java.util.UUID.randomUUID()).setRack(rack);
        request.listeners().add(new io.strata.protocol.message.BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost(host)
            .setPort(port));
        long epoch = server.controller().registerBroker(request).get(30, java.util.concurrent.TimeUnit.SECONDS).brokerEpoch();
        var heartbeat = server.controller().brokerHeartbeat(new io.strata.protocol.message.BrokerHeartbeatRequestData().setBrokerId(id)
            .setBrokerEpoch(epoch).setCurrentMetadataOffset(Long.MAX_VALUE)).get(30, java.util.concurrent.TimeUnit.SECONDS);
        if (heartbeat.isFenced()) {
            throw new IllegalStateException("broker " + id + " was not unfenced: " + heartbeat);
        }
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        server.close();
    }
}
