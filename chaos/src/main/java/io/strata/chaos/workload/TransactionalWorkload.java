package io.strata.chaos.workload;

import io.strata.chaos.history.AssignValue;
import io.strata.chaos.history.MicroOp;
import io.strata.chaos.history.Op;
import io.strata.chaos.history.TxnValue;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
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
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * Consume-transform-produce, as Kafka's exactly-once applications do it: {@code workers} pairs of a
 * transactional producer and a read_committed consumer of one group. The workload feeds its own input topic
 * (a {@link ProducerLoop}, recorded as plain sends), so it runs alone or beside any other workload.
 *
 * <p>One transaction, recorded as one {@code txn} op of the worker's process:
 * <ol>
 *   <li>{@code poll()} the input (outside the op: the rebalance listener runs inside {@code poll()} and records
 *       the worker's {@code assign} ops, which must not fall inside the txn op of the same process; an empty
 *       poll makes no transaction);</li>
 *   <li>invoke: the polled messages as poll micro-ops, and 2..4 new unique values to send to at least 2
 *       distinct partitions of the output topic (offset -1);</li>
 *   <li>{@code beginTransaction}, the sends, {@code sendOffsetsToTransaction} (the positions after the polled
 *       records, with the consumer's group metadata, so a zombie of an old generation is fenced), {@code flush};
 *       then, for a seeded {@link #ABORT_PERCENT} of transactions, {@code abortTransaction}, else
 *       {@code commitTransaction};</li>
 *   <li>completion: ok when commit returned; fail when we aborted, or when anything failed before commit was
 *       called (such a transaction can never commit, {@link Outcomes#unfinishedTxn}); info when commit threw
 *       or never returned. Acknowledged offsets are filled in whatever the outcome.</li>
 * </ol>
 * After a fail the consumer seeks back to the first offsets the transaction polled (they were not consumed);
 * after an info the producer is replaced (a new instance with the same transactional id fences the old one and
 * resolves its pending transaction in {@code initTransactions}), the process id too, and the consumer seeks to
 * the group's committed offsets. Any fatal producer error ({@link Outcomes#producerUnusable}: fenced, invalid
 * epoch) also replaces the producer.
 *
 * <p>Thread-safe: {@link #start} and {@link #stop} are synchronized; each worker's clients are used by its
 * thread only.
 */
public final class TransactionalWorkload implements Workload {
    private static final Logger log = LoggerFactory.getLogger(TransactionalWorkload.class);
    /** Percent of transactions the workload aborts on purpose. */
    static final int ABORT_PERCENT = 20;
    /** Records one transaction reads at most. */
    static final int MAX_POLL_RECORDS = 8;
    /** Sends per transaction: 2..(2 + EXTRA_SENDS_MAX). */
    static final int EXTRA_SENDS_MAX = 2;
    static final Duration POLL_TIMEOUT = Duration.ofMillis(200);
    /** The feeder's pause between sends: the input grows by some 100 records/s. */
    static final long FEEDER_PAUSE_MS_MAX = 20;
    /** Between two attempts to build a client whose construction or initialization threw. */
    static final long REBUILD_BACKOFF_MS = 500;
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);

    private final String inputTopic;
    private final String outputTopic;
    private final int partitions;
    private final int workers;
    private final List<Worker> running = new ArrayList<>();
    private ProducerLoop feeder;
    private boolean started;
    private boolean stopped;

    public TransactionalWorkload(String inputTopic, String outputTopic, int partitions, int workers) {
        if (partitions < 2 || workers < 1) {
            throw new IllegalArgumentException("partitions must be >= 2 (transactions write to 2 of them) and workers >= 1: partitions="
                    + partitions + " workers=" + workers);
        }
        this.inputTopic = inputTopic;
        this.outputTopic = outputTopic;
        this.partitions = partitions;
        this.workers = workers;
    }

    @Override
    public String name() {
        return "transactional";
    }

    @Override
    public List<TopicSpec> topics() {
        Map<String, String> configs = Map.of("min.insync.replicas", "2");
        return List.of(new TopicSpec(inputTopic, partitions, (short) 3, configs), new TopicSpec(outputTopic, partitions, (short) 3, configs));
    }

    @Override
    public synchronized void start(WorkloadContext context) {
        if (started) {
            throw new IllegalStateException("workload " + name() + " already started");
        }
        started = true;
        Random seeds = new Random(context.seed());
        feeder = new ProducerLoop("chaos-txn-feeder", ClientConfigs.idempotentProducer(context.bootstrapServers(), "chaos-txn-feeder"),
                inputTopic, partitions, 2, context.recorder(), new Random(seeds.nextLong()), FEEDER_PAUSE_MS_MAX);
        feeder.start();
        String group = "chaos-txn-" + Long.toHexString(context.seed());
        for (int i = 0; i < workers; i++) {
            Worker worker = new Worker(context, i, group, new Random(seeds.nextLong()));
            running.add(worker);
            worker.thread.start();
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
        running.forEach(worker -> worker.running = false);
        for (Worker worker : running) {
            worker.awaitExit(Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())));
        }
        feeder.stop(Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())));
    }

    /** One transactional producer and its consumer, on one thread. */
    private final class Worker implements ConsumerRebalanceListener {
        private final WorkloadContext context;
        private final Recorder recorder;
        private final String transactionalId;
        private final String group;
        private final Random random;
        private final Thread thread;
        private volatile boolean running = true;
        private volatile PendingOp open;
        private volatile KafkaConsumer<byte[], byte[]> consumer;
        private KafkaProducer<byte[], byte[]> producer;
        private volatile int process;
        private boolean rewindToCommitted;

        Worker(WorkloadContext context, int index, String group, Random random) {
            this.context = context;
            this.recorder = context.recorder();
            this.transactionalId = "chaos-txn-" + Long.toHexString(context.seed()) + "-" + index;
            this.group = group;
            this.random = random;
            this.process = recorder.newProcess();
            this.thread = new Thread(this::runSafely, "chaos-txn-" + index);
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
            PendingOp pending = open;
            if (pending != null && pending.abandon()) {
                log.warn("{}: a transaction was still open when the workload stopped; recorded info", transactionalId);
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
                log.error("{}: transactional worker died", transactionalId, e);
                throw e;
            } finally {
                closeProducer();
                closeConsumer();
            }
        }

        private void step() throws InterruptedException {
            if (!ensureProducer() || !ensureConsumer()) {
                Thread.sleep(REBUILD_BACKOFF_MS);
                return;
            }
            ConsumerRecords<byte[], byte[]> records;
            try {
                records = consumer.poll(POLL_TIMEOUT);
            } catch (WakeupException | InterruptException e) {
                throw e;
            } catch (KafkaException e) {
                log.warn("{}: poll failed, new consumer: {}", transactionalId, e.toString());
                closeConsumer();
                return;
            }
            if (!records.isEmpty()) {
                transaction(records);
            }
        }

        private void transaction(ConsumerRecords<byte[], byte[]> records) {
            List<MicroOp> polls = new ArrayList<>();
            Map<TopicPartition, Long> firstOffsets = new LinkedHashMap<>();
            Map<TopicPartition, OffsetAndMetadata> nextOffsets = new LinkedHashMap<>();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                polls.add(MicroOp.poll(RecordValues.partition(record.topic(), record.partition()), record.offset(),
                        RecordValues.decode(record.value())));
                firstOffsets.putIfAbsent(tp, record.offset());
                nextOffsets.put(tp, new OffsetAndMetadata(record.offset() + 1, record.leaderEpoch(), ""));
            }
            int[] sendPartitions = sendPartitions();
            long[] values = new long[sendPartitions.length];
            List<MicroOp> planned = new ArrayList<>(polls);
            for (int i = 0; i < values.length; i++) {
                values[i] = recorder.nextValue();
                planned.add(MicroOp.send(RecordValues.partition(outputTopic, sendPartitions[i]), -1, values[i]));
            }
            boolean abort = random.nextInt(100) < ABORT_PERCENT;
            PendingOp op = PendingOp.invoke(recorder, process, Op.Function.TXN, new TxnValue(true, planned));
            open = op;
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            boolean commitCalled = false;
            try {
                producer.beginTransaction();
                for (int i = 0; i < values.length; i++) {
                    futures.add(producer.send(new ProducerRecord<>(outputTopic, sendPartitions[i], null, RecordValues.encode(values[i]))));
                }
                producer.sendOffsetsToTransaction(nextOffsets, consumer.groupMetadata());
                producer.flush();
                awaitAll(futures);
                if (abort) {
                    producer.abortTransaction();
                    op.complete(Op.Type.FAIL, completed(polls, sendPartitions, values, futures));
                    seek(firstOffsets);
                    return;
                }
                commitCalled = true;
                producer.commitTransaction();
                op.complete(Op.Type.OK, completed(polls, sendPartitions, values, futures));
            } catch (RuntimeException | ExecutionException e) {
                unfinished(op, e, commitCalled, polls, sendPartitions, values, futures, firstOffsets);
            } finally {
                open = null;
            }
        }

        private void unfinished(PendingOp op, Exception e, boolean commitCalled, List<MicroOp> polls, int[] sendPartitions,
                                long[] values, List<Future<RecordMetadata>> futures, Map<TopicPartition, Long> firstOffsets) {
            Exception cause = e instanceof ExecutionException && e.getCause() instanceof Exception c ? c : e;
            Op.Type outcome = Outcomes.unfinishedTxn(commitCalled);
            log.info("{}: transaction ended {} ({}commit called): {}", transactionalId, outcome, commitCalled ? "" : "no ", cause.toString());
            boolean replace = commitCalled || Outcomes.producerUnusable(cause);
            if (!replace) {
                try {
                    producer.abortTransaction();
                } catch (RuntimeException abortError) {
                    log.info("{}: abort after {} failed too: {}", transactionalId, cause.toString(), abortError.toString());
                    replace = true;
                }
            }
            op.complete(outcome, completed(polls, sendPartitions, values, futures));
            if (replace) {
                closeProducer();
            }
            if (outcome == Op.Type.INFO) {
                process = recorder.newProcess();
                rewindToCommitted = true;
            } else {
                seek(firstOffsets);
            }
        }

        /** 2..4 output partitions, the first two distinct. */
        private int[] sendPartitions() {
            int[] chosen = new int[2 + random.nextInt(EXTRA_SENDS_MAX + 1)];
            chosen[0] = random.nextInt(partitions);
            chosen[1] = (chosen[0] + 1 + random.nextInt(partitions - 1)) % partitions;
            for (int i = 2; i < chosen.length; i++) {
                chosen[i] = random.nextInt(partitions);
            }
            return chosen;
        }

        private TxnValue completed(List<MicroOp> polls, int[] sendPartitions, long[] values, List<Future<RecordMetadata>> futures) {
            List<MicroOp> ops = new ArrayList<>(polls);
            for (int i = 0; i < values.length; i++) {
                ops.add(MicroOp.send(RecordValues.partition(outputTopic, sendPartitions[i]), offsetIfAcked(futures, i), values[i]));
            }
            return new TxnValue(true, ops);
        }

        private static long offsetIfAcked(List<Future<RecordMetadata>> futures, int i) {
            if (i >= futures.size() || !futures.get(i).isDone()) {
                return -1;
            }
            try {
                RecordMetadata metadata = futures.get(i).get();
                return metadata.hasOffset() ? metadata.offset() : -1;
            } catch (ExecutionException | InterruptedException | RuntimeException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                return -1;
            }
        }

        private static void awaitAll(List<Future<RecordMetadata>> futures) throws ExecutionException {
            for (Future<RecordMetadata> future : futures) {
                try {
                    future.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptException(e);
                }
            }
        }

        private void seek(Map<TopicPartition, Long> offsets) {
            try {
                offsets.forEach((tp, offset) -> consumer.seek(tp, offset));
            } catch (IllegalStateException | KafkaException e) {
                log.info("{}: cannot seek back ({}), new consumer", transactionalId, e.toString());
                closeConsumer();
            }
        }

        private boolean ensureProducer() {
            if (producer != null) {
                return true;
            }
            KafkaProducer<byte[], byte[]> created = null;
            try {
                created = new KafkaProducer<>(ClientConfigs.transactionalProducer(context.bootstrapServers(), transactionalId, transactionalId));
                created.initTransactions();
                producer = created;
            } catch (KafkaException e) {
                log.info("{}: cannot initialize a transactional producer: {}", transactionalId, e.toString());
                if (created != null) {
                    created.close(Duration.ZERO);
                }
                return false;
            }
            if (rewindToCommitted && consumer != null) {
                rewindToCommitted();
            }
            return true;
        }

        /** After an unknown outcome: the group's committed offsets are the truth (initTransactions resolved it). */
        private void rewindToCommitted() {
            rewindToCommitted = false;
            try {
                Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(consumer.assignment());
                List<TopicPartition> none = new ArrayList<>();
                committed.forEach((tp, offset) -> {
                    if (offset == null) {
                        none.add(tp);
                    } else {
                        consumer.seek(tp, offset);
                    }
                });
                for (TopicPartition tp : consumer.assignment()) {
                    if (!committed.containsKey(tp)) {
                        none.add(tp);
                    }
                }
                consumer.seekToBeginning(none);
            } catch (KafkaException e) {
                log.info("{}: cannot read committed offsets ({}), new consumer", transactionalId, e.toString());
                closeConsumer();
            }
        }

        private boolean ensureConsumer() {
            if (consumer != null) {
                return true;
            }
            try {
                KafkaConsumer<byte[], byte[]> created = new KafkaConsumer<>(ClientConfigs.consumer(context.bootstrapServers(),
                        transactionalId + "-consumer", group, "classic", true, MAX_POLL_RECORDS));
                created.subscribe(List.of(inputTopic), this);
                consumer = created;
                rewindToCommitted = false; // a new member starts from the committed offsets anyway
                return true;
            } catch (KafkaException e) {
                log.info("{}: cannot build a consumer: {}", transactionalId, e.toString());
                return false;
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> added) {
            // Called inside poll(), when no txn op of this process is open. The whole assignment, not just the
            // added partitions: the cooperative assignor passes only what is new.
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
            // No transaction is open while the consumer polls, so there is nothing to commit or abort here.
        }

        private void closeProducer() {
            if (producer != null) {
                try {
                    producer.close(CLOSE_TIMEOUT);
                } catch (RuntimeException e) {
                    log.info("{}: closing the producer: {}", transactionalId, e.toString());
                }
                producer = null;
            }
        }

        private void closeConsumer() {
            KafkaConsumer<byte[], byte[]> current = consumer;
            consumer = null;
            if (current != null) {
                try {
                    current.close(CLOSE_TIMEOUT);
                } catch (RuntimeException e) {
                    log.info("{}: closing the consumer: {}", transactionalId, e.toString());
                }
            }
        }
    }
}
