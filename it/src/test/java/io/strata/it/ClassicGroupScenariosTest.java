package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kafka-clients 4.4 consumers with the classic protocol (JoinGroup/SyncGroup/Heartbeat/LeaveGroup)
 * against a real Strata node: partitions never owned by two members at once (checked from every
 * member's rebalance listener, one member in a child JVM killed with SIGKILL so its session
 * expires), no record lost or processed twice across leave, crash and join rebalances, incremental
 * cooperative rebalancing revoking only the partitions that move, and static members restarting
 * without a rebalance.
 */
class ClassicGroupScenariosTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(45);
    private static final String SESSION_TIMEOUT_MS = "3000";
    private static final String HEARTBEAT_INTERVAL_MS = "300";

    @TempDir
    Path dataDir;

    private StrataTestServer server;
    /** Who owns each partition, as the members' rebalance listeners report it. */
    private final Map<TopicPartition, String> owners = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    /** Record value → the member that processed it. */
    private final Map<Integer, String> processed = new ConcurrentHashMap<>();
    private final List<String> duplicates = new CopyOnWriteArrayList<>();
    /** Generation → member → the assignment it was given in that generation (in-JVM members). */
    private final Map<Integer, Map<String, Set<TopicPartition>>> generations = new ConcurrentHashMap<>();
    /** Every revocation: member and partitions, in order. */
    private final List<Map.Entry<String, Set<TopicPartition>>> revocations = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir, Map.of("offsets.topic.num.partitions", "3", "group.initial.rebalance.delay.ms", "0",
            "group.min.session.timeout.ms", "500"));
    }

    @AfterEach
    void stop() {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            try {
                cleanup.get(i).close();
            } catch (Exception | AssertionError e) {
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

    private Properties consumerProperties(String group, String name, Map<String, String> extra) {
        Properties properties = base();
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20");
        properties.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, SESSION_TIMEOUT_MS);
        properties.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, HEARTBEAT_INTERVAL_MS);
        properties.putAll(extra);
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
            if (!owners.remove(partition, member)) {
                violations.add(member + " revoked " + partition + " which it did not own");
            }
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

    private boolean split(int total, Map<String, Integer> expected) {
        if (owners.size() != total) {
            return false;
        }
        for (Map.Entry<String, Integer> entry : expected.entrySet()) {
            if (ownedBy(entry.getKey()).size() != entry.getValue()) {
                return false;
            }
        }
        return true;
    }

    /**
     * A member in this JVM: poll, process (record), commitSync, on its own thread; commits again in
     * onPartitionsRevoked; tracks ownership, revocations and per-generation assignments through its listener.
     */
    private final class Member implements AutoCloseable {
        final String name;
        private final Thread thread;
        private volatile boolean stopping;
        private volatile Throwable failure;
        volatile int generation = -1;
        volatile String memberId = "";
        final AtomicInteger callbacks = new AtomicInteger();

        Member(String group, String name, String topic) {
            this(group, name, topic, Map.of());
        }

        Member(String group, String name, String topic, Map<String, String> extra) {
            this.name = name;
            this.thread = new Thread(() -> run(group, topic, extra), name);
            thread.start();
            cleanup.add(this);
        }

        private void run(String group, String topic, Map<String, String> extra) {
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties(group, name, extra))) {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        if (partitions.isEmpty()) {
                            return;
                        }
                        callbacks.incrementAndGet();
                        consumer.commitSync(); // nothing processed stays uncommitted when partitions move
                        revocations.add(Map.entry(name, Set.copyOf(partitions)));
                        release(partitions, name);
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        if (!partitions.isEmpty()) {
                            callbacks.incrementAndGet();
                        }
                        claim(partitions, name);
                        int generationId = consumer.groupMetadata().generationId();
                        generations.computeIfAbsent(generationId, g -> new ConcurrentHashMap<>()).put(name, Set.copyOf(consumer.assignment()));
                    }

                    @Override
                    public void onPartitionsLost(Collection<TopicPartition> partitions) {
                        violations.add(name + " lost " + partitions + " (it was fenced)");
                        for (TopicPartition partition : partitions) {
                            owners.remove(partition, name);
                        }
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
                    generation = consumer.groupMetadata().generationId();
                    memberId = consumer.groupMetadata().memberId();
                }
            } catch (Throwable e) {
                failure = e;
                violations.add(name + " failed: " + e);
            }
        }

        /** Closes the consumer (revocation, and LeaveGroup unless static) and waits for it. */
        @Override
        public void close() throws Exception {
            stopping = true;
            thread.join(TIMEOUT.toMillis());
            assertThat(thread.isAlive()).as("%s stopped", name).isFalse();
            assertThat(failure).as("%s failed", name).isNull();
        }
    }

    /** A classic member in a child JVM ({@link ConsumerProcessMain}) that the test kills with SIGKILL: no leave. */
    private final class ChildMember implements AutoCloseable {
        final String name;
        private final Process process;
        private final OutputStream stdin;
        private volatile boolean paused;

        ChildMember(String group, String name, String topic) throws Exception {
            this.name = name;
            ProcessBuilder builder = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx192m",
                "-cp", System.getProperty("java.class.path"), ConsumerProcessMain.class.getName(), server.bootstrap(), group, topic, name,
                "classic", ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG + "=" + SESSION_TIMEOUT_MS,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG + "=" + HEARTBEAT_INTERVAL_MS);
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
                    revocations.add(Map.entry(name, Set.copyOf(partitions(argument))));
                    release(partitions(argument), name);
                    ack();
                }
                case "LOST" -> {
                    violations.add(name + " lost " + argument + " (it was fenced)");
                    for (TopicPartition partition : partitions(argument)) {
                        owners.remove(partition, name);
                    }
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

        /** Stops the member between batches (everything it processed is committed) and SIGKILLs its JVM. */
        void kill() throws Exception {
            synchronized (this) {
                stdin.write("PAUSE\n".getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            }
            await(name + " paused", () -> paused);
            process.destroyForcibly();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            // A dead process owns nothing; the coordinator hands its partitions on only after its session expires.
            for (TopicPartition partition : ownedBy(name)) {
                owners.remove(partition, name);
            }
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

    private static boolean sameGeneration(Member... members) {
        int generation = members[0].generation;
        for (Member member : members) {
            if (member.generation < 0 || member.generation != generation) {
                return false;
            }
        }
        return true;
    }

    /** Within every generation the members' assignments are disjoint. */
    private void assertGenerationsDisjoint() {
        generations.forEach((generation, assignments) -> {
            Map<TopicPartition, String> seen = new HashMap<>();
            assignments.forEach((member, partitions) -> {
                for (TopicPartition partition : partitions) {
                    String other = seen.put(partition, member);
                    assertThat(other).as("generation %d: %s given to %s and %s", generation, partition, other, member).isNull();
                }
            });
        });
    }

    @Test
    void membersLeaveCrashAndJoinWithoutOverlappingOwnershipLossOrDuplicates() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("orders", 12, (short) 1))).all().get(30, TimeUnit.SECONDS);

        // Three members share the twelve partitions, four each, in one generation.
        Member first = new Member("orders-group", "first", "orders");
        Member second = new Member("orders-group", "second", "orders");
        Member third = new Member("orders-group", "third", "orders");
        await("three members own four partitions each", () -> split(12, Map.of("first", 4, "second", 4, "third", 4))
            && sameGeneration(first, second, third));
        int threeMemberGeneration = first.generation;
        assertThat(generations.get(threeMemberGeneration)).hasSize(3);
        ConsumerGroupDescription stable = describe(admin, "orders-group");
        assertThat(stable.groupState()).isEqualTo(GroupState.STABLE);
        assertThat(stable.members()).hasSize(3);
        Set<TopicPartition> described = new HashSet<>();
        for (MemberDescription member : stable.members()) {
            assertThat(member.assignment().topicPartitions()).hasSize(4);
            described.addAll(member.assignment().topicPartitions());
        }
        assertThat(described).hasSize(12);
        produce("orders", 0, 2000);
        await("the first records are processed", () -> processed.size() == 2000);

        // A member leaves properly (LeaveGroup): the other two take over its partitions.
        second.close();
        await("second's partitions are taken over", () -> split(12, Map.of("second", 0, "first", 6, "third", 6))
            && sameGeneration(first, third) && first.generation > threeMemberGeneration);

        // A member in its own JVM joins, processes, and is SIGKILLed: its partitions move once its session expires.
        ChildMember child = new ChildMember("orders-group", "child", "orders");
        await("the child member owns four partitions", () -> split(12, Map.of("child", 4, "first", 4, "third", 4)));
        produce("orders", 2000, 4000);
        await("the child processed something", () -> processed.containsValue("child"));
        int withChild = first.generation;
        child.kill();
        await("the dead member's partitions are taken over", () -> split(12, Map.of("first", 6, "third", 6))
            && sameGeneration(first, third) && first.generation > withChild);
        produce("orders", 4000, 6000);

        // A new member joins: four partitions each again.
        Member fourth = new Member("orders-group", "fourth", "orders");
        await("the new member owns four partitions", () -> split(12, Map.of("first", 4, "third", 4, "fourth", 4))
            && sameGeneration(first, third, fourth));
        produce("orders", 6000, 8000);

        await("every record is processed", () -> processed.size() == 8000);
        first.close();
        third.close();
        fourth.close();
        assertThat(violations).isEmpty();
        assertThat(duplicates).isEmpty();
        assertThat(processed.keySet()).isEqualTo(range(0, 8000));
        assertThat(processed.values()).contains("first", "second", "third", "child", "fourth");
        assertGenerationsDisjoint();
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("orders-group").partitionsToOffsetAndMetadata()
            .get(30, TimeUnit.SECONDS);
        assertThat(committed).hasSize(12);
        assertThat(committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(8000);
        await("the group is empty", () -> {
            try {
                return describe(admin, "orders-group").groupState() == GroupState.EMPTY;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void cooperativeStickyRevokesOnlyThePartitionsThatMove() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("sticky", 12, (short) 1))).all().get(30, TimeUnit.SECONDS);
        produce("sticky", 0, 1000);
        Map<String, String> cooperative = Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        Member one = new Member("sticky-group", "one", "sticky", cooperative);
        Member two = new Member("sticky-group", "two", "sticky", cooperative);
        await("two members own six partitions each", () -> split(12, Map.of("one", 6, "two", 6)) && sameGeneration(one, two));
        await("the first records are processed", () -> processed.size() == 1000);
        Map<TopicPartition, String> before = Map.copyOf(owners);
        revocations.clear();

        Member three = new Member("sticky-group", "three", "sticky", cooperative);
        await("three members own four partitions each", () -> split(12, Map.of("one", 4, "two", 4, "three", 4))
            && sameGeneration(one, two, three));
        produce("sticky", 1000, 2000);
        await("every record is processed", () -> processed.size() == 2000);
        Map<TopicPartition, String> after = Map.copyOf(owners);

        Set<TopicPartition> moved = new HashSet<>();
        before.forEach((partition, owner) -> {
            if (!owner.equals(after.get(partition))) {
                moved.add(partition);
            }
        });
        assertThat(moved).hasSize(4).isEqualTo(ownedBy("three"));
        Set<TopicPartition> revoked = new HashSet<>();
        for (Map.Entry<String, Set<TopicPartition>> revocation : revocations) {
            for (TopicPartition partition : revocation.getValue()) {
                assertThat(revocation.getKey()).as("%s revoked by its previous owner", partition).isEqualTo(before.get(partition));
                assertThat(revoked.add(partition)).as("%s revoked once", partition).isTrue();
            }
        }
        assertThat(revoked).as("only the partitions that moved were revoked").isEqualTo(moved);
        // Each existing member kept what it did not give up.
        for (String member : List.of("one", "two")) {
            Set<TopicPartition> kept = new HashSet<>();
            before.forEach((partition, owner) -> {
                if (owner.equals(member) && !moved.contains(partition)) {
                    kept.add(partition);
                }
            });
            assertThat(ownedBy(member)).isEqualTo(kept);
        }
        one.close();
        two.close();
        three.close();
        assertThat(violations).isEmpty();
        assertThat(duplicates).isEmpty();
        assertThat(processed.keySet()).isEqualTo(range(0, 2000));
        assertGenerationsDisjoint();
    }

    @Test
    void aStaticMemberRestartedWithinItsSessionTimeoutCausesNoRebalance() throws Exception {
        Admin admin = admin();
        admin.createTopics(List.of(new NewTopic("static", 12, (short) 1))).all().get(30, TimeUnit.SECONDS);
        produce("static", 0, 1000);
        // Two members first, then the third: s1 and s2 rejoin, so their stored subscriptions (which carry the generation)
        // differ from what a restarted instance sends, which must not matter.
        Map<String, Member> members = new HashMap<>();
        for (String name : List.of("s1", "s2")) {
            members.put(name, new Member("static-group", name, "static", staticProperties(name)));
        }
        await("two static members own six partitions each", () -> split(12, Map.of("s1", 6, "s2", 6))
            && sameGeneration(members.get("s1"), members.get("s2")));
        members.put("s3", new Member("static-group", "s3", "static", staticProperties("s3")));
        await("three static members own four partitions each", () -> split(12, Map.of("s1", 4, "s2", 4, "s3", 4))
            && sameGeneration(members.get("s1"), members.get("s2"), members.get("s3")));
        await("the first records are processed", () -> processed.size() == 1000);
        int generation = members.get("s1").generation;
        ConsumerGroupDescription before = describe(admin, "static-group");
        assertThat(before.groupState()).isEqualTo(GroupState.STABLE);
        Map<String, Set<TopicPartition>> describedBefore = assignmentsByInstance(before);
        assertThat(describedBefore.keySet()).containsExactlyInAnyOrder("instance-s1", "instance-s2", "instance-s3");
        Map<String, Set<TopicPartition>> ownedBefore = Map.of("s1", ownedBy("s1"), "s2", ownedBy("s2"), "s3", ownedBy("s3"));

        // Each instance in turn (so whichever is the group leader is restarted too) closes without a LeaveGroup
        // (static) and a new instance with the same group.instance.id starts within the session timeout.
        int produced = 1000;
        for (String name : List.of("s2", "s1", "s3")) {
            Map<String, Integer> callbacksBefore = new HashMap<>();
            members.forEach((other, member) -> callbacksBefore.put(other, member.callbacks.get()));
            String oldMemberId = members.get(name).memberId;
            members.get(name).close();
            assertThat(describe(admin, "static-group").members()).hasSize(3);
            Member restarted = new Member("static-group", name, "static", staticProperties(name));
            await(name + " restarted owns its previous partitions", () -> ownedBy(name).equals(ownedBefore.get(name))
                && owners.size() == 12 && restarted.generation >= 0);
            members.put(name, restarted);
            assertThat(restarted.memberId).isNotEqualTo(oldMemberId);
            assertThat(restarted.generation).as("%s restarted joins the current generation", name).isEqualTo(generation);

            // The group keeps working in the same generation, and the other members saw nothing.
            produce("static", produced, produced + 500);
            produced += 500;
            int expected = produced;
            await("records after restarting " + name + " are processed", () -> processed.size() == expected);
            for (String other : List.of("s1", "s2", "s3")) {
                assertThat(ownedBy(other)).as("%s's partitions", other).isEqualTo(ownedBefore.get(other));
                assertThat(members.get(other).generation).as("%s's generation", other).isEqualTo(generation);
                if (!other.equals(name)) {
                    assertThat(members.get(other).callbacks.get()).as("%s saw no revocation or assignment", other)
                        .isEqualTo(callbacksBefore.get(other));
                }
            }
            ConsumerGroupDescription after = describe(admin, "static-group");
            assertThat(after.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(assignmentsByInstance(after)).isEqualTo(describedBefore);
            assertThat(after.members()).anySatisfy(member -> {
                assertThat(member.groupInstanceId()).hasValue("instance-" + name);
                assertThat(member.consumerId()).isEqualTo(restarted.memberId);
            });
        }

        for (Member member : members.values()) {
            member.close();
        }
        assertThat(violations).isEmpty();
        assertThat(duplicates).isEmpty();
        assertThat(processed.keySet()).isEqualTo(range(0, produced));
        assertGenerationsDisjoint();
    }

    private static Map<String, String> staticProperties(String name) {
        // A session long enough to restart within, short enough that a stray member would not hold the test for long.
        return Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-" + name, ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "20000");
    }

    private static Map<String, Set<TopicPartition>> assignmentsByInstance(ConsumerGroupDescription description) {
        Map<String, Set<TopicPartition>> assignments = new HashMap<>();
        for (MemberDescription member : description.members()) {
            assignments.put(member.groupInstanceId().orElseThrow(), Set.copyOf(member.assignment().topicPartitions()));
        }
        return assignments;
    }
}
