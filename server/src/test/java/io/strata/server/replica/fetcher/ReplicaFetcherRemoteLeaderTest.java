package io.strata.server.replica.fetcher;

import io.strata.common.Time;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;
import io.strata.server.network.client.InterBrokerClient;
import io.strata.storage.TopicPartition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
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
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@link RemoteLeaderEndpoint} against a real Strata node: Fetch v18 (with ReplicaState and the
 * tagged HighWatermark), OffsetForLeaderEpoch v4 and ListOffsets v11 go over the wire and come back
 * readable, and a {@link ReplicaFetcher} over it copies the node's partition into a follower log.
 */
class ReplicaFetcherRemoteLeaderTest {
    private static final String TOPIC = "replicated";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dataDir;
    private StrataServer server;
    private RemoteLeaderEndpoint.Factory endpoints;

    @BeforeEach
    void start() throws Exception {
        server = new StrataServer(ServerConfig.fromMap(Map.of("listeners", "PLAINTEXT://127.0.0.1:0", "log.dirs", dataDir.toString(),
            "num.io.threads", "2", "num.network.threads", "1", "metrics.enabled", "false")), Time.SYSTEM);
        server.startup();
        endpoints = new RemoteLeaderEndpoint.Factory(7, ReplicaFetcherConfig.defaults(),
            id -> Optional.of(new InterBrokerClient.Endpoint(id, "127.0.0.1", server.boundPort())), Time.SYSTEM, new Random(7));
    }

