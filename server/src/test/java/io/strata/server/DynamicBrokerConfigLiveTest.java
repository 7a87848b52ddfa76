package io.strata.server;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The live dynamic broker settings of DynamicBrokerConfigTable, changed with
 * Admin.incrementalAlterConfigs per broker and as the cluster default, and their effect on the
 * running broker: what is set wins in Kafka's order (per broker, cluster default, static, built-in
 * default) and deleting an override reverts to the next one.
 */
class DynamicBrokerConfigLiveTest {
    private static final long TIMEOUT_MS = TestBroker.TIMEOUT_MS;
    private static final String THIS_BROKER = "1";
    private static final String CLUSTER_DEFAULT = "";

    @TempDir
    Path dataDir;

    private TestBroker broker;

    @AfterEach
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    private void set(String resourceName, String key, String value) throws Exception {
        alter(resourceName, new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET));
    }

    private void delete(String resourceName, String key) throws Exception {
        alter(resourceName, new AlterConfigOp(new ConfigEntry(key, null), AlterConfigOp.OpType.DELETE));
    }

    private void alter(String resourceName, AlterConfigOp op) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, resourceName);
        broker.admin().incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private static void waitFor(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    private static long liveHandlerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && thread.getName().startsWith("strata-request-handler-")).count();
    }

    private void assertHandlerThreads(int expected) throws Exception {
        assertThat(broker.server().requestHandlerPool().threadCount()).isEqualTo(expected);
        // Surplus threads stop after their current poll; new ones run at once.
        waitFor(expected + " live request handler threads", () -> liveHandlerThreads() == expected);
        // And the pool still answers.
        assertThat(broker.admin().describeCluster().clusterId().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)).isEqualTo(broker.server().clusterId());
    }

    @Test
    void numIoThreadsResizesTheHandlerPoolPerBrokerAndAsClusterDefault() throws Exception {
        broker = new TestBroker(dataDir, Map.of("num.io.threads", "2"));
        assertHandlerThreads(2);

        set(THIS_BROKER, "num.io.threads", "4");
        assertHandlerThreads(4);
        set(CLUSTER_DEFAULT, "num.io.threads", "3");
        assertHandlerThreads(4);
        delete(THIS_BROKER, "num.io.threads");
        assertHandlerThreads(3);
        delete(CLUSTER_DEFAULT, "num.io.threads");
        assertHandlerThreads(2);

        // Kafka's DynamicThreadPool rule: at most double or half the current count at a time.
        assertThatThrownBy(() -> set(THIS_BROKER, "num.io.threads", "5")).cause().isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("Dynamic thread count update validation failed for num.io.threads=5, value should not be greater than"
                + " double the current value 2");
        assertThatThrownBy(() -> set(THIS_BROKER, "num.io.threads", "0")).cause().isInstanceOf(InvalidRequestException.class);
        assertHandlerThreads(2);
    }

    /** A raw connection from {@code sourceAddress}; whether the broker kept it (answers ApiVersions) or closed it. */
    private boolean admitted(String sourceAddress, List<Socket> open) throws IOException {
        Socket socket = new Socket();
        open.add(socket);
        socket.bind(new InetSocketAddress(sourceAddress, 0));
        socket.connect(new InetSocketAddress("127.0.0.1", broker.port()), (int) TIMEOUT_MS);
        socket.setSoTimeout((int) TIMEOUT_MS);
        // ApiVersions v0: size, api key 18, version 0, correlation id 1, null client id.
        byte[] request = {0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, (byte) 0xff, (byte) 0xff};
        try {
            OutputStream out = socket.getOutputStream();
            out.write(request);
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int size = in.readInt();
            return size > 0;
        } catch (java.io.EOFException | java.net.SocketException closed) {
            return false;
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the broker neither answered nor closed a connection from " + sourceAddress, e);
        }
    }

    private static void closeAll(List<Socket> sockets) throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        sockets.clear();
    }

    @Test
    void connectionLimitsApplyToNewConnectionsAndRevertWhenDeleted() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        List<Socket> sockets = new ArrayList<>();
        try {
            // 127.0.0.2 is loopback too: its connections are counted apart from the Admin client's on 127.0.0.1.
            assertThat(admitted("127.0.0.2", sockets)).isTrue();
            assertThat(admitted("127.0.0.2", sockets)).isTrue();
            closeAll(sockets);

            set(THIS_BROKER, "max.connections.per.ip.overrides", "127.0.0.2:1");
            assertThat(admitted("127.0.0.2", sockets)).isTrue();
            assertThat(admitted("127.0.0.2", sockets)).isFalse();
            closeAll(sockets);

            // The cluster-wide per-address limit, with 127.0.0.1 (the Admin client) exempted by an override.
            delete(THIS_BROKER, "max.connections.per.ip.overrides");
            set(CLUSTER_DEFAULT, "max.connections.per.ip.overrides", "127.0.0.1:1000");
            set(CLUSTER_DEFAULT, "max.connections.per.ip", "2");
            waitFor("the closed connections to be released", () -> broker.server().socketServer().connectionCount() < 10);
            assertThat(admitted("127.0.0.2", sockets)).isTrue();
            assertThat(admitted("127.0.0.2", sockets)).isTrue();
            assertThat(admitted("127.0.0.2", sockets)).isFalse();
            closeAll(sockets);
            delete(CLUSTER_DEFAULT, "max.connections.per.ip");
            delete(CLUSTER_DEFAULT, "max.connections.per.ip.overrides");

            // max.connections counts every address; connections already open stay when it is lowered below them.
            assertThat(admitted("127.0.0.2", sockets)).isTrue();
            int open = broker.server().socketServer().connectionCount();
            set(THIS_BROKER, "max.connections", Integer.toString(open));
            assertThat(admitted("127.0.0.2", sockets)).isFalse();
            assertThat(sockets.get(0).isClosed()).isFalse();
            delete(THIS_BROKER, "max.connections");
            assertThat(admitted("127.0.0.2", sockets)).isTrue();
        } finally {
            closeAll(sockets);
        }
        assertThat(broker.server().dynamicConfigFailures()).isZero();
    }

    @Test
    void maxConnectionCreationRateDelaysAcceptingPastTheRateAndClosesNothing() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        int connections = 12;
        int rate = 5;
        set(CLUSTER_DEFAULT, "max.connection.creation.rate", Integer.toString(rate));
        List<Socket> sockets = new ArrayList<>();
        try {
            long startNanos = System.nanoTime();
            for (int i = 0; i < connections; i++) {
                assertThat(admitted("127.0.0.2", sockets)).as("connection %d", i).isTrue();
            }
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
            // A full second's burst (5) and the sixth at once, then one every 200 ms: at least (12 - 6) x 200 ms, less timer slack.
            assertThat(elapsedMs).isGreaterThanOrEqualTo((connections - rate - 1) * 1000L / rate - 100);
        } finally {
            closeAll(sockets);
        }
        delete(CLUSTER_DEFAULT, "max.connection.creation.rate");
        try {
            for (int i = 0; i < connections; i++) {
                assertThat(admitted("127.0.0.2", sockets)).as("connection %d", i).isTrue();
            }
        } finally {
            closeAll(sockets);
        }
        assertThat(broker.server().dynamicConfigFailures()).isZero();
    }

    @Test
    void malformedConnectionOverridesAreRefused() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        for (String bad : List.of("127.0.0.2", "127.0.0.2:many", "127.0.0.2:-1", ":3")) {
            assertThatThrownBy(() -> set(THIS_BROKER, "max.connections.per.ip.overrides", bad))
                .cause().isInstanceOf(InvalidRequestException.class).hasMessageContaining("max.connections.per.ip.overrides");
        }
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.broker(THIS_BROKER))).isEmpty();
    }

    @Test
    void producerIdExpirationMsExpiresIdleProducersOfOpenLogs() throws Exception {
        broker = new TestBroker(dataDir, Map.of("producer.id.expiration.check.interval.ms", "100"));
        broker.admin().createTopics(List.of(new NewTopic("expiring", 1, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port());
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            producer.send(new ProducerRecord<>("expiring", 0, "k", "v")).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        TopicPartition partition = new TopicPartition("expiring", 0);
        assertThat(activeProducers(partition)).hasSize(1);

        set(CLUSTER_DEFAULT, "producer.id.expiration.ms", "1");
        assertThat(broker.server().logManager().producerIdExpirationMs()).isEqualTo(1);
        waitFor("the idle producer to expire", () -> activeProducers(partition).isEmpty());

        delete(CLUSTER_DEFAULT, "producer.id.expiration.ms");
        assertThat(broker.server().logManager().producerIdExpirationMs()).isEqualTo(86_400_000L);
    }

    private List<ProducerState> activeProducers(TopicPartition partition) {
        try {
            return broker.admin().describeProducers(List.of(partition)).partitionResult(partition).get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .activeProducers();
        } catch (InterruptedException | ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void numRecoveryThreadsPerDataDirAppliesWhenTheLogsNextLoad() throws Exception {
        broker = new TestBroker(dataDir, Map.of("num.recovery.threads.per.data.dir", "2"));
        set(THIS_BROKER, "num.recovery.threads.per.data.dir", "4");
        assertThat(broker.server().logManager().recoveryThreadsPerDataDir()).isEqualTo(4);
        broker.close();
        // On the next start the dynamic value from the metadata log is in force before the logs load.
        broker = new TestBroker(dataDir, Map.of("num.recovery.threads.per.data.dir", "2"));
        assertThat(broker.server().logManager().recoveryThreadsPerDataDir()).isEqualTo(4);
        delete(THIS_BROKER, "num.recovery.threads.per.data.dir");
        assertThat(broker.server().logManager().recoveryThreadsPerDataDir()).isEqualTo(2);
    }

    @Test
    void replicationThrottledRatesAndTheFetcherCountApplyPerBrokerOverTheClusterDefault() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        io.strata.server.replica.ReplicationQuotaManager leader = broker.server().replicationQuotas().get(0);
        io.strata.server.replica.ReplicationQuotaManager follower = broker.server().replicationQuotas().get(1);
        assertThat(leader.upperBound()).isEqualTo(Long.MAX_VALUE);
        assertThat(follower.upperBound()).isEqualTo(Long.MAX_VALUE);

        set(CLUSTER_DEFAULT, "leader.replication.throttled.rate", "5000");
        set(THIS_BROKER, "follower.replication.throttled.rate", "7000");
        assertThat(leader.upperBound()).isEqualTo(5_000);
        assertThat(follower.upperBound()).isEqualTo(7_000);
        set(THIS_BROKER, "leader.replication.throttled.rate", "6000");
        assertThat(leader.upperBound()).as("the per-broker value wins").isEqualTo(6_000);
        delete(THIS_BROKER, "leader.replication.throttled.rate");
        assertThat(leader.upperBound()).isEqualTo(5_000);
        delete(CLUSTER_DEFAULT, "leader.replication.throttled.rate");
        assertThat(leader.upperBound()).isEqualTo(Long.MAX_VALUE);
        assertThatThrownBy(() -> set(THIS_BROKER, "follower.replication.throttled.rate", "-1")).cause()
            .isInstanceOf(InvalidRequestException.class).hasMessageContaining("follower.replication.throttled.rate");

        set(THIS_BROKER, "num.replica.fetchers", "2");
        assertThat(broker.server().replicaFetcherManager().numFetchers()).isEqualTo(2);
        assertThatThrownBy(() -> set(THIS_BROKER, "num.replica.fetchers", "5")).cause().isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("value should not be greater than double the current value 2");
        delete(THIS_BROKER, "num.replica.fetchers");
        assertThat(broker.server().replicaFetcherManager().numFetchers()).isEqualTo(1);
    }

    @Test
    void topicThrottledReplicasAreValidatedAndMarkThisBrokersPartitions() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        broker.admin().createTopics(List.of(new NewTopic("throttled", 3, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        org.apache.kafka.common.config.ConfigResource topic = new org.apache.kafka.common.config.ConfigResource(
            org.apache.kafka.common.config.ConfigResource.Type.TOPIC, "throttled");
        alterTopic(topic, "leader.replication.throttled.replicas", "0:1,2:1,1:7");
        alterTopic(topic, "follower.replication.throttled.replicas", "*");
        io.strata.server.replica.ReplicationQuotaManager leader = broker.server().replicationQuotas().get(0);
        io.strata.server.replica.ReplicationQuotaManager follower = broker.server().replicationQuotas().get(1);
        waitFor("the throttles to apply", () -> follower.isThrottled(new io.strata.storage.TopicPartition("throttled", 1)));
        assertThat(leader.isThrottled(new io.strata.storage.TopicPartition("throttled", 0))).isTrue();
        assertThat(leader.isThrottled(new io.strata.storage.TopicPartition("throttled", 1))).as("names broker 7").isFalse();
        assertThat(leader.isThrottled(new io.strata.storage.TopicPartition("throttled", 2))).isTrue();

        assertThatThrownBy(() -> alterTopic(topic, "leader.replication.throttled.replicas", "0-1")).cause()
            .isInstanceOf(InvalidConfigurationException.class)
            .hasMessageContaining("leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following"
                + " format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
        broker.admin().deleteTopics(List.of("throttled")).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        waitFor("the deleted topic's throttles to go", () -> leader.throttledTopics().isEmpty() && follower.throttledTopics().isEmpty());
    }

    private void alterTopic(org.apache.kafka.common.config.ConfigResource topic, String key, String value) throws Exception {
        broker.admin().incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(key, value),
            AlterConfigOp.OpType.SET)))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    @Test
    void dynamicKeysWithoutTheirSubsystemAreRefusedWithTheReason() throws Exception {
        broker = new TestBroker(dataDir, Map.of());
        assertThatThrownBy(() -> set(THIS_BROKER, "cordoned.log.dirs", "/elsewhere")).cause()
            .isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("Cannot update these configs dynamically on this broker: Set(cordoned.log.dirs)")
            .hasMessageContaining("refused until log dir cordoning");
        assertThatThrownBy(() -> set(CLUSTER_DEFAULT, "num.network.threads", "2")).cause().isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("Set(num.network.threads)");
        // A key Kafka keeps static: Kafka's own message.
        assertThatThrownBy(() -> set(THIS_BROKER, "log.dirs", "/elsewhere")).cause().isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("Cannot update these configs dynamically: Set(log.dirs)");
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.broker(THIS_BROKER))).isEmpty();
        // Only what ELR's bootstrap wrote (KIP-966): none of the refused changes.
        assertThat(broker.server().metadata().image().configs(io.strata.metadata.ConfigResource.broker(CLUSTER_DEFAULT)))
            .isEqualTo(java.util.Map.of("min.insync.replicas", "1"));
    }
}
