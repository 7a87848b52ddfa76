package io.strata.it;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DescribeGroupsRequestData;
import io.strata.protocol.message.DescribeGroupsResponseData;
import io.strata.protocol.message.FindCoordinatorRequestData;
import io.strata.protocol.message.FindCoordinatorResponseData;
import io.strata.protocol.message.HeartbeatRequestData;
import io.strata.protocol.message.HeartbeatResponseData;
import io.strata.protocol.message.JoinGroupRequestData;
import io.strata.protocol.message.JoinGroupResponseData;
import io.strata.protocol.message.OffsetCommitRequestData;
import io.strata.protocol.message.OffsetCommitResponseData;
import io.strata.protocol.message.OffsetFetchRequestData;
import io.strata.protocol.message.OffsetFetchResponseData;
import io.strata.protocol.message.SyncGroupRequestData;
import io.strata.protocol.message.SyncGroupResponseData;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Broken and hostile group clients on raw sockets (JoinGroup, SyncGroup, Heartbeat and
 * OffsetCommit out of order, with bad values, or by the thousand): each gets Kafka's error
 * code, the connection stays usable, and a real Kafka client can still use groups afterwards.
 */
class GroupBadInputTest {
    private static final short JOIN_GROUP_VERSION = 9;
    private static final short SYNC_GROUP_VERSION = 5;
    private static final short HEARTBEAT_VERSION = 4;
    private static final short OFFSET_COMMIT_VERSION = 9;
    /** A safety net so a broken test fails instead of hanging; passing tests never wait for it. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path dataDir;

    private StrataTestServer server;
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private void start(Map<String, String> overrides) throws Exception {
        Map<String, String> config = new HashMap<>(Map.of(
            "group.initial.rebalance.delay.ms", "0",
            "group.min.session.timeout.ms", "1000",
            "offsets.topic.num.partitions", "3"));
        config.putAll(overrides);
        server = new StrataTestServer(dataDir, config);
    }

    /** One raw connection; requests on it are answered in order, one at a time (as Kafka serves a connection). */
    private final class Connection {
        private final Socket socket;
        private int nextCorrelationId;

        Connection() throws IOException {
            socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
            socket.setSoTimeout((int) DEADLINE.toMillis());
            sockets.add(socket);
        }

        /** Writes a request without waiting; returns its correlation id. */
        int write(ApiMessageType api, short version, ApiMessage request) throws IOException {
            int correlationId = nextCorrelationId++;
            ByteBuffer frame = Frames.encodeRequest(api, version, correlationId, "bad-group-client", request);
            OutputStream out = socket.getOutputStream();
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            return correlationId;
        }

        @SuppressWarnings("unchecked")
        <T extends ApiMessage> T read(ApiMessageType api, short version, int correlationId) throws IOException {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            return (T) Frames.parseResponse(api, version, ByteBuffer.wrap(frame), correlationId);
        }

        <T extends ApiMessage> T send(ApiMessageType api, short version, ApiMessage request) throws IOException {
            return read(api, version, write(api, version, request));
        }
    }