    @AfterEach
    void stop() {
        if (endpoints != null) {
            endpoints.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aFetcherOverTheNetworkCopiesTheLeadersPartition() throws Exception {
        UUID topicId = createTopicAndProduce(12);
        int leaderEpoch = server.replicaManager().partition(TP).leaderEpoch();
        long leaderEnd = server.replicaManager().partition(TP).log().logEndOffset();
        assertThat(leaderEnd).isEqualTo(12);

        InMemoryLog follower = new InMemoryLog(TP, topicId);
        FailedPartitions failed = new FailedPartitions();
        LeaderEndpoint leader = endpoints.apply(server.nodeId());
        try (ReplicaFetcher fetcher = new ReplicaFetcher(0, 7, () -> followerEpoch, leader, ReplicaFetcherConfig.defaults(), failed)) {
            fetcher.addPartitions(Map.of(TP, new InitialFetchState(topicId, server.nodeId(), leaderEpoch, follower)));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (follower.logEndOffset() < leaderEnd || follower.highWatermark() < leaderEnd) {
                if (System.nanoTime() > deadline || !failed.partitions().isEmpty()) {
                    fail("the follower did not catch up: " + follower + ", failed " + failed.partitions() + ", states " + fetcher.partitionStates());
                }
                long now = Time.SYSTEM.hiResClockMs();
                long next = fetcher.poll(now);
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(Math.max(0, Math.min(5, next - now))));
            }
            assertThat(follower.latestEpoch()).hasValue(leaderEpoch);
            assertThat(fetcher.failedRequests()).isZero();
        }
    }

    @Test
    void theFetcherKeepsAnIncrementalSessionWithTheLeader() throws Exception {
        UUID topicId = createTopicAndProduce(12);
        int leaderEpoch = server.replicaManager().partition(TP).leaderEpoch();
        InMemoryLog follower = new InMemoryLog(TP, topicId);
        FailedPartitions failed = new FailedPartitions();
        Recording leader = new Recording(endpoints.apply(server.nodeId()));
        try (ReplicaFetcher fetcher = new ReplicaFetcher(0, 7, () -> followerEpoch, leader, ReplicaFetcherConfig.defaults(), failed)) {
            fetcher.addPartitions(Map.of(TP, new InitialFetchState(topicId, server.nodeId(), leaderEpoch, follower)));
            pollUntil(fetcher, failed, () -> follower.logEndOffset() == 12 && follower.highWatermark() == 12, "caught up");
            int caughtUpAt = leader.requests.size();
            // Idle: the next fetches name the session and carry no partitions (they wait replica.fetch.wait.max.ms on the leader).
            pollUntil(fetcher, failed, () -> leader.requests.size() >= caughtUpAt + 2, "two idle fetches");

            FetchRequestData first = leader.requests.get(0);
            assertThat(first.sessionId()).isZero();
            assertThat(first.sessionEpoch()).as("the first fetch opens a session").isZero();
            FetchRequestData idle = leader.requests.get(leader.requests.size() - 1);
            assertThat(idle.sessionId()).as("the leader gave a session").isNotZero();
            assertThat(idle.sessionEpoch()).isPositive();
            assertThat(idle.topics()).as("an idle partition is not sent again").isEmpty();
            assertThat(leader.answers.get(leader.answers.size() - 1).responses()).as("nor answered").isEmpty();

            // New data is still seen through the session: the leader answers the partition with records.
            produce(3);
            pollUntil(fetcher, failed, () -> follower.logEndOffset() == 15 && follower.highWatermark() == 15, "the new records");
            assertThat(fetcher.failedRequests()).isZero();
            for (int i = 1; i < leader.requests.size(); i++) {
                assertThat(leader.requests.get(i).sessionId()).as("request %d stays in the session", i).isEqualTo(idle.sessionId());
                assertThat(leader.requests.get(i).sessionEpoch()).isEqualTo(i);
            }
        }
    }

    private static void pollUntil(ReplicaFetcher fetcher, FailedPartitions failed, java.util.function.BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline || !failed.partitions().isEmpty()) {
                fail("not reached: " + what + "; failed " + failed.partitions() + ", states " + fetcher.partitionStates());
            }
            long now = Time.SYSTEM.hiResClockMs();
            long next = fetcher.poll(now);
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(Math.max(0, Math.min(5, next - now))));
        }
    }

    /** A leader endpoint that keeps every Fetch it sends and the answers it gets (in order; read after they completed). */
    private static final class Recording implements LeaderEndpoint {
        private final LeaderEndpoint delegate;
        final List<FetchRequestData> requests = new java.util.concurrent.CopyOnWriteArrayList<>();
        final List<FetchResponseData> answers = new java.util.concurrent.CopyOnWriteArrayList<>();

        Recording(LeaderEndpoint delegate) {
            this.delegate = delegate;
        }

        @Override
        public int leaderId() {
            return delegate.leaderId();
        }

        @Override
        public java.util.concurrent.CompletableFuture<FetchResponseData> fetch(FetchRequestData request) {
            requests.add(request);
            return delegate.fetch(request).thenApply(answer -> {
                answers.add(answer);
                return answer;
            });
        }

        @Override
        public java.util.concurrent.CompletableFuture<OffsetForLeaderEpochResponseData> fetchEpochEndOffsets(OffsetForLeaderEpochRequestData request) {
            return delegate.fetchEpochEndOffsets(request);
        }

        @Override
        public java.util.concurrent.CompletableFuture<ListOffsetsResponseData> listOffsets(ListOffsetsRequestData request) {
            return delegate.listOffsets(request);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    @Test
    void offsetForLeaderEpochAndListOffsetsAnswerOverTheNetwork() throws Exception {
        createTopicAndProduce(5);
        int leaderEpoch = server.replicaManager().partition(TP).leaderEpoch();
        try (LeaderEndpoint leader = endpoints.apply(server.nodeId())) {
            OffsetForLeaderEpochResponseData epochs = leader.fetchEpochEndOffsets(new OffsetForLeaderEpochRequestData().setReplicaId(7)
                .setTopics(List.of(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(TOPIC)
                    .setPartitions(List.of(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0)
                        .setCurrentLeaderEpoch(leaderEpoch).setLeaderEpoch(leaderEpoch)))))).get(30, TimeUnit.SECONDS);
            OffsetForLeaderEpochResponseData.EpochEndOffset end = epochs.topics().get(0).partitions().get(0);
            assertThat(ErrorCode.forCode(end.errorCode())).isEqualTo(ErrorCode.NONE);
            assertThat(end.leaderEpoch()).isEqualTo(leaderEpoch);
            assertThat(end.endOffset()).isEqualTo(5);

            ListOffsetsResponseData offsets = leader.listOffsets(new ListOffsetsRequestData().setReplicaId(7).setTimeoutMs(30_000)
                .setTopics(List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC)
                    .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                        .setCurrentLeaderEpoch(leaderEpoch).setTimestamp(ReplicaFetcher.EARLIEST_TIMESTAMP)))))).get(30, TimeUnit.SECONDS);
            ListOffsetsResponseData.ListOffsetsPartitionResponse earliest = offsets.topics().get(0).partitions().get(0);
            assertThat(ErrorCode.forCode(earliest.errorCode())).isEqualTo(ErrorCode.NONE);
            assertThat(earliest.offset()).isZero();
        }
        // Closing an endpoint closes its own connection only: the factory's shared event loop serves the next one.
        try (LeaderEndpoint another = endpoints.apply(server.nodeId())) {
            ListOffsetsResponseData offsets = another.listOffsets(new ListOffsetsRequestData().setReplicaId(7).setTimeoutMs(30_000)
                .setTopics(List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC)
                    .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                        .setCurrentLeaderEpoch(leaderEpoch).setTimestamp(ReplicaFetcher.EARLIEST_TIMESTAMP)))))).get(30, TimeUnit.SECONDS);
            assertThat(ErrorCode.forCode(offsets.topics().get(0).partitions().get(0).errorCode())).isEqualTo(ErrorCode.NONE);
        }
    }

    @Test
    void aLeaderMissingFromTheMetadataFailsTheRequest() {
        try (RemoteLeaderEndpoint.Factory noAddresses = new RemoteLeaderEndpoint.Factory(7, ReplicaFetcherConfig.defaults(), id -> Optional.empty(),
                Time.SYSTEM, new Random(7)); LeaderEndpoint leader = noAddresses.apply(5)) {
            assertThat(leader.fetch(new io.strata.protocol.message.FetchRequestData())).isCompletedExceptionally();
        }
    }

    /** Broker 7's epoch, once {@link #registerFollower} registered it. */
    private volatile long followerEpoch = -1;

    private void registerFollower() throws Exception {
        if (followerEpoch >= 0) {
            return;
        }
        io.strata.protocol.message.BrokerRegistrationRequestData request = new io.strata.protocol.message.BrokerRegistrationRequestData()
            .setBrokerId(7).setClusterId(server.clusterId()).setIncarnationId(UUID.randomUUID());
        request.listeners().add(new io.strata.protocol.message.BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("127.0.0.1")
            .setPort(1));
        followerEpoch = server.controller().registerBroker(request).get(30, TimeUnit.SECONDS).brokerEpoch();
        server.controller().brokerHeartbeat(new io.strata.protocol.message.BrokerHeartbeatRequestData().setBrokerId(7).setBrokerEpoch(followerEpoch)
            .setCurrentMetadataOffset(Long.MAX_VALUE)).get(30, TimeUnit.SECONDS);
    }

    private UUID createTopicAndProduce(int records) throws Exception {
        Properties adminProperties = new Properties();
        adminProperties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.boundPort());
        UUID topicId;
        try (Admin admin = Admin.create(adminProperties)) {
            // The fetcher is broker 7: registered and a replica of the partition, or the leader refuses its fetches (Kafka 4).
            registerFollower();
            admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(server.nodeId(), 7))))).all().get(30, TimeUnit.SECONDS);
            org.apache.kafka.common.Uuid id = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC).topicId();
            topicId = new UUID(id.getMostSignificantBits(), id.getLeastSignificantBits());
            admin.close(Duration.ofSeconds(5));
        }
        produce(records);
        return topicId;
    }

    private void produce(int records) throws Exception {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.boundPort());
        properties.put(ProducerConfig.ACKS_CONFIG, "1"); // broker 7 fetches only later: acks=all would wait for it
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, ("record-" + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            }
        }
    }
}
