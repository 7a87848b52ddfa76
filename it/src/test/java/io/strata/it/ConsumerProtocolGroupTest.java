package io.strata.it;

import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.DescribeGroupsRequestData;
import io.strata.protocol.message.DescribeGroupsResponseData;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.GroupSubscribedToTopicException;
import org.apache.kafka.common.errors.InconsistentGroupProtocolException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * kafka-clients 4.4 consumers with {@code group.protocol=consumer} (KIP-848) against a real
 * Strata node: partitions never owned by two members at once (checked from the rebalance
 * listeners of every member, one of them in a child JVM that is killed outright), no record
 * lost or processed twice, regex subscriptions resolved by the broker, groups and committed
 * offsets surviving a restart, and the admin view of consumer groups.
 */
class ConsumerProtocolGroupTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    Path dataDir;

    private StrataTestServer server;
    /** Who owns each partition, as the members' rebalance listeners report it. */
    private final Map<TopicPartition, String> owners = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    /** Record value → the member that processed it. */
    private final Map<Integer, String> processed = new ConcurrentHashMap<>();
    private final List<String> duplicates = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir, Map.of("offsets.topic.num.partitions", "5",
            "group.consumer.heartbeat.interval.ms", "500", "group.consumer.min.heartbeat.interval.ms", "100",
            "group.consumer.session.timeout.ms", "8000", "group.consumer.min.session.timeout.ms", "1000"));
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            try {
                cleanup.get(i).close();
            } catch (Exception e) {
                // best effort: the test already failed or passed
            }
        }
        server.close();
    }

    private Properties base() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        return properties;
    }

    private Admin admin() {
        Admin admin = Admin.create(base());
        cleanup.add(admin);
        return admin;
    }

    private Properties consumerProperties(String group, String name) {
        Properties properties = base();
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20");
        return properties;
    }

    private void produce(String topic, int from, int to) throws Exception {
        Properties properties = base();
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, Integer.toString(i)));
            }
            producer.flush();
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(20);
        }
    }

    private void recordProcessed(int value, String member) {
        String previous = processed.putIfAbsent(value, member);
        if (previous != null) {
            duplicates.add(value + " by " + previous + " and " + member);
        }
    }

    private void claim(Collection<TopicPartition> partitions, String member) {
        for (TopicPartition partition : partitions) {
            String previous = owners.putIfAbsent(partition, member);
            if (previous != null && !previous.equals(member)) {
                violations.add(partition + " assigned to " + member + " while " + previous + " owns it");
            }
        }
    }

    private void release(Collection<TopicPartition> partitions, String member) {
        for (TopicPartition partition : partitions) {
            owners.remove(partition, member);
        }
    }

    private Set<TopicPartition> ownedBy(String member) {
        Set<TopicPartition> owned = new HashSet<>();
        owners.forEach((partition, owner) -> {
            if (owner.equals(member)) {
                owned.add(partition);
            }
        });
        return owned;
    }

    /** A member in this JVM: poll, process (record), commitSync, on its own thread; tracks ownership through its listener. */
    private final class Member implements AutoCloseable {
        final String name;
        private final Thread thread;
        private volatile boolean stopping;
        private volatile Throwable failure;

        Member(String group, String name, String topic) {
            this.name = name;
            this.thread = new Thread(() -> run(group, topic), name);
            thread.start();
            cleanup.add(this);
        }

        private void run(String group, String topic) {
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties(group, name))) {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        release(partitions, name);
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        claim(partitions, name);
                    }

                    @Override
                    public void onPartitionsLost(Collection<TopicPartition> partitions) {
                        violations.add(name + " lost " + partitions + " (it was fenced)");
                        release(partitions, name);
                    }
                });
                while (!stopping) {
                    boolean any = false;
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                        recordProcessed(Integer.parseInt(record.value()), name);
                        any = true;
                    }
                    if (any) {
                        consumer.commitSync();
                    }
                }
            } catch (Throwable e) {
                failure = e;
            }
        }

        /** Leaves the group properly (close: revoke, leave heartbeat) and waits for it. */
        @Override
        public void close() throws Exception {
            stopping = true;
            thread.join(TIMEOUT.toMillis());
            assertThat(thread.isAlive()).as("%s stopped", name).isFalse();
            assertThat(failure).as("%s failed", name).isNull();
        }
    }

    /** A member in a child JVM ({@link ConsumerProcessMain}) that the test can kill without a leave. */
    private final class ChildMember implements AutoCloseable {
        final String name;
        private final Process process;
        private final OutputStream stdin;
        private volatile boolean paused;

        ChildMember(String group, String name, String topic) throws Exception {
            this.name = name;
            ProcessBuilder builder = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx192m",
                "-cp", System.getProperty("java.class.path"), ConsumerProcessMain.class.getName(), server.bootstrap(), group, topic, name);
            builder.redirectError(ProcessBuilder.Redirect.DISCARD);
            process = builder.start();
            stdin = process.getOutputStream();
            Thread reader = new Thread(this::readEvents, name + "-events");
            reader.setDaemon(true);
            reader.start();
            cleanup.add(this);
        }

        private void readEvents() {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    handle(line);
                }
            } catch (Exception e) {
                // the child was killed
            }
        }

        private void handle(String line) throws Exception {
            int space = line.indexOf(' ');
            String event = space < 0 ? line : line.substring(0, space);
            String argument = space < 0 ? "" : line.substring(space + 1);
            switch (event) {
                case "ASSIGNED" -> {
                    claim(partitions(argument), name);
                    ack();
                }
                case "REVOKED" -> {
                    release(partitions(argument), name);
                    ack();
                }
                case "LOST" -> {
                    violations.add(name + " lost " + argument + " (it was fenced)");
                    release(partitions(argument), name);
                    ack();
                }
                case "RECORDS" -> {
                    for (String value : argument.split(",")) {
                        recordProcessed(Integer.parseInt(value), name);
                    }
                }
                case "COMMIT_FAILED" -> violations.add(name + " could not commit: " + argument);
                case "PAUSED" -> paused = true;
                default -> { } // client log output
            }
        }

        private List<TopicPartition> partitions(String list) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String partition : list.split(",")) {
                int dash = partition.lastIndexOf('-');
                partitions.add(new TopicPartition(partition.substring(0, dash), Integer.parseInt(partition.substring(dash + 1))));
            }
            return partitions;
        }

        private synchronized void ack() throws Exception {
            stdin.write("ACK\n".getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        /** Stops the member between batches (everything it processed is committed) and kills its JVM: no leave, no more heartbeats. */
        void kill() throws Exception {
            synchronized (this) {
                stdin.write("PAUSE\n".getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            }
            await(name + " paused", () -> paused);
            process.destroyForcibly();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            // A dead process owns nothing; the coordinator hands its partitions on only after its session expires.
            release(ownedBy(name), name);
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    private static Set<Integer> range(int from, int to) {
        Set<Integer> values = new HashSet<>();
        for (int i = from; i < to; i++) {
            values.add(i);
        }
        return values;
    }

    private ConsumerGroupDescription describe(Admin admin, String group) throws Exception {
        return admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get(30, TimeUnit.SECONDS);
    }

    @Test
    void membersJoinLeaveAndCrashWithoutOverlappingOwnershipLossOrDuplicates() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("orders", 12, (short) 1))).all().get(30, TimeUnit.SECONDS);
        produce("orders", 0, 3000);

        // Three members share the twelve partitions, four each.
        Member first = new Member("orders-group", "first", "orders");
        Member second = new Member("orders-group", "second", "orders");
        Member third = new Member("orders-group", "third", "orders");
        await("three members own four partitions each", () -> owners.size() == 12
            && ownedBy("first").size() == 4 && ownedBy("second").size() == 4 && ownedBy("third").size() == 4);
        await("the group is stable", () -> {
            try {
                return describe(admin, "orders-group").groupState() == GroupState.STABLE;
            } catch (Exception e) {
                return false;
            }
        });
        ConsumerGroupDescription description = describe(admin, "orders-group");
        assertThat(description.type()).isEqualTo(GroupType.CONSUMER);
        assertThat(description.partitionAssignor()).isEqualTo("uniform");
        assertThat(description.members()).hasSize(3);
        for (MemberDescription member : description.members()) {
            assertThat(member.assignment().topicPartitions()).hasSize(4);
            assertThat(member.targetAssignment()).isPresent();
            assertThat(member.memberEpoch()).hasValue(description.groupEpoch().orElseThrow());
        }
        Collection<GroupListing> listed = admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get(30, TimeUnit.SECONDS);
        assertThat(listed).anySatisfy(listing -> {
            assertThat(listing.groupId()).isEqualTo("orders-group");
            assertThat(listing.type()).hasValue(GroupType.CONSUMER);
            assertThat(listing.protocol()).isEqualTo("consumer");
        });

        // A fourth member, in its own JVM, joins: partitions move only after their owners revoked them.
        ChildMember child = new ChildMember("orders-group", "child", "orders");
        await("the child member owns three partitions", () -> ownedBy("child").size() == 3 && owners.size() == 12);
        produce("orders", 3000, 6000);

        // A member leaves properly; its partitions go to the others.
        second.close();
        await("second's partitions are taken over", () -> ownedBy("second").isEmpty() && owners.size() == 12);

        // The child dies without leaving: after its session expires, the survivors take its partitions over.
        await("the child processed something", () -> processed.containsValue("child"));
        child.kill();
        await("the dead member's partitions are taken over", () -> owners.size() == 12
            && ownedBy("first").size() == 6 && ownedBy("third").size() == 6);
        produce("orders", 6000, 9000);

        await("every record is processed", () -> processed.size() == 9000);
        first.close();
        third.close();
        assertThat(violations).isEmpty();
        assertThat(duplicates).isEmpty();
        assertThat(processed.keySet()).isEqualTo(range(0, 9000));
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("orders-group").partitionsToOffsetAndMetadata()
            .get(30, TimeUnit.SECONDS);
        assertThat(committed).hasSize(12);
        assertThat(committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(9000);
        await("the group is empty", () -> {
            try {
                return describe(admin, "orders-group").groupState() == GroupState.EMPTY;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void aRegexSubscriptionResolvedByTheBrokerPicksUpANewTopic() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("metrics-a", 2, (short) 1), new NewTopic("other", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        produce("metrics-a", 0, 100);
        produce("other", 1000, 1100);
        Set<String> topicsSeen = ConcurrentHashMap.newKeySet();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties("regex-group", "regex"))) {
            consumer.subscribe(new SubscriptionPattern("metrics-.*"));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (processed.size() < 100 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    recordProcessed(Integer.parseInt(record.value()), "regex");
                    topicsSeen.add(record.topic());
                }
                consumer.commitSync();
            }
            admin.createTopics(List.of(new NewTopic("metrics-b", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            produce("metrics-b", 100, 400);
            while (processed.size() < 400 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    recordProcessed(Integer.parseInt(record.value()), "regex");
                    topicsSeen.add(record.topic());
                }
                consumer.commitSync();
            }
            assertThat(consumer.assignment()).hasSize(5);
        }
        assertThat(topicsSeen).containsExactlyInAnyOrder("metrics-a", "metrics-b");
        assertThat(processed.keySet()).isEqualTo(range(0, 400));
        assertThat(duplicates).isEmpty();
        MemberDescription[] noMembers = describe(admin, "regex-group").members().toArray(new MemberDescription[0]);
        assertThat(noMembers).isEmpty();
    }

    @Test
    void theGroupItsEpochsAndCommittedOffsetsSurviveABrokerRestart() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("events", 6, (short) 1))).all().get(30, TimeUnit.SECONDS);
        produce("events", 0, 1000);
        Member one = new Member("restart-group", "one", "events");
        Member two = new Member("restart-group", "two", "events");
        await("both members own three partitions", () -> ownedBy("one").size() == 3 && ownedBy("two").size() == 3);
        await("the first records are processed", () -> processed.size() == 1000);
        await("the group is stable", () -> {
            try {
                return describe(admin, "restart-group").groupState() == GroupState.STABLE;
            } catch (Exception e) {
                return false;
            }
        });
        ConsumerGroupDescription before = describe(admin, "restart-group");
        Map<TopicPartition, OffsetAndMetadata> committedBefore = admin.listConsumerGroupOffsets("restart-group")
            .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        assertThat(committedBefore.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(1000);

        server.restart();

        Admin after = admin();
        Map<TopicPartition, OffsetAndMetadata> committedAfter = after.listConsumerGroupOffsets("restart-group")
            .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        assertThat(committedAfter).isEqualTo(committedBefore);
        // The members carry on with their member ids and epochs: no rebalance.
        ConsumerGroupDescription restarted = describe(after, "restart-group");
        assertThat(restarted.groupEpoch()).isEqualTo(before.groupEpoch());
        Map<String, Integer> epochsBefore = new HashMap<>();
        before.members().forEach(member -> epochsBefore.put(member.consumerId(), member.memberEpoch().orElseThrow()));
        Map<String, Integer> epochsAfter = new HashMap<>();
        restarted.members().forEach(member -> epochsAfter.put(member.consumerId(), member.memberEpoch().orElseThrow()));
        assertThat(epochsAfter).isEqualTo(epochsBefore);

        produce("events", 1000, 2000);
        await("the records after the restart are processed", () -> processed.size() == 2000);
        assertThat(describe(after, "restart-group").groupEpoch()).isEqualTo(before.groupEpoch());
        one.close();
        two.close();
        assertThat(violations).isEmpty();
        assertThat(duplicates).isEmpty();
        assertThat(processed.keySet()).isEqualTo(range(0, 2000));
    }

    @Test
    void aGroupIdCannotBeUsedByBothProtocolsAtOnce() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("mixed", 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
        Member modern = new Member("mixed-group", "modern", "mixed");
        await("the consumer-protocol member owns the partitions", () -> ownedBy("modern").size() == 2);
        Properties classicProperties = consumerProperties("mixed-group", "classic");
        classicProperties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        try (KafkaConsumer<String, String> classic = new KafkaConsumer<>(classicProperties)) {
            classic.subscribe(List.of("mixed"));
            assertThatThrownBy(() -> {
                long deadline = System.nanoTime() + TIMEOUT.toNanos();
                while (System.nanoTime() < deadline) {
                    classic.poll(Duration.ofMillis(100));
                }
            }).isInstanceOf(InconsistentGroupProtocolException.class);
        }
        modern.close();
        assertThat(violations).isEmpty();

        // And the other way round: a classic group with members keeps its id from consumer-protocol members.
        Properties classicOwner = consumerProperties("classic-group", "classic-owner");
        classicOwner.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        try (KafkaConsumer<String, String> classic = new KafkaConsumer<>(classicOwner);
             KafkaConsumer<String, String> intruder = new KafkaConsumer<>(consumerProperties("classic-group", "intruder"))) {
            classic.subscribe(List.of("mixed"));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (classic.assignment().isEmpty() && System.nanoTime() < deadline) {
                classic.poll(Duration.ofMillis(100));
            }
            assertThat(classic.assignment()).hasSize(2);
            intruder.subscribe(List.of("mixed"));
            assertThatThrownBy(() -> {
                long until = System.nanoTime() + TIMEOUT.toNanos();
                while (System.nanoTime() < until) {
                    intruder.poll(Duration.ofMillis(100));
                    classic.poll(Duration.ofMillis(10));
                }
            }).isInstanceOf(GroupIdNotFoundException.class);
        }
    }

    @Test
    void theBrokerFinalizesGroupVersionOneAndAdminToolsSeeConsumerGroups() throws Exception {
        Admin admin = admin();
        FeatureMetadata features = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS);
        assertThat(features.finalizedFeatures().get("group.version").maxVersionLevel()).isEqualTo((short) 1);
        assertThat(features.supportedFeatures().get("group.version").maxVersion()).isEqualTo((short) 1);

        admin.createTopics(List.of(new NewTopic("admin-topic", 2, (short) 1), new NewTopic("old-topic", 1, (short) 1)))
            .all().get(30, TimeUnit.SECONDS);
        produce("admin-topic", 0, 10);
        // Offsets committed by a tool before any member exists (an empty classic group the consumer group then takes over).
        admin.alterConsumerGroupOffsets("admin-group", Map.of(new TopicPartition("old-topic", 0), new OffsetAndMetadata(0)))
            .all().get(30, TimeUnit.SECONDS);
        Member member = new Member("admin-group", "admin-member", "admin-topic");
        await("the member owns both partitions", () -> ownedBy("admin-member").size() == 2);
        await("the member committed", () -> processed.size() == 10);
        assertThat(describe(admin, "admin-group").type()).isEqualTo(GroupType.CONSUMER);
        // Offsets of a topic nobody subscribes to may go; those of a subscribed topic may not; the group may not while it has members.
        admin.deleteConsumerGroupOffsets("admin-group", Set.of(new TopicPartition("old-topic", 0))).all().get(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> admin.deleteConsumerGroupOffsets("admin-group", Set.of(new TopicPartition("admin-topic", 0)))
            .all().get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(GroupSubscribedToTopicException.class);
        assertThatThrownBy(() -> admin.deleteConsumerGroups(List.of("admin-group")).all().get(30, TimeUnit.SECONDS))
            .hasCauseInstanceOf(GroupNotEmptyException.class);

        // The classic DescribeGroups API does not describe consumer groups, as in Kafka: Dead, and GROUP_ID_NOT_FOUND from v6.
        assertThat(describeGroupsRaw("admin-group", (short) 5).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(describeGroupsRaw("admin-group", (short) 5).groupState()).isEqualTo("Dead");
        assertThat(describeGroupsRaw("admin-group", (short) 6).errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());

        member.close();
        admin.deleteConsumerGroups(List.of("admin-group")).all().get(30, TimeUnit.SECONDS);
        Collection<GroupListing> listed = admin.listGroups().all().get(30, TimeUnit.SECONDS);
        assertThat(listed).noneMatch(listing -> listing.groupId().equals("admin-group"));
        assertThat(admin.listConsumerGroupOffsets("admin-group").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)).isEmpty();
    }

    private DescribeGroupsResponseData.DescribedGroup describeGroupsRaw(String group, short version) throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
            socket.setSoTimeout(15_000);
            ByteBuffer frame = Frames.encodeRequest(ApiMessageType.DESCRIBE_GROUPS, version, 1, "raw", new DescribeGroupsRequestData()
                .setGroups(List.of(group)));
            byte[] bytes = new byte[frame.remaining()];
            frame.get(bytes);
            socket.getOutputStream().write(bytes);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] response = new byte[in.readInt()];
            in.readFully(response);
            DescribeGroupsResponseData parsed = (DescribeGroupsResponseData) Frames.parseResponse(ApiMessageType.DESCRIBE_GROUPS, version,
                ByteBuffer.wrap(response), 1);
            return parsed.groups().get(0);
        }
    }

    @Test
    void aStaticMemberRestartsWithoutARebalance() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("static", 4, (short) 1))).all().get(30, TimeUnit.SECONDS);
        Properties properties = consumerProperties("static-group", "static-1");
        properties.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-1");
        Set<TopicPartition> firstAssignment;
        int epoch;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.subscribe(List.of("static"));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (consumer.assignment().size() < 4 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(100));
            }
            firstAssignment = Set.copyOf(consumer.assignment());
            epoch = describe(admin, "static-group").groupEpoch().orElseThrow();
        }
        // Closed with epoch -2: the coordinator keeps the instance's partitions for it.
        ConsumerGroupDescription left = describe(admin, "static-group");
        assertThat(left.members()).hasSize(1);
        assertThat(left.members().iterator().next().memberEpoch()).hasValue(-2);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.subscribe(List.of("static"));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (consumer.assignment().size() < 4 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(100));
            }
            assertThat(consumer.assignment()).isEqualTo(firstAssignment);
            assertThat(describe(admin, "static-group").groupEpoch()).hasValue(epoch);
        }
    }
}
