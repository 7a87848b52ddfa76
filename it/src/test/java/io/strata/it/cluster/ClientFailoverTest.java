package io.strata.it.cluster;

import io.strata.it.ExternalTools;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 13's "kcat, kafkajs and the Java client all fail over": 3 combined nodes, one-partition
 * topics at RF 3 with min.insync.replicas 2 ({@code __consumer_offsets} at RF 3 too), and a
 * client of each family working while the partition's leader is killed with -9 and then
 * restarted (kcat also while the next leader is paused with SIGSTOP past the broker session
 * timeout, then resumed; not kafkajs: a kafkajs 2 client whose metadata broker stops answering
 * retries Metadata on that same broker until its retries run out, whatever the broker, since it
 * neither reconnects nor moves on after a request timeout, tulios/kafkajs#1783):
 * <ul>
 *   <li>kcat (librdkafka), an idempotent acks=all producer fed lines on stdin, must deliver every
 *       line (exit 0) and the log must hold each exactly once, in order, at the offset of its
 *       delivery report;</li>
 *   <li>kafkajs, an idempotent producer (acks -1, one request in flight) printing each
 *       acknowledged offset, must find each acknowledged message exactly once at that offset;</li>
 *   <li>a Java consumer in a group of either protocol (classic, and KIP-848's consumer protocol)
 *       keeps receiving across the failover of its partition's leader and its group coordinator: no
 *       gap, no duplicate, and no rebalance (the one member keeps its assignment).</li>
 * </ul>
 * One cluster serves the class; each test leaves every node running with a full ISR, and the
 * next one restarts any node a failed test left dead.
 */
@Tag("cluster")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(PrintClusterLogsOnFailure.class)
class ClientFailoverTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    /** Lines kcat produces in all; the leader is killed after a quarter of them are delivered. */
    private static final int KCAT_LINES = 20_000;
    /** Feed rate of kcat's stdin: this many lines every {@link #KCAT_FEED_PERIOD_MS}, so that the run spans the failover. */
    private static final int KCAT_LINES_PER_FEED = 200;
    private static final long KCAT_FEED_PERIOD_MS = 100;
    /** kafkajs messages per send (one send in flight at a time). */
    private static final int KAFKAJS_BATCH = 10;
    /** Acknowledgements (or records received) each phase must see before the next fault. */
    private static final int PROGRESS_PER_PHASE = 500;
    /** Java producer sends in flight at once in the group test. */
    private static final int JAVA_SENDS_IN_FLIGHT = 10;
    /** kcat's delivery report at verbosity 3 ({@code -vv}): "Message delivered to partition P (offset O) on broker B". */
    /** Marks, among the group test's rebalance events, where the consumer's own close begins. */
    private static final String CLOSING = "closing";
    private static final Pattern KCAT_DELIVERED = Pattern.compile("Message delivered to partition (\\d+) \\(offset (-?\\d+)\\)");

    @TempDir
    static Path dir;

    private ClusterHarness cluster;
    private Admin admin;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = ClusterHarness.combined(dir, 3, Map.of("default.replication.factor", "3", "min.insync.replicas", "2",
            "offsets.topic.replication.factor", "3", "replica.lag.time.max.ms", "10000"));
        cluster.start();
        admin = cluster.admin();
    }

    @AfterAll
    void stopCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A test that failed midway may have left its victim dead: every test starts with all three nodes running. */
    @BeforeEach
    void everyNodeRunning() throws Exception {
        for (ClusterHarness.Node node : cluster.nodes()) {
            if (!node.isAlive()) {
                node.start();
            }
        }
    }

    @Test
    void kcatIdempotentProducerDeliversEveryLineOnceInOrderAcrossAKilledAndAPausedLeader() throws Exception {
        ExternalTools.require("kcat", ExternalTools.onPath("kcat"));
        String topic = "kcat-failover";
        createTopic(topic);
        int victim = leaderOf(topic, -1);
        // socket.timeout.ms 5 s: a request to a paused leader is given up (and retried, same sequence numbers) before
        // message.timeout.ms runs out; librdkafka's default of 60 s would outlast it.
        List<String> command = List.of("kcat", "-P", "-b", cluster.bootstrapServers(), "-t", topic, "-p", "0",
            "-X", "acks=all", "-X", "enable.idempotence=true", "-X", "message.timeout.ms=90000",
            "-X", "socket.timeout.ms=5000", "-X", "retry.backoff.ms=100", "-X", "reconnect.backoff.max.ms=500",
            "-vv"); // verbosity 3: one delivery report line per message on stderr
        AtomicInteger feedLimit = new AtomicInteger(KCAT_LINES / 2);
        AtomicReference<Throwable> feederFailure = new AtomicReference<>();
        ScheduledExecutorService feeder = Executors.newSingleThreadScheduledExecutor();
        try (ClientProcess kcat = ClientProcess.start("kcat", command)) {
            // Lines are held back at each fault, so that every phase (the restarted replica catching up, the paused leader's
            // partition moving) happens under load.
            AtomicInteger written = new AtomicInteger();
            feeder.scheduleAtFixedRate(() -> feedKcat(kcat, written, feedLimit, feederFailure), 0, KCAT_FEED_PERIOD_MS, TimeUnit.MILLISECONDS);

            awaitKcatDeliveries(kcat, KCAT_LINES / 4, feederFailure, "a quarter of the lines delivered before the fault");
            long killedAt = System.nanoTime();
            cluster.node(victim).kill9();
            int newLeader = leaderOf(topic, victim);
            System.out.printf("kcat: killed leader %d after %d deliveries; node %d leads after %d ms%n", victim,
                kcatDeliveries(kcat).size(), newLeader, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
            cluster.node(victim).start();
            feedLimit.set(KCAT_LINES * 3 / 4);

            awaitKcatDeliveries(kcat, KCAT_LINES * 5 / 8, feederFailure, "lines delivered after the restart of node " + victim);
            awaitFullIsr(topic);
            int paused = leaderOf(topic, -1);
            long pausedAt = System.nanoTime();
            cluster.node(paused).pause();
            try {
                feedLimit.set(KCAT_LINES);
                int next = leaderOf(topic, paused);
                System.out.printf("kcat: paused leader %d (SIGSTOP) after %d deliveries; node %d leads after %d ms%n", paused,
                    kcatDeliveries(kcat).size(), next, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAt));
                awaitKcatDeliveries(kcat, KCAT_LINES * 7 / 8, feederFailure, "lines delivered while leader " + paused + " is paused");
            } finally {
                cluster.node(paused).resume();
            }

            awaitKcatDeliveries(kcat, KCAT_LINES, feederFailure, "every line delivered");
            kcat.awaitCleanExit(Duration.ofSeconds(60));
            assertThat(feederFailure.get()).as("feeding kcat's stdin failed").isNull();
            List<Long> reported = kcatDeliveries(kcat);
            awaitFullIsr(topic);

            List<ConsumerRecord<String, String>> log = drain(topic);
            List<String> expected = IntStream.range(0, KCAT_LINES).mapToObj(ClientFailoverTest::kcatLine).toList();
            assertThat(log).extracting(ConsumerRecord::value).as("the partition holds every line exactly once, in order")
                .containsExactlyElementsOf(expected);
            // librdkafka reports an idempotent producer's deliveries of a partition in send order.
            assertThat(log).extracting(ConsumerRecord::offset).as("offsets in kcat's delivery reports, in report order")
                .containsExactlyElementsOf(reported);
            System.out.printf("kcat: %d lines delivered once each across kill -9 and restart of leader %d and SIGSTOP of leader %d%n",
                log.size(), victim, paused);
        } finally {
            feeder.shutdownNow();
        }
    }

    /** One tick of kcat's stdin: the next lines, up to {@code limit}; closes stdin after the last. */
    private static void feedKcat(ClientProcess kcat, AtomicInteger written, AtomicInteger limit, AtomicReference<Throwable> failure) {
        if (failure.get() != null || written.get() == KCAT_LINES) {
            return;
        }
        try {
            StringBuilder lines = new StringBuilder();
            int next = written.get();
            while (next < Math.min(limit.get(), written.get() + KCAT_LINES_PER_FEED)) {
                lines.append(kcatLine(next++)).append('\n');
            }
            kcat.write(lines.toString());
            written.set(next);
            if (next == KCAT_LINES) {
                kcat.closeInput();
            }
        } catch (IOException | RuntimeException e) {
            failure.compareAndSet(null, e); // checked by every wait on kcat, so the test fails with it
        }
    }

    private static String kcatLine(int n) {
        return String.format("kcat-%05d", n);
    }

    /** The offsets of kcat's delivery reports so far, in report order; fails on a failed delivery. */
    private static List<Long> kcatDeliveries(ClientProcess kcat) {
        List<Long> offsets = new ArrayList<>();
        for (String line : kcat.stderr()) {
            if (line.contains("Delivery failed")) {
                throw new AssertionError("kcat reports a failed delivery: " + line + "\n" + kcat.stderrTail());
            }
            Matcher matcher = KCAT_DELIVERED.matcher(line);
            if (matcher.find()) {
                assertThat(matcher.group(1)).as("partition of %s", line).isEqualTo("0");
                offsets.add(Long.parseLong(matcher.group(2)));
            }
        }
        return offsets;
    }

    private static void awaitKcatDeliveries(ClientProcess kcat, int atLeast, AtomicReference<Throwable> feederFailure, String what)
        throws InterruptedException {
        ClusterHarness.waitUntil(() -> {
            if (feederFailure.get() != null) {
                throw new AssertionError("feeding kcat's stdin failed", feederFailure.get());
            }
            kcat.requireNotFailed();
            return kcatDeliveries(kcat).size() >= atLeast;
        }, DEADLINE, what + " (" + atLeast + " delivery reports from kcat)");
    }

    @Test
    void kafkajsIdempotentProducerFindsEveryAcknowledgedMessageOnceAtItsOffsetAcrossAKilledLeader() throws Exception {
        ExternalTools.require("node with kafkajs (npm ci in it/src/test/js)", ExternalTools.kafkajsInstalled());
        String topic = "kafkajs-failover";
        createTopic(topic);
        int victim = leaderOf(topic, -1);
        List<String> command = List.of("node", ExternalTools.nodeModulesRoot().resolve("produce-acked.js").toString(),
            cluster.bootstrapServers(), topic, "0", Integer.toString(KAFKAJS_BATCH), "js");
        try (ClientProcess kafkajs = ClientProcess.start("kafkajs", command)) {
            awaitKafkajsAcks(kafkajs, PROGRESS_PER_PHASE * 2, "acknowledgements before the fault");
            int beforeKill = kafkajsAcks(kafkajs).size();
            long killedAt = System.nanoTime();
            cluster.node(victim).kill9();
            // One send (one batch) may be in flight at the kill; later acknowledgements are of sends the new leader took.
            awaitKafkajsAcks(kafkajs, beforeKill + PROGRESS_PER_PHASE, "acknowledgements after kill -9 of leader " + victim);
            System.out.printf("kafkajs: killed leader %d after %d acks; %d more within %d ms%n", victim, beforeKill, PROGRESS_PER_PHASE,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
            cluster.node(victim).start();
            int afterRestart = kafkajsAcks(kafkajs).size();
            awaitKafkajsAcks(kafkajs, afterRestart + PROGRESS_PER_PHASE, "acknowledgements after the restart of node " + victim);

            kafkajs.closeInput();
            kafkajs.awaitCleanExit(Duration.ofSeconds(60));

            List<Acked> acks = kafkajsAcks(kafkajs);
            List<String> out = kafkajs.stdout();
            assertThat(out.get(out.size() - 1)).as("kafkajs's last line").isEqualTo("DONE\t" + acks.size());
            // The script stops at the first send it gives up on, so every message it sent was acknowledged.
            assertThat(acks).extracting(Acked::value).as("acknowledged values, in send order")
                .containsExactlyElementsOf(IntStream.range(0, acks.size()).mapToObj(n -> "js-" + n).toList());
            awaitFullIsr(topic);
            List<ConsumerRecord<String, String>> log = drain(topic);
            assertThat(log).extracting(record -> new Acked(record.value(), record.offset()))
                .as("the partition holds every acknowledged message once, at its acknowledged offset, and nothing else")
                .containsExactlyElementsOf(acks);
            System.out.printf("kafkajs: %d acknowledged messages found once each at their offsets%n", acks.size());
        }
    }

    /** One acknowledged (or received) message: its value and its offset in partition 0. */
    private record Acked(String value, long offset) {
    }

    /** kafkajs's "ACK partition offset value" lines so far. */
    private static List<Acked> kafkajsAcks(ClientProcess kafkajs) {
        List<Acked> acks = new ArrayList<>();
        for (String line : kafkajs.stdout()) {
            if (line.startsWith("ACK\t")) {
                String[] fields = line.split("\t");
                assertThat(fields).as("ACK line %s", line).hasSize(4);
                assertThat(fields[1]).as("partition of %s", line).isEqualTo("0");
                acks.add(new Acked(fields[3], Long.parseLong(fields[2])));
            }
        }
        return acks;
    }

    private static void awaitKafkajsAcks(ClientProcess kafkajs, int atLeast, String what) throws InterruptedException {
        try {
            ClusterHarness.waitUntil(() -> {
                kafkajs.requireNotFailed();
                return kafkajsAcks(kafkajs).size() >= atLeast;
            }, DEADLINE, what + " (" + atLeast + " acknowledged messages from kafkajs)");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; kafkajs's stderr:\n" + kafkajs.stderrTail(), e);
        }
    }

    @ParameterizedTest(name = "group.protocol={0}")
    @ValueSource(strings = {"classic", "consumer"})
    void groupConsumerKeepsReceivingWithoutGapOrDuplicateWhileItsPartitionsLeaderIsKilled(String protocol) throws Exception {
        String topic = "group-failover-" + protocol;
        createTopic(topic);
        int victim = leaderOf(topic, -1);
        // The group's coordinator on the victim too: one kill -9 moves both the partition and the group.
        String group = groupCoordinatedBy(victim);
        List<Acked> acked = Collections.synchronizedList(new ArrayList<>());
        List<Acked> received = Collections.synchronizedList(new ArrayList<>());
        List<String> rebalances = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Throwable> fatal = new AtomicReference<>();
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicBoolean consuming = new AtomicBoolean(true);
        Thread producer = new Thread(() -> produce(topic, acked, producing, fatal), "failover-producer");
        Thread consumer = new Thread(() -> consume(protocol, topic, group, received, rebalances, consuming, fatal), "failover-consumer");
        producer.start();
        consumer.start();
        try {
            awaitReceived(received, PROGRESS_PER_PHASE - 1, fatal, "records received before the fault");
            int coordinator = admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group).coordinator().id();
            assertThat(coordinator).as("coordinator of %s (Kafka's placement: abs(hashCode) %% partitions of __consumer_offsets)", group)
                .isEqualTo(victim);
            long lastAckedAtKill = lastOffset(acked);
            cluster.node(victim).kill9();
            System.out.printf("group: killed node %d, leader of %s-0 and coordinator of %s, at acked offset %d%n", victim, topic, group,
                lastAckedAtKill);
            awaitReceived(received, lastAckedAtKill + PROGRESS_PER_PHASE, fatal, "records written after kill -9 of leader " + victim);
            cluster.node(victim).start();
            awaitFullIsr(topic);
            awaitReceived(received, lastOffset(acked) + PROGRESS_PER_PHASE, fatal, "records written after the restart of node " + victim);
        } finally {
            producing.set(false);
            producer.join(TimeUnit.MINUTES.toMillis(2));
        }
        try {
            assertThat(producer.isAlive()).as("the producer stopped").isFalse();
            long end = admin.listOffsets(Map.of(new TopicPartition(topic, 0), OffsetSpec.latest())).all().get(10, TimeUnit.SECONDS)
                .get(new TopicPartition(topic, 0)).offset();
            awaitReceived(received, end - 1, fatal, "every record up to the end offset " + end);
        } finally {
            consuming.set(false);
            consumer.join(TimeUnit.MINUTES.toMillis(1));
        }
        assertThat(fatal.get()).as("the producer or the consumer failed").isNull();
        assertThat(consumer.isAlive()).as("the consumer stopped").isFalse();

        List<Acked> got;
        synchronized (received) {
            got = List.copyOf(received);
        }
        assertThat(got).extracting(Acked::offset).as("offsets received: from 0, no gap, no duplicate")
            .containsExactlyElementsOf(IntStream.range(0, got.size()).mapToObj(Long::valueOf).toList());
        assertThat(got).extracting(Acked::value).as("values received").doesNotHaveDuplicates();
        synchronized (acked) {
            assertThat(got).as("every acknowledged record received at its offset").containsAll(acked);
        }
        List<String> events;
        synchronized (rebalances) {
            events = List.copyOf(rebalances);
        }
        assertThat(events).as("one session: assigned once, never revoked or lost before the consumer closed").contains(CLOSING);
        assertThat(events.subList(0, events.indexOf(CLOSING))).as("rebalance events before the close of %s", events)
            .containsExactly("assigned [" + topic + "-0]");
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
            .get(10, TimeUnit.SECONDS);
        assertThat(committed.get(new TopicPartition(topic, 0))).as("the offset committed at the end").isNotNull()
            .extracting(OffsetAndMetadata::offset).isEqualTo((long) got.size());
        System.out.printf("group: %d records received in one session across kill -9 and restart of leader %d%n", got.size(), victim);
    }

    /**
     * A group id whose {@code __consumer_offsets} partition is led by {@code node} now, by Kafka's
     * placement ({@code abs(groupId.hashCode()) % partitions}, abs of MIN_VALUE being 0). The
     * first FindCoordinator creates {@code __consumer_offsets}; earlier kills may have moved its leaders.
     */
    private String groupCoordinatedBy(int node) throws Exception {
        ClusterHarness.waitUntil(() -> admin.describeConsumerGroups(List.of("warm-up")).all().get(10, TimeUnit.SECONDS) != null,
            DEADLINE, "a group coordinator answers (__consumer_offsets exists)");
        // An earlier test's kill and restart moved leaders off the restarted node: put the preferred replicas back in front
        // (kafka-leader-election --election-type PREFERRED), so that every node leads some partition of __consumer_offsets.
        ClusterHarness.waitUntil(() -> describe("__consumer_offsets").partitions().stream()
            .allMatch(info -> info.isr().size() == info.replicas().size()), DEADLINE, "__consumer_offsets fully replicated");
        admin.electLeaders(org.apache.kafka.common.ElectionType.PREFERRED, null).partitions().get(30, TimeUnit.SECONDS);
        ClusterHarness.waitUntil(() -> describe("__consumer_offsets").partitions().stream()
            .allMatch(info -> info.leader() != null && info.leader().id() == info.replicas().get(0).id()), DEADLINE,
            "the preferred replicas lead __consumer_offsets");
        Map<Integer, Integer> leaders = new java.util.TreeMap<>();
        ClusterHarness.waitUntil(() -> {
            leaders.clear();
            List<TopicPartitionInfo> partitions = describe("__consumer_offsets").partitions();
            partitions.stream().filter(info -> info.leader() != null).forEach(info -> leaders.put(info.partition(), info.leader().id()));
            return !partitions.isEmpty() && leaders.size() == partitions.size();
        }, DEADLINE, "every partition of __consumer_offsets has a leader");
        for (int i = 0; i < 1000; i++) {
            String group = "failover-group-" + i;
            int hash = group.hashCode();
            int partition = (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % leaders.size();
            if (leaders.get(partition) == node) {
                return group;
            }
        }
        throw new AssertionError("node " + node + " leads no partition of __consumer_offsets: leaders " + leaders);
    }

    /** Writes "g-n" values to partition 0 until told to stop, a few sends in flight; records every acknowledgement. */
    private void produce(String topic, List<Acked> acked, AtomicBoolean running, AtomicReference<Throwable> fatal) {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.remove("default.api.timeout.ms");
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        Semaphore inFlight = new Semaphore(JAVA_SENDS_IN_FLIGHT);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (long n = 0; running.get() && fatal.get() == null; ) {
                if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                String value = "g-" + n++;
                producer.send(new ProducerRecord<>(topic, 0, null, value), (metadata, exception) -> {
                    inFlight.release();
                    if (exception == null) {
                        acked.add(new Acked(value, metadata.offset()));
                    } else {
                        // Never acknowledged: the consumer may see it once or not at all, never twice.
                        System.out.printf("group: write %s failed: %s%n", value, exception);
                    }
                });
            }
            producer.flush();
        } catch (Throwable e) {
            fatal.compareAndSet(null, e);
        }
    }

    /**
     * A group member of the given protocol reading {@code topic} until told to stop; commits its
     * position once at the end. The consumer protocol (KIP-848) takes its session timeout and
     * heartbeat interval from the broker (group.consumer.*), the classic one from the client.
     */
    private void consume(String protocol, String topic, String group, List<Acked> received, List<String> rebalances, AtomicBoolean running,
                         AtomicReference<Throwable> fatal) {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {
            properties.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "15000");
            properties.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        }
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (!partitions.isEmpty()) {
                        rebalances.add("revoked " + partitions);
                    }
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    if (!partitions.isEmpty()) {
                        rebalances.add("assigned " + partitions); // the consumer protocol may first report an empty assignment
                    }
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    rebalances.add("lost " + partitions);
                }
            });
            while (running.get()) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    received.add(new Acked(record.value(), record.offset()));
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
            // KafkaConsumer.close revokes the eager (range) assignment of a member leaving its group: not a rebalance.
            rebalances.add(CLOSING);
        } catch (Throwable e) {
            fatal.compareAndSet(null, e);
        }
    }

    private static long lastOffset(List<Acked> records) {
        synchronized (records) {
            return records.stream().mapToLong(Acked::offset).max().orElse(-1);
        }
    }

    private static void awaitReceived(List<Acked> received, long offset, AtomicReference<Throwable> fatal, String what)
        throws InterruptedException {
        ClusterHarness.waitUntil(() -> {
            if (fatal.get() != null) {
                throw new AssertionError("the producer or the consumer failed", fatal.get());
            }
            return lastOffset(received) >= offset;
        }, DEADLINE, what + " (the consumer reaches offset " + offset + ")");
    }

    /** Creates {@code topic}: one partition, RF 3, min.insync.replicas 2; waits until all three replicas are in sync. */
    private void createTopic(String topic) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
            .all().get(30, TimeUnit.SECONDS);
        awaitFullIsr(topic);
    }

    /** Waits until partition 0 of {@code topic} has a leader other than {@code notThis} (-1: any) and returns it. */
    private int leaderOf(String topic, int notThis) throws InterruptedException {
        int[] leader = {-1};
        ClusterHarness.waitUntil(() -> {
            TopicPartitionInfo info = describe(topic).partitions().get(0);
            leader[0] = info.leader() == null ? -1 : info.leader().id();
            return leader[0] >= 0 && leader[0] != notThis;
        }, DEADLINE, "a leader of " + topic + "-0" + (notThis < 0 ? "" : " other than " + notThis));
        return leader[0];
    }

    private void awaitFullIsr(String topic) throws InterruptedException {
        ClusterHarness.waitUntil(() -> {
            TopicPartitionInfo info = describe(topic).partitions().get(0);
            return info.leader() != null && info.isr().size() == 3;
        }, DEADLINE, topic + "-0 has 3 in-sync replicas");
    }

    private TopicDescription describe(String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
    }

    /** Every record of partition 0 of {@code topic}, from its start to its end offset now. */
    private List<ConsumerRecord<String, String>> drain(String topic) {
        Properties properties = ClusterHarness.clientProperties(cluster.bootstrapServers());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        TopicPartition partition = new TopicPartition(topic, 0);
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), Duration.ofSeconds(30)).get(partition);
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (consumer.position(partition, Duration.ofSeconds(30)) < end) {
                assertThat(System.nanoTime()).as("drained %s to its end offset %d in time", partition, end).isLessThan(deadline);
                consumer.poll(Duration.ofMillis(500)).forEach(records::add);
            }
        }
        return records;
    }
}
