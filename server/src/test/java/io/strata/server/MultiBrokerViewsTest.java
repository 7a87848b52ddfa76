package io.strata.server;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicImage;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.DeleteRecordsRequestData;
import io.strata.protocol.message.DeleteRecordsResponseData;
import io.strata.protocol.message.DescribeProducersRequestData;
import io.strata.protocol.message.DescribeProducersResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.FindCoordinatorRequestData;
import io.strata.protocol.message.FindCoordinatorResponseData;
import io.strata.protocol.message.HeartbeatRequestData;
import io.strata.protocol.message.HeartbeatResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.message.ProduceResponseData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.common.Time;
import io.strata.coordinator.transaction.TransactionMetadata;
import io.strata.protocol.message.WriteTxnMarkersRequestData;
import io.strata.protocol.message.WriteTxnMarkersResponseData;
import io.strata.server.api.InterBrokerMarkerWriter;
import io.strata.server.api.InternalTopics;
import io.strata.server.api.RemoteMarkerWriter;
import io.strata.server.api.TransactionMarkers;
import io.strata.server.network.client.InterBrokerClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What clients see when the image holds a second broker (2, registered through the controller
 * with a port nobody listens on) and partitions it leads: Metadata lists both brokers and the
 * image's leaders; Produce and Fetch to a partition led by 2 answer NOT_LEADER_OR_FOLLOWER with
 * the KIP-951 leader hints, and ListOffsets, OffsetForLeaderEpoch, DeleteRecords and
 * DescribeProducers NOT_LEADER_OR_FOLLOWER; transaction markers go to each partition's leader; FindCoordinator names the leader of the
 * group's {@code __consumer_offsets} partition, and a group API for a group coordinated by 2 is
 * NOT_COORDINATOR here.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MultiBrokerViewsTest {
    private static final int OFFSETS_PARTITIONS = 4;

    @TempDir
    static Path dataDir;
    private TestBroker broker;
    /** Broker 2's advertised port: nothing listens there, so clients that try it are refused at once and move on. */
    private int broker2Port;

    @BeforeAll
    void start() throws Exception {
        broker = new TestBroker(dataDir, Map.of("offsets.topic.num.partitions", Integer.toString(OFFSETS_PARTITIONS),
            "offsets.topic.replication.factor", "1", "broker.session.timeout.ms", "600000"));
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            broker2Port = probe.getLocalPort();
        }
        broker.registerBroker(2, "127.0.0.1", broker2Port, "rack-b");
        // remote-0 led by 2 (not hosted here), remote-1 led here; moving-0 hosted here with 2 as follower.
        broker.admin().createTopics(List.of(new NewTopic("remote", new java.util.TreeMap<>(Map.of(0, List.of(2), 1, List.of(1)))),
            new NewTopic("moving", Map.of(0, List.of(1, 2))))).all().get(30, TimeUnit.SECONDS);
        // __consumer_offsets before first use: even partitions here, odd ones on broker 2.
        List<CreateTopicsRequestData.CreatableReplicaAssignment> assignments = new ArrayList<>();
        for (int partition = 0; partition < OFFSETS_PARTITIONS; partition++) {
            assignments.add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(partition)
                .setBrokerIds(List.of(partition % 2 == 0 ? 1 : 2)));
        }
        List<io.strata.protocol.message.CreateTopicsResponseData.CreatableTopicResult> created = broker.server().controller().createTopics(List.of(
            new CreateTopicsRequestData.CreatableTopic().setName(InternalTopics.CONSUMER_OFFSETS).setNumPartitions(-1)
                .setReplicationFactor((short) -1).setAssignments(assignments)), false).get(30, TimeUnit.SECONDS);
        assertThat(ErrorCode.forCode(created.get(0).errorCode())).as(created.get(0).errorMessage()).isEqualTo(ErrorCode.NONE);
    }

    @AfterAll
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    private MetadataImage image() {
        return broker.server().metadata().image();
    }

    private static MemoryRecords oneRecord() {
        return new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
            .append(System.currentTimeMillis(), null, "v".getBytes(StandardCharsets.UTF_8)).build();
    }

    private static ProduceRequestData produce(String topic, int partition) {
        return new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000).setTopicData(List.of(new ProduceRequestData.TopicProduceData()
            .setName(topic).setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(oneRecord())))));
    }

    private FetchRequestData fetch(String topic, int partition, int maxWaitMs, boolean byId) {
        FetchRequestData.FetchTopic fetchTopic = new FetchRequestData.FetchTopic().setPartitions(List.of(new FetchRequestData.FetchPartition()
            .setPartition(partition).setFetchOffset(0).setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1)));
        if (byId) {
            fetchTopic.setTopicId(image().topic(topic).id());
        } else {
            fetchTopic.setTopic(topic);
        }
        return new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(1).setMaxBytes(1 << 20).setIsolationLevel((byte) 0)
            .setSessionId(0).setSessionEpoch(-1).setTopics(List.of(fetchTopic));
    }

    /** A group id whose {@code __consumer_offsets} partition is led by {@code leader} (even partitions: 1, odd: 2). */
    private String groupCoordinatedBy(int leader) {
        for (int i = 0; ; i++) {
            String group = "group-" + i;
            if ((broker.server().groupCoordinator().partitionFor(group) % 2 == 0 ? 1 : 2) == leader) {
                return group;
            }
        }
    }

    @Test
    void metadataListsEveryBrokerAndTheLeadersOfTheImage() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            MetadataResponseData response = client.send(ApiMessageType.METADATA, 12, new MetadataRequestData()
                .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("remote"))).setAllowAutoTopicCreation(false));
            assertThat(response.brokers()).extracting(MetadataResponseData.MetadataResponseBroker::nodeId).containsExactly(1, 2);
            MetadataResponseData.MetadataResponseBroker two = response.brokers().get(1);
            assertThat(two.host()).isEqualTo("127.0.0.1");
            assertThat(two.port()).isEqualTo(broker2Port);
            assertThat(two.rack()).isEqualTo("rack-b");
            assertThat(response.controllerId()).isIn(1, 2);
            MetadataResponseData.MetadataResponseTopic topic = response.topics().get(0);
            assertThat(ErrorCode.forCode(topic.errorCode())).isEqualTo(ErrorCode.NONE);
            assertThat(topic.partitions()).hasSize(2);
            for (MetadataResponseData.MetadataResponsePartition partition : topic.partitions()) {
                int leader = partition.partitionIndex() == 0 ? 2 : 1;
                assertThat(ErrorCode.forCode(partition.errorCode())).isEqualTo(ErrorCode.NONE);
                assertThat(partition.leaderId()).isEqualTo(leader);
                assertThat(partition.replicaNodes()).containsExactly(leader);
                assertThat(partition.isrNodes()).containsExactly(leader);
                assertThat(partition.offlineReplicas()).isEmpty();
            }
        }
        // The Java client sees the same cluster.
        assertThat(broker.admin().describeCluster().nodes().get(30, TimeUnit.SECONDS)).extracting(org.apache.kafka.common.Node::id)
            .containsExactlyInAnyOrder(1, 2);
    }

    @Test
    void produceToAPartitionLedByAnotherBrokerNamesTheLeaderAndItsEndpoint() throws Exception {
        int epoch = image().topic("remote").partition(0).leaderEpoch();
        try (RawClient client = new RawClient(broker.port())) {
            ProduceResponseData response = client.send(ApiMessageType.PRODUCE, 12, produce("remote", 0));
            ProduceResponseData.PartitionProduceResponse partition = response.responses().get(0).partitionResponses().get(0);
            assertThat(ErrorCode.forCode(partition.errorCode())).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
            assertThat(partition.currentLeader().leaderId()).isEqualTo(2);
            assertThat(partition.currentLeader().leaderEpoch()).isEqualTo(epoch);
            assertThat(response.nodeEndpoints()).hasSize(1);
            ProduceResponseData.NodeEndpoint endpoint = response.nodeEndpoints().get(0);
            assertThat(endpoint.nodeId()).isEqualTo(2);
            assertThat(endpoint.host()).isEqualTo("127.0.0.1");
            assertThat(endpoint.port()).isEqualTo(broker2Port);
            assertThat(endpoint.rack()).isEqualTo("rack-b");

            ProduceResponseData local = client.send(ApiMessageType.PRODUCE, 12, produce("remote", 1));
            assertThat(ErrorCode.forCode(local.responses().get(0).partitionResponses().get(0).errorCode())).isEqualTo(ErrorCode.NONE);
            assertThat(local.nodeEndpoints()).isEmpty();

            ProduceResponseData missing = client.send(ApiMessageType.PRODUCE, 12, produce("remote", 7));
            assertThat(ErrorCode.forCode(missing.responses().get(0).partitionResponses().get(0).errorCode()))
                .isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        }
    }

    @Test
    void fetchFromAPartitionLedByAnotherBrokerNamesTheLeader() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            FetchResponseData v16 = client.send(ApiMessageType.FETCH, 16, fetch("remote", 0, 0, true));
            FetchResponseData.PartitionData partition = v16.responses().get(0).partitions().get(0);
            assertThat(ErrorCode.forCode(partition.errorCode())).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
            assertThat(partition.currentLeader().leaderId()).isEqualTo(2);
            assertThat(v16.nodeEndpoints()).extracting(FetchResponseData.NodeEndpoint::nodeId).containsExactly(2);
            assertThat(v16.nodeEndpoints().get(0).port()).isEqualTo(broker2Port);

            FetchResponseData v12 = client.send(ApiMessageType.FETCH, 12, fetch("remote", 0, 0, false));
            FetchResponseData.PartitionData byName = v12.responses().get(0).partitions().get(0);
            assertThat(ErrorCode.forCode(byName.errorCode())).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
            assertThat(byName.currentLeader().leaderId()).isEqualTo(2);
        }
    }

    @Test
    void listOffsetsIsAnsweredOnlyByTheLeader() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            ListOffsetsRequestData request = new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                .setName("remote").setPartitions(List.of(
                    new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1L).setCurrentLeaderEpoch(-1),
                    new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(1).setTimestamp(-1L).setCurrentLeaderEpoch(-1),
                    new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(9).setTimestamp(-1L).setCurrentLeaderEpoch(-1)))));
            ListOffsetsResponseData response = client.send(ApiMessageType.LIST_OFFSETS, 7, request);
            assertThat(response.topics().get(0).partitions()).extracting(p -> ErrorCode.forCode(p.errorCode()))
                .containsExactly(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        }
    }

    @Test
    void partitionApisOfTheLeaderAnswerNotLeaderForAPartitionLedElsewhere() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            OffsetForLeaderEpochResponseData epochs = client.send(ApiMessageType.OFFSET_FOR_LEADER_EPOCH, 4, new OffsetForLeaderEpochRequestData()
                .setReplicaId(-1).setTopics(List.of(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("remote").setPartitions(List.of(
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setCurrentLeaderEpoch(-1).setLeaderEpoch(0),
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(1).setCurrentLeaderEpoch(-1).setLeaderEpoch(0))))));
            assertThat(epochs.topics().get(0).partitions()).extracting(p -> ErrorCode.forCode(p.errorCode()))
                .containsExactly(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NONE);

            DeleteRecordsResponseData deleted = client.send(ApiMessageType.DELETE_RECORDS, 2, new DeleteRecordsRequestData().setTimeoutMs(10_000)
                .setTopics(List.of(new DeleteRecordsRequestData.DeleteRecordsTopic().setName("remote").setPartitions(List.of(
                    new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(0))))));
            assertThat(ErrorCode.forCode(deleted.topics().get(0).partitions().get(0).errorCode())).isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);

            DescribeProducersResponseData producers = client.send(ApiMessageType.DESCRIBE_PRODUCERS, 0, new DescribeProducersRequestData()
                .setTopics(List.of(new DescribeProducersRequestData.TopicRequest().setName("remote").setPartitionIndexes(List.of(0, 1, 9)))));
            assertThat(producers.topics().get(0).partitions()).extracting(p -> ErrorCode.forCode(p.errorCode()))
                .containsExactly(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        }
    }

    @Test
    void findCoordinatorNamesTheLeaderOfTheGroupsOffsetsPartition() throws Exception {
        String remoteGroup = groupCoordinatedBy(2);
        String localGroup = groupCoordinatedBy(1);
        try (RawClient client = new RawClient(broker.port())) {
            FindCoordinatorResponseData batched = client.send(ApiMessageType.FIND_COORDINATOR, 4, new FindCoordinatorRequestData()
                .setKeyType((byte) 0).setCoordinatorKeys(List.of(remoteGroup, localGroup)));
            assertThat(batched.coordinators()).extracting(FindCoordinatorResponseData.Coordinator::nodeId).containsExactly(2, 1);
            assertThat(batched.coordinators().get(0).port()).isEqualTo(broker2Port);
            assertThat(batched.coordinators().get(1).port()).isEqualTo(broker.port());
            assertThat(batched.coordinators()).allSatisfy(c -> assertThat(ErrorCode.forCode(c.errorCode())).isEqualTo(ErrorCode.NONE));

            FindCoordinatorResponseData single = client.send(ApiMessageType.FIND_COORDINATOR, 3, new FindCoordinatorRequestData()
                .setKeyType((byte) 0).setKey(remoteGroup));
            assertThat(ErrorCode.forCode(single.errorCode())).isEqualTo(ErrorCode.NONE);
            assertThat(single.nodeId()).isEqualTo(2);
            assertThat(single.host()).isEqualTo("127.0.0.1");

            HeartbeatResponseData heartbeat = client.send(ApiMessageType.HEARTBEAT, 4, new HeartbeatRequestData().setGroupId(remoteGroup)
                .setGenerationId(1).setMemberId("member"));
            assertThat(ErrorCode.forCode(heartbeat.errorCode())).isEqualTo(ErrorCode.NOT_COORDINATOR);
        }
    }

    @Test
    void aParkedFetchIsAnsweredAtOnceWhenLeadershipMovesAway() throws Exception {
        TopicImage moving = image().topic("moving");
        MetadataImage before = image();
        MetadataImage after = before.apply(List.of(new PartitionChangeRecord().setTopicId(moving.id()).setPartitionId(0).setLeader(2)),
            before.offset());
        try (RawClient client = new RawClient(broker.port())) {
            long delayedBefore = broker.server().fetchPurgatory().numDelayed();
            CompletableFuture<FetchResponseData> parked = CompletableFuture.supplyAsync(() -> {
                try {
                    // v10: without KIP-392 client metadata only the leader serves the fetch (Kafka's fetchOnlyLeader), so a leadership
                    // move answers it at once; a v11+ consumer fetch may go on waiting on the follower this node becomes.
                    return client.send(ApiMessageType.FETCH, 10, fetch("moving", 0, 25_000, false));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (broker.server().fetchPurgatory().numDelayed() <= delayedBefore && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(broker.server().fetchPurgatory().numDelayed()).as("the fetch waits for data").isGreaterThan((int) delayedBefore);
            assertThat(parked).isNotDone();

            // The next image makes broker 2 the leader (the controller has no API for that yet; the image is handed over directly).
            broker.server().replicaManager().publish(before, after);
            try {
                FetchResponseData response = parked.get(5, TimeUnit.SECONDS);
                assertThat(ErrorCode.forCode(response.responses().get(0).partitions().get(0).errorCode()))
                    .isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
                ProduceResponseData produced = client.send(ApiMessageType.PRODUCE, 12, produce("moving", 0));
                assertThat(ErrorCode.forCode(produced.responses().get(0).partitionResponses().get(0).errorCode()))
                    .isEqualTo(ErrorCode.NOT_LEADER_OR_FOLLOWER);
            } finally {
                // Leadership comes back in a newer image (an image with an older leader epoch is not applied).
                broker.server().replicaManager().publish(after, after.apply(List.of(new PartitionChangeRecord().setTopicId(moving.id())
                    .setPartitionId(0).setLeader(1)), after.offset()));
            }
        }
    }

    /** A remote writer that records what it is asked to send and answers when the test says. */
    private static final class FakeRemote implements RemoteMarkerWriter {
        record Sent(int brokerId, String host, int port, WriteTxnMarkersRequestData request,
                    CompletableFuture<WriteTxnMarkersResponseData> answer) {
        }

        final List<Sent> sent = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<WriteTxnMarkersResponseData> send(int brokerId, String host, int port, WriteTxnMarkersRequestData request) {
            CompletableFuture<WriteTxnMarkersResponseData> answer = new CompletableFuture<>();
            sent.add(new Sent(brokerId, host, port, request, answer));
            return answer;
        }
    }

    private static WriteTxnMarkersResponseData answer(long producerId, String topic, int partition, ErrorCode error) {
        return new WriteTxnMarkersResponseData().setMarkers(List.of(new WriteTxnMarkersResponseData.WritableTxnMarkerResult()
            .setProducerId(producerId).setTopics(List.of(new WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult().setName(topic)
                .setPartitions(List.of(new WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult().setPartitionIndex(partition)
                    .setErrorCode(error.code())))))));
    }

    @Test
    void markersGoToEachPartitionsLeaderAndCompleteOnlyWhenEveryLeaderAnswered() throws Exception {
        FakeRemote remote = new FakeRemote();
        TransactionMarkers markers = new TransactionMarkers(broker.server().replicaManager(), broker.server().groupCoordinator(), Time.SYSTEM,
            remote, "PLAINTEXT");
        TransactionMetadata.TxnPartition remoteLed = new TransactionMetadata.TxnPartition("remote", 0);
        TransactionMetadata.TxnPartition localLed = new TransactionMetadata.TxnPartition("remote", 1);
        TransactionMetadata.TxnPartition gone = new TransactionMetadata.TxnPartition("no-such-topic", 0);
        CompletableFuture<Map<TransactionMetadata.TxnPartition, ErrorCode>> done = new CompletableFuture<>();
        markers.writeMarkers(7_000L, (short) 3, 5, true, new java.util.LinkedHashSet<>(List.of(remoteLed, localLed, gone)), done::complete);

        assertThat(remote.sent).hasSize(1);
        FakeRemote.Sent sent = remote.sent.get(0);
        assertThat(sent.brokerId()).isEqualTo(2);
        assertThat(sent.host()).isEqualTo("127.0.0.1");
        assertThat(sent.port()).isEqualTo(broker2Port);
        WriteTxnMarkersRequestData.WritableTxnMarker marker = sent.request().markers().get(0);
        assertThat(marker.producerId()).isEqualTo(7_000L);
        assertThat(marker.producerEpoch()).isEqualTo((short) 3);
        assertThat(marker.coordinatorEpoch()).isEqualTo(5);
        assertThat(marker.transactionResult()).isTrue();
        assertThat(marker.topics()).hasSize(1);
        assertThat(marker.topics().get(0).name()).isEqualTo("remote");
        assertThat(marker.topics().get(0).partitionIndexes()).containsExactly(0);
        assertThat(done).as("the remote leader has not answered").isNotDone();

        sent.answer().complete(answer(7_000L, "remote", 0, ErrorCode.NONE));
        assertThat(done.get(10, TimeUnit.SECONDS)).containsExactly(Map.entry(remoteLed, ErrorCode.NONE), Map.entry(localLed, ErrorCode.NONE),
            Map.entry(gone, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));

        // A leader that cannot be reached, or that does not know the partition yet, is retried (by the coordinator).
        CompletableFuture<Map<TransactionMetadata.TxnPartition, ErrorCode>> unreachable = new CompletableFuture<>();
        markers.writeMarkers(7_001L, (short) 0, 5, false, Set.of(remoteLed), unreachable::complete);
        remote.sent.get(1).answer().completeExceptionally(new java.io.IOException("connection refused"));
        assertThat(unreachable.get(10, TimeUnit.SECONDS)).containsExactly(Map.entry(remoteLed, ErrorCode.NETWORK_EXCEPTION));
        CompletableFuture<Map<TransactionMetadata.TxnPartition, ErrorCode>> lagging = new CompletableFuture<>();
        markers.writeMarkers(7_002L, (short) 0, 5, false, Set.of(remoteLed), lagging::complete);
        remote.sent.get(2).answer().complete(answer(7_002L, "remote", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        assertThat(lagging.get(10, TimeUnit.SECONDS)).containsExactly(Map.entry(remoteLed, ErrorCode.NOT_LEADER_OR_FOLLOWER));
    }

    @Test
    void theInterBrokerMarkerWriterSpeaksWriteTxnMarkersToARealBroker() throws Exception {
        // Broker 1 is the "remote" leader here: the writer reaches it over the network like any other broker.
        try (InterBrokerClient client = new InterBrokerClient(InterBrokerClient.Settings.defaults("markers-test"), 1, Time.SYSTEM,
                new java.util.Random(42))) {
            InterBrokerMarkerWriter writer = new InterBrokerMarkerWriter(client);
            WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData().setMarkers(List.of(new WriteTxnMarkersRequestData.WritableTxnMarker()
                .setProducerId(8_000L).setProducerEpoch((short) 0).setTransactionResult(false).setCoordinatorEpoch(0)
                .setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName("remote").setPartitionIndexes(List.of(0, 1))))));
            WriteTxnMarkersResponseData response = writer.send(1, "127.0.0.1", broker.port(), request).get(30, TimeUnit.SECONDS);
            assertThat(response.markers().get(0).topics().get(0).partitions()).extracting(p -> ErrorCode.forCode(p.errorCode()))
                .containsExactly(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NONE);
        }
    }
}