    private static JoinGroupRequestData join(String group, String memberId, int sessionTimeoutMs, byte[] metadata) {
        JoinGroupRequestData request = new JoinGroupRequestData().setGroupId(group).setMemberId(memberId).setSessionTimeoutMs(sessionTimeoutMs)
            .setRebalanceTimeoutMs((int) DEADLINE.toMillis()).setProtocolType("consumer").setReason("bad-input test");
        request.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(metadata));
        return request;
    }

    private static byte[] smallMetadata() {
        return new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}; // subscription v0: no topics, null user data
    }

    /** JoinGroup twice (MEMBER_ID_REQUIRED, then with the id) and SyncGroup as the only member: returns {memberId, generation}. */
    private static String[] joinAndSync(Connection connection, String group) throws IOException {
        JoinGroupResponseData first = connection.send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, join(group, "", 30_000, smallMetadata()));
        assertThat(ErrorCode.forCode(first.errorCode())).isEqualTo(ErrorCode.MEMBER_ID_REQUIRED);
        JoinGroupResponseData joined = connection.send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION,
            join(group, first.memberId(), 30_000, smallMetadata()));
        assertThat(ErrorCode.forCode(joined.errorCode())).isEqualTo(ErrorCode.NONE);
        SyncGroupResponseData synced = connection.send(ApiMessageType.SYNC_GROUP, SYNC_GROUP_VERSION, sync(group, joined.memberId(),
            joined.generationId(), new byte[0]));
        assertThat(ErrorCode.forCode(synced.errorCode())).isEqualTo(ErrorCode.NONE);
        return new String[] {joined.memberId(), Integer.toString(joined.generationId())};
    }

    private static SyncGroupRequestData sync(String group, String memberId, int generation, byte[] assignment) {
        SyncGroupRequestData request = new SyncGroupRequestData().setGroupId(group).setMemberId(memberId).setGenerationId(generation)
            .setProtocolType("consumer").setProtocolName("range");
        request.assignments().add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(memberId).setAssignment(assignment));
        return request;
    }

    private static OffsetCommitRequestData commit(String group, String memberId, int generation, String topic, long offset) {
        OffsetCommitRequestData request = new OffsetCommitRequestData().setGroupId(group).setMemberId(memberId)
            .setGenerationIdOrMemberEpoch(generation);
        OffsetCommitRequestData.OffsetCommitRequestTopic requestTopic = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(topic);
        requestTopic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
            .setCommittedOffset(offset).setCommittedMetadata(""));
        request.topics().add(requestTopic);
        return request;
    }

    private static ErrorCode commitError(Connection connection, short version, OffsetCommitRequestData request) throws IOException {
        OffsetCommitResponseData response = connection.send(ApiMessageType.OFFSET_COMMIT, version, request);
        assertThat(response.topics()).hasSize(1);
        assertThat(response.topics().get(0).partitions()).hasSize(1);
        return ErrorCode.forCode(response.topics().get(0).partitions().get(0).errorCode());
    }

    /** Finds the coordinator (creating __consumer_offsets) and waits until it answers. */
    private static void awaitCoordinator(Connection connection, String group) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            FindCoordinatorRequestData request = new FindCoordinatorRequestData().setKeyType((byte) 0);
            request.coordinatorKeys().add(group);
            FindCoordinatorResponseData response = connection.send(ApiMessageType.FIND_COORDINATOR, (short) 4, request);
            ErrorCode error = ErrorCode.forCode(response.coordinators().get(0).errorCode());
            if (error == ErrorCode.NONE) {
                DescribeGroupsResponseData described = connection.send(ApiMessageType.DESCRIBE_GROUPS, (short) 5,
                    new DescribeGroupsRequestData().setGroups(new ArrayList<>(List.of(group))));
                if (described.groups().get(0).errorCode() == ErrorCode.NONE.code()) {
                    return;
                }
            }
            assertThat(System.nanoTime()).as("coordinator of %s ready in time", group).isLessThan(deadline);
            Thread.sleep(50); // polling interval while __consumer_offsets is created and loaded
        }
    }

    @Test
    void offsetCommitsFromUnknownMembersAndStaleGenerationsAreRefused() throws Exception {
        start(Map.of());
        Connection connection = new Connection();
        awaitCoordinator(connection, "committers");
        String[] member = joinAndSync(connection, "committers");
        String memberId = member[0];
        int generation = Integer.parseInt(member[1]);

        assertThat(commitError(connection, OFFSET_COMMIT_VERSION, commit("committers", "not-a-member", generation, "t", 5)))
            .isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
        assertThat(commitError(connection, OFFSET_COMMIT_VERSION, commit("committers", memberId, generation + 7, "t", 6)))
            .isEqualTo(ErrorCode.ILLEGAL_GENERATION);
        // An admin-style commit (generation -1, no member) is refused while the group has members.
        assertThat(commitError(connection, OFFSET_COMMIT_VERSION, commit("committers", "", -1, "t", 7)))
            .isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
        assertThat(commitError(connection, OFFSET_COMMIT_VERSION, commit("committers", memberId, generation, "t", 8)))
            .isEqualTo(ErrorCode.NONE);
        // A generation for a group that does not exist: GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before (Kafka's rule).
        assertThat(commitError(connection, OFFSET_COMMIT_VERSION, commit("no-such-group", "m", 3, "t", 1)))
            .isEqualTo(ErrorCode.GROUP_ID_NOT_FOUND);
        assertThat(commitError(connection, (short) 8, commit("no-such-group", "m", 3, "t", 1)))
            .isEqualTo(ErrorCode.ILLEGAL_GENERATION);

        OffsetFetchRequestData fetch = new OffsetFetchRequestData();
        fetch.groups().add(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("committers").setTopics(null));
        OffsetFetchResponseData fetched = connection.send(ApiMessageType.OFFSET_FETCH, (short) 9, fetch);
        assertThat(fetched.groups().get(0).topics()).hasSize(1);
        assertThat(fetched.groups().get(0).topics().get(0).partitions().get(0).committedOffset()).isEqualTo(8);
        assertRealConsumerWorks("after-commits");
    }

    @Test
    void syncGroupBeforeJoinGroupAndHeartbeatsForUnknownGroupsAreUnknownMembers() throws Exception {
        start(Map.of());
        Connection connection = new Connection();
        awaitCoordinator(connection, "never-joined");

        SyncGroupResponseData neverJoined = connection.send(ApiMessageType.SYNC_GROUP, SYNC_GROUP_VERSION, sync("never-joined", "m-1", 1, new byte[0]));
        assertThat(ErrorCode.forCode(neverJoined.errorCode())).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);

        // A member id handed out by MEMBER_ID_REQUIRED is not a member until it joins with it.
        JoinGroupResponseData handedOut = connection.send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, join("half-joined", "", 30_000, smallMetadata()));
        assertThat(ErrorCode.forCode(handedOut.errorCode())).isEqualTo(ErrorCode.MEMBER_ID_REQUIRED);
        SyncGroupResponseData pending = connection.send(ApiMessageType.SYNC_GROUP, SYNC_GROUP_VERSION, sync("half-joined", handedOut.memberId(), 0,
            new byte[0]));
        assertThat(ErrorCode.forCode(pending.errorCode())).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);

        for (String group : List.of("nobody-here", "half-joined")) {
            HeartbeatResponseData heartbeat = connection.send(ApiMessageType.HEARTBEAT, HEARTBEAT_VERSION,
                new HeartbeatRequestData().setGroupId(group).setMemberId("ghost").setGenerationId(1));
            assertThat(ErrorCode.forCode(heartbeat.errorCode())).as(group).isEqualTo(ErrorCode.UNKNOWN_MEMBER_ID);
        }
        // The connection is still usable: a proper join on it works.
        joinAndSync(connection, "proper");
        assertRealConsumerWorks("after-unknown-members");
    }

    @Test
    void joinGroupWithAnInvalidSessionTimeoutIsRefused() throws Exception {
        start(Map.of("group.max.session.timeout.ms", "60000"));
        Connection connection = new Connection();
        awaitCoordinator(connection, "timeouts");

        for (int sessionTimeoutMs : List.of(0, 999, 60_001, Integer.MAX_VALUE)) {
            JoinGroupResponseData response = connection.send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION,
                join("timeouts", "", sessionTimeoutMs, smallMetadata()));
            assertThat(ErrorCode.forCode(response.errorCode())).as("session timeout %d", sessionTimeoutMs).isEqualTo(ErrorCode.INVALID_SESSION_TIMEOUT);
            assertThat(response.generationId()).isEqualTo(-1);
        }
        joinAndSync(connection, "timeouts");
    }

    @Test
    void aJoinGroupWithMegabytesOfMetadataIsServedAndTheGroupRecoversFromTheFailedStore() throws Exception {
        start(Map.of());
        Connection connection = new Connection();
        awaitCoordinator(connection, "heavy");
        byte[] heavy = new byte[3 * 1024 * 1024]; // far below socket.request.max.bytes, above what one __consumer_offsets record may hold
        Arrays.fill(heavy, (byte) 7);

        JoinGroupResponseData first = connection.send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, join("heavy", "", 30_000, heavy));
        assertThat(ErrorCode.forCode(first.errorCode())).isEqualTo(ErrorCode.MEMBER_ID_REQUIRED);
        JoinGroupResponseData joined = connection.send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, join("heavy", first.memberId(), 30_000, heavy));
        assertThat(ErrorCode.forCode(joined.errorCode())).isEqualTo(ErrorCode.NONE);
        assertThat(joined.members()).hasSize(1);
        assertThat(joined.members().get(0).metadata()).isEqualTo(heavy);

        // The leader's SyncGroup stores the group, metadata included; the record is too large for the log, and
        // Kafka answers that store failure with UNKNOWN_SERVER_ERROR and a new rebalance.
        SyncGroupResponseData synced = connection.send(ApiMessageType.SYNC_GROUP, SYNC_GROUP_VERSION, sync("heavy", joined.memberId(),
            joined.generationId(), new byte[0]));
        assertThat(ErrorCode.forCode(synced.errorCode())).isEqualTo(ErrorCode.UNKNOWN_SERVER_ERROR);

        // The member rejoins with metadata that fits, and the group works again.
        JoinGroupResponseData rejoined = connection.send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION,
            join("heavy", joined.memberId(), 30_000, smallMetadata()));
        assertThat(ErrorCode.forCode(rejoined.errorCode())).isEqualTo(ErrorCode.NONE);
        assertThat(rejoined.generationId()).isGreaterThan(joined.generationId());
        SyncGroupResponseData resynced = connection.send(ApiMessageType.SYNC_GROUP, SYNC_GROUP_VERSION, sync("heavy", rejoined.memberId(),
            rejoined.generationId(), new byte[0]));
        assertThat(ErrorCode.forCode(resynced.errorCode())).isEqualTo(ErrorCode.NONE);
        HeartbeatResponseData heartbeat = connection.send(ApiMessageType.HEARTBEAT, HEARTBEAT_VERSION,
            new HeartbeatRequestData().setGroupId("heavy").setMemberId(rejoined.memberId()).setGenerationId(rejoined.generationId()));
        assertThat(ErrorCode.forCode(heartbeat.errorCode())).isEqualTo(ErrorCode.NONE);
        assertRealConsumerWorks("after-heavy");
    }

    @Test
    void aThousandMembersJoiningAtOnceGetMemberIdsAndTheGroupStaysUsable() throws Exception {
        start(Map.of());
        List<JoinGroupResponseData> answers = joinAtOnce("crowd", 1200, 4, 1000);

        Set<String> memberIds = new HashSet<>();
        for (JoinGroupResponseData answer : answers) {
            assertThat(ErrorCode.forCode(answer.errorCode())).isEqualTo(ErrorCode.MEMBER_ID_REQUIRED);
            memberIds.add(answer.memberId());
        }
        assertThat(memberIds).hasSize(1200);
        // The handed-out ids expire with their one-second session timeout; a real consumer then joins the same group
        // alone (were the 1,200 pending ids kept, its rebalance would wait for them).
        assertRealConsumerWorks("crowd-topic", "crowd");
    }

    @Test
    void groupMaxSizeBoundsAGroupOfAThousandJoiners() throws Exception {
        start(Map.of("group.max.size", "50"));
        List<JoinGroupResponseData> answers = joinAtOnce("capped", 1200, 4, 30_000);

        // Strata counts handed-out member ids against group.max.size, so the crowd is refused before it can rejoin and the
        // ids it holds stay bounded. (Kafka hands ids out freely while the group is Empty and refuses the rejoins beyond
        // the limit instead; either way the group never exceeds group.max.size and the refused get GROUP_MAX_SIZE_REACHED.)
        List<String> admitted = answers.stream().filter(answer -> answer.errorCode() == ErrorCode.MEMBER_ID_REQUIRED.code())
            .map(JoinGroupResponseData::memberId).toList();
        long refused = answers.stream().filter(answer -> answer.errorCode() == ErrorCode.GROUP_MAX_SIZE_REACHED.code()).count();
        assertThat(admitted).hasSize(50).doesNotHaveDuplicates();
        assertThat(refused).isEqualTo(1150);

        // The 50 admitted members join, each on its own connection (a JoinGroup waits for the whole group).
        List<Connection> members = new ArrayList<>();
        List<Integer> correlationIds = new ArrayList<>();
        for (String memberId : admitted) {
            Connection connection = new Connection();
            members.add(connection);
            correlationIds.add(connection.write(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, join("capped", memberId, 30_000, smallMetadata())));
        }
        Set<Integer> generations = new HashSet<>();
        int leaders = 0;
        for (int i = 0; i < members.size(); i++) {
            JoinGroupResponseData joined = members.get(i).read(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, correlationIds.get(i));
            assertThat(ErrorCode.forCode(joined.errorCode())).isEqualTo(ErrorCode.NONE);
            generations.add(joined.generationId());
            if (joined.leader().equals(joined.memberId())) {
                leaders++;
                assertThat(joined.members()).hasSize(50);
            }
        }
        assertThat(generations).hasSize(1);
        assertThat(leaders).isEqualTo(1);

        JoinGroupResponseData oneTooMany = new Connection().send(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION,
            join("capped", "", 30_000, smallMetadata()));
        assertThat(ErrorCode.forCode(oneTooMany.errorCode())).isEqualTo(ErrorCode.GROUP_MAX_SIZE_REACHED);
        assertRealConsumerWorks("after-capped");
    }

    /**
     * {@code count} JoinGroup v9 requests without member id for one group, pipelined over
     * {@code connections} connections in bursts; returns the answers.
     */
    private List<JoinGroupResponseData> joinAtOnce(String group, int count, int connections, int sessionTimeoutMs) throws Exception {
        List<Connection> pool = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            pool.add(new Connection());
        }
        awaitCoordinator(pool.get(0), group);
        int burst = 50;
        List<JoinGroupResponseData> answers = new ArrayList<>();
        int remaining = count;
        while (remaining > 0) {
            List<List<Integer>> inFlight = new ArrayList<>();
            for (Connection connection : pool) {
                List<Integer> correlationIds = new ArrayList<>();
                for (int i = 0; i < burst && remaining > 0; i++, remaining--) {
                    correlationIds.add(connection.write(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, join(group, "", sessionTimeoutMs, smallMetadata())));
                }
                inFlight.add(correlationIds);
            }
            for (int c = 0; c < pool.size(); c++) {
                for (int correlationId : inFlight.get(c)) {
                    answers.add(pool.get(c).read(ApiMessageType.JOIN_GROUP, JOIN_GROUP_VERSION, correlationId));
                }
            }
        }
        assertThat(answers).hasSize(count);
        return answers;
    }

    private void assertRealConsumerWorks(String topic) throws Exception {
        assertRealConsumerWorks(topic, topic + "-group");
    }

    /** Kafka's producer and a subscribed consumer in {@code group} round-trip records: the server and its group coordinator are healthy. */
    private void assertRealConsumerWorks(String topic, String group) throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        try (Admin admin = Admin.create(properties)) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties producerProperties = new Properties();
        producerProperties.putAll(properties);
        producerProperties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProperties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties)) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(topic, i % 2, "k" + i, "v" + i));
            }
            producer.flush();
        }
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.subscribe(List.of(topic));
            Set<String> values = new HashSet<>();
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (values.size() < 20 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    values.add(record.value());
                }
            }
            assertThat(values).hasSize(20);
            assertThat(consumer.assignment()).hasSize(2);
            consumer.commitSync();
        }
    }
}
