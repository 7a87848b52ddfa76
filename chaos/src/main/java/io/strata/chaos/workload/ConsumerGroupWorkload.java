package io.strata.chaos.workload;

import io.strata.chaos.history.AssignValue;
import io.strata.chaos.history.Message;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.PollValue;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * {@code consumers} consumers of one group, with {@code group.protocol=classic} or {@code consumer} (KIP-848),
 * reading one topic that the workload feeds itself (a {@link ProducerLoop}, recorded as plain sends). What it
 * finds: split ownership (two members owning a partition in one generation), non-monotonic polls within an
 * assignment, and, with the drain, lost or duplicated records.
 *
 * <p>Recording. A {@code poll} op is recorded after {@code poll()} returned, invoke and completion back to back:
 * the rebalance listener runs inside {@code poll()}, and its {@code assign} op (group, the generation from
 * {@code groupMetadata().generationId()} — the member epoch under the consumer protocol — and the whole
 * current assignment) must come, for the same process, before the messages of the new assignment and outside
 * any open op. Empty polls are not recorded. A poll that throws is an info (the position may have been reset)
 * and the consumer is replaced. After each non-empty poll the consumer commits the positions it read
 * ({@code commitSync}; a failed commit is only logged: the next owner re-reads from the last commit, which the
 * checker allows since an assign ends a run).
 *
 * <p>Churn: after a non-empty poll and its commit a consumer leaves (closes) with probability
 * {@link #LEAVE_PER_MILLE} per mille, and a new consumer — a new process id — joins in its place.
 *
 * <p>Thread-safe: {@link #start} and {@link #stop} are synchronized; each consumer is used by its thread only.
 */
public final class ConsumerGroupWorkload implements Workload {
    private static final Logger log = LoggerFactory.getLogger(ConsumerGroupWorkload.class);
    /**
     * Chance per recorded (non-empty) poll, in per mille, that the consumer then leaves the group and a new one
     * joins. Only after a poll that returned records, i.e. once the consumer has an assignment: leaving while a
     * classic join is pending would keep the group rebalancing for ever.
     */
    static final int LEAVE_PER_MILLE = 30;
    static final int MAX_POLL_RECORDS = 50;
    static final Duration POLL_TIMEOUT = Duration.ofMillis(200);
    static final long FEEDER_PAUSE_MS_MAX = 10;
    static final long REBUILD_BACKOFF_MS = 500;
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);
    static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(4);

    private final String topic;
    private final int partitions;
    private final int consumers;
    private final String groupProtocol;
    private final boolean readCommitted;
    private final List<Member> members = new ArrayList<>();
    private ProducerLoop feeder;
    private boolean started;
    private boolean stopped;

    /**
     * @param groupProtocol {@code classic} or {@code consumer}
     * @param readCommitted the consumers' isolation level
     */
    public ConsumerGroupWorkload(String topic, int partitions, int consumers, String groupProtocol, boolean readCommitted) {
        String protocol = groupProtocol.toLowerCase(Locale.ROOT);
        if (!protocol.equals("classic") && !protocol.equals("consumer")) {
            throw new IllegalArgumentException("groupProtocol must be classic or consumer: groupProtocol=" + groupProtocol);
        }
        if (partitions < 1 || consumers < 1) {
            throw new IllegalArgumentException("partitions and consumers must be >= 1: partitions=" + partitions + " consumers=" + consumers);
        }
        this.topic = topic;
        this.partitions = partitions;
        this.consumers = consumers;
        this.groupProtocol = protocol;
        this.readCommitted = readCommitted;
    }

    @Override
    public String name() {
        return "group-" + groupProtocol;
    }

    @Override
    public List<TopicSpec> topics() {
        return List.of(new TopicSpec(topic, partitions, (short) 3, Map.of("min.insync.replicas", "2")));
    }

    @Override
    public synchronized void start(WorkloadContext context) {
        if (started) {
            throw new IllegalStateException("workload " + name() + " already started");
        }
        started = true;
        Random seeds = new Random(context.seed());
        String feederId = "chaos-" + name() + "-feeder";
        feeder = new ProducerLoop(feederId, ClientConfigs.idempotentProducer(context.bootstrapServers(), feederId), topic, partitions, 3,
                context.recorder(), new Random(seeds.nextLong()), FEEDER_PAUSE_MS_MAX);
        feeder.start();
        String group = "chaos-" + name() + "-" + Long.toHexString(context.seed());
        for (int i = 0; i < consumers; i++) {
            Member member = new Member(context, i, group, new Random(seeds.nextLong()));
            members.add(member);
            member.thread.start();
        }
    }

    @Override
    public synchronized void stop(Duration timeout) throws InterruptedException {
        if (stopped || !started) {
            stopped = true;
            return;
        }
        stopped = true;
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        feeder.requestStop();
        members.forEach(member -> member.running = false);
        for (Member member : members) {
            member.awaitExit(Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())));
        }
        feeder.stop(Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())));
    }

    /** The consumers of one member slot, one after another (a leave makes a new one), on one thread. */
    private final class Member implements ConsumerRebalanceListener {
        private final WorkloadContext context;
        private final Recorder recorder;
        private final String clientId;
        private final String group;
        private final Random random;
        private final Thread thread;
        private volatile boolean running = true;
        private volatile KafkaConsumer<byte[], byte[]> consumer;
        private int process;

        Member(WorkloadContext context, int index, String group, Random random) {
            this.context = context;
            this.recorder = context.recorder();
            this.clientId = "chaos-" + name() + "-" + index;
            this.group = group;
            this.random = random;
            this.thread = new Thread(this::runSafely, clientId);
            this.thread.setDaemon(true);
        }

        void awaitExit(Duration timeout) throws InterruptedException {
            thread.join(Math.max(1, timeout.toMillis()));
            if (thread.isAlive()) {
                KafkaConsumer<byte[], byte[]> current = consumer;
                if (current != null) {
                    current.wakeup();
                }
                thread.interrupt();
                thread.join(CLOSE_TIMEOUT.toMillis());
            }
        }

        private void runSafely() {
            try {
                while (running) {
                    step();
                }
            } catch (InterruptedException | InterruptException | WakeupException e) {
                // stop() woke us up
            } catch (RuntimeException | Error e) {
                log.error("{}: consumer died", clientId, e);
                throw e;
            } finally {
                closeConsumer();
            }
        }

        private void step() throws InterruptedException {
            if (consumer == null && !join()) {
                Thread.sleep(REBUILD_BACKOFF_MS);
                return;
            }
            ConsumerRecords<byte[], byte[]> records;
            try {
                records = consumer.poll(POLL_TIMEOUT);
            } catch (WakeupException | InterruptException e) {
                throw e;
            } catch (KafkaException | IllegalStateException e) {
                log.info("{}: poll failed, new consumer: {}", clientId, e.toString());
                PendingOp.invoke(recorder, process, Op.Function.POLL, new PollValue(readCommitted, List.of())).abandon();
                closeConsumer();
                return;
            }
            if (records.isEmpty()) {
                return;
            }
            List<Message> messages = new ArrayList<>();
            Map<TopicPartition, OffsetAndMetadata> next = new LinkedHashMap<>();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                messages.add(new Message(RecordValues.partition(record.topic(), record.partition()), record.offset(),
                        RecordValues.decode(record.value())));
                next.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1, record.leaderEpoch(), ""));
            }
            PollValue value = new PollValue(readCommitted, messages);
            PendingOp.invoke(recorder, process, Op.Function.POLL, new PollValue(readCommitted, List.of())).complete(Op.Type.OK, value);
            try {
                consumer.commitSync(next, COMMIT_TIMEOUT);
            } catch (WakeupException | InterruptException e) {
                throw e;
            } catch (KafkaException e) {
                log.debug("{}: commit failed: {}", clientId, e.toString());
            }
            if (random.nextInt(1000) < LEAVE_PER_MILLE) {
                log.debug("{}: leaving the group (process {})", clientId, process);
                closeConsumer();
            }
        }

        private boolean join() {
            try {
                KafkaConsumer<byte[], byte[]> created = new KafkaConsumer<>(ClientConfigs.consumer(context.bootstrapServers(), clientId, group,
                        groupProtocol, readCommitted, MAX_POLL_RECORDS));
                process = recorder.newProcess();
                consumer = created;
                created.subscribe(List.of(topic), this);
                return true;
            } catch (KafkaException e) {
                log.info("{}: cannot build a consumer: {}", clientId, e.toString());
                return false;
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> added) {
            // The whole assignment: the cooperative assignor and the consumer protocol pass only what was added.
            List<String> owned = new ArrayList<>();
            for (TopicPartition tp : consumer.assignment()) {
                owned.add(RecordValues.partition(tp.topic(), tp.partition()));
            }
            owned.sort(null);
            AssignValue value = new AssignValue(group, consumer.groupMetadata().generationId(), owned);
            PendingOp.invoke(recorder, process, Op.Function.ASSIGN, value).complete(Op.Type.OK, value);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
            // Positions were committed after every poll; nothing more to do before giving partitions up.
        }

        private void closeConsumer() {
            KafkaConsumer<byte[], byte[]> current = consumer;
            consumer = null;
            if (current != null) {
                try {
                    current.close(CLOSE_TIMEOUT);
                } catch (RuntimeException e) {
                    log.info("{}: closing the consumer: {}", clientId, e.toString());
                }
            }
        }
    }
}
