package io.strata.coordinator.transaction;

import io.strata.common.BackgroundErrors;
import io.strata.common.BackgroundExecutors;
import io.strata.common.Time;
import io.strata.coordinator.group.CoordinatorLog;
import io.strata.coordinator.group.consumer.CoordinatorTimer;
import io.strata.coordinator.group.consumer.ExecutorCoordinatorTimer;
import io.strata.coordinator.record.TransactionLogKey;
import io.strata.coordinator.record.TransactionLogValue;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Message;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.Reader;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The transaction coordinator: transactional ids → producer id, epoch and transaction state,
 * persisted in {@code __transaction_state} (partition {@code abs(hash(id)) % partitions}) before
 * each transition is acknowledged. Two-phase commit: EndTxn persists PrepareCommit/PrepareAbort
 * and answers; markers are then written to every partition of the transaction and
 * CompleteCommit/CompleteAbort is persisted. A restart resumes the marker phase of prepared
 * transactions from the log. Transactions that outlive their timeout are aborted with an epoch
 * bump, which fences the zombie producer.
 *
 * <p>Transactions v2 (KIP-890 part 2, a client sending EndTxn v5+): partitions join the transaction
 * implicitly when their leader calls {@link #addPartitions} for the client's first write (Produce
 * v12) or offset commit (TxnOffsetCommit v5), and every EndTxn bumps the producer epoch when it
 * persists PrepareCommit/PrepareAbort. The markers carry the bumped epoch, so a late write of the
 * finished transaction is refused as from an older epoch, and the EndTxn response hands the client
 * the new epoch (or, when the epoch is exhausted, a new producer id at epoch 0). EndTxn outcomes by
 * state, for the client's current epoch and for a retry with the epoch before the bump (Kafka's table):
 * <pre>
 *                  abort: retry  current      commit: retry  current
 *  Empty                  FENCED bump+abort           FENCED INVALID_TXN_STATE
 *  CompleteAbort          NONE   bump+abort           ITS    INVALID_TXN_STATE
 *  CompleteCommit         ITS    bump+abort           NONE   INVALID_TXN_STATE
 *  Ongoing                FENCED bump+abort           FENCED bump+commit
 *  Prepare*               retry: CONCURRENT_TRANSACTIONS for the same result, INVALID_TXN_STATE for the other;
 *                         current (the client holds the bumped epoch and is ending its next transaction
 *                         before this one completed): CONCURRENT_TRANSACTIONS, which it retries
 * </pre>
 *
 * <p>Transactional ids idle in Empty, CompleteCommit or CompleteAbort for longer than
 * {@code transactional.id.expiration.ms} are removed by a tombstone in the state log.
 *
 * <p>Periodic work (the timeout scan every {@code transaction.abort.timed.out.transaction.cleanup.interval.ms},
 * the expiration pass every {@code transaction.remove.expired.transaction.cleanup.interval.ms}) runs
 * on each shard's {@link CoordinatorTimer}, guarded: a pass that throws is logged with its
 * partition, counted in {@link BackgroundErrors} (tasks {@value #TIMEOUT_TASK} and
 * {@value #EXPIRATION_TASK}) and runs again at its next interval.
 *
 * <p>Threading: every transactional id's state is touched only on its partition's thread.
 */
public final class TransactionCoordinator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionCoordinator.class);
    private static final long MARKER_RETRY_BACKOFF_MS = 100;
    /** Background task names (metric labels) of the periodic passes and of the shard threads' other work. */
    public static final String TIMEOUT_TASK = "txn-abort-timed-out";
    public static final String EXPIRATION_TASK = "txn-expire-transactional-ids";
    public static final String SHARD_THREAD_TASK = "txn-coordinator-thread";
    private static final String TIMEOUT_TIMER_KEY = "abort-timed-out-transactions";
    private static final String EXPIRATION_TIMER_KEY = "expire-transactional-ids";

    private final TransactionCoordinatorSettings settings;
    private final CoordinatorLog log;
    private final MarkerWriter markers;
    private final LongSupplier producerIds;
    private final Time time;
    private final ScheduledExecutorService[] threads;
    private final Function<ScheduledExecutorService, CoordinatorTimer> timers;
    private final BackgroundErrors backgroundErrors;
    private final Map<Integer, Shard> shards = new ConcurrentHashMap<>();

    /** The state of one {@code __transaction_state} partition. */
    private final class Shard {
        final int partition;
        final ScheduledExecutorService executor;
        /** The shard's periodic passes; used only on the shard's thread. */
        final CoordinatorTimer timer;
        final Map<String, TransactionMetadata> transactions = new HashMap<>();
        volatile boolean loaded;
        /** The coordinator epoch written into markers: the partition's leader epoch. */
        int coordinatorEpoch;

        Shard(int partition, ScheduledExecutorService executor, CoordinatorTimer timer) {
            this.partition = partition;
            this.executor = executor;
            this.timer = timer;
        }
    }

    public TransactionCoordinator(TransactionCoordinatorSettings settings, CoordinatorLog log, MarkerWriter markers, LongSupplier producerIds,
                                  Time time, int threadCount) {
        this(settings, log, markers, producerIds, time, threadCount, ExecutorCoordinatorTimer::new, new BackgroundErrors());
    }

    /**
     * @param timers makes each shard's timer from the shard's thread; production passes
     *               {@link ExecutorCoordinatorTimer}, tests a timer on their mock clock
     * @param backgroundErrors where failures of the periodic passes and of other shard-thread work are counted
     */
    public TransactionCoordinator(TransactionCoordinatorSettings settings, CoordinatorLog log, MarkerWriter markers, LongSupplier producerIds,
                                  Time time, int threadCount, Function<ScheduledExecutorService, CoordinatorTimer> timers,
                                  BackgroundErrors backgroundErrors) {
        this.settings = settings;
        this.log = log;
        this.markers = markers;
        this.producerIds = producerIds;
        this.time = time;
        this.timers = timers;
        this.backgroundErrors = backgroundErrors;
        this.threads = new ScheduledExecutorService[Math.max(1, threadCount)];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = BackgroundExecutors.singleThreadScheduler("strata-txn-coordinator-" + i, SHARD_THREAD_TASK, backgroundErrors, LOG);
        }
    }

    public int partitionFor(String transactionalId) {
        return io.strata.coordinator.CoordinatorPlacement.partitionFor(transactionalId, settings.stateLogPartitions());
    }

    public int stateLogPartitions() {
        return settings.stateLogPartitions();
    }

    /**
     * The partitions this node leads now, with their leader epochs (the whole set, after every
     * metadata change). A new partition is replayed, its prepared transactions resumed and its
     * timeout scan started; a partition no longer led here is unloaded (its transactional ids
     * answer NOT_COORDINATOR and its timers stop), as Kafka's coordinator resigns; a partition led
     * at a new leader epoch is unloaded and loaded again, so that its markers carry the new
     * coordinator epoch.
     */
    public void onPartitionsLed(Map<Integer, Integer> partitionLeaderEpochs) {
        for (Map.Entry<Integer, Shard> entry : shards.entrySet()) {
            Integer epoch = partitionLeaderEpochs.get(entry.getKey());
            Shard shard = entry.getValue();
            if ((epoch == null || epoch != shard.coordinatorEpoch) && shards.remove(entry.getKey(), shard)) {
                shard.executor.execute(() -> {
                    shard.loaded = false;
                    shard.timer.cancelAll();
                });
                LOG.info("Unloading __transaction_state-{} (coordinator epoch {}): this node {}", entry.getKey(), shard.coordinatorEpoch,
                    epoch == null ? "no longer leads it" : "leads it at epoch " + epoch + " now");
            }
        }
        for (Map.Entry<Integer, Integer> entry : partitionLeaderEpochs.entrySet()) {
            shards.computeIfAbsent(entry.getKey(), p -> {
                ScheduledExecutorService executor = threads[p % threads.length];
                Shard shard = new Shard(p, executor, timers.apply(executor));
                shard.coordinatorEpoch = entry.getValue();
                executor.execute(() -> {
                    load(shard);
                    schedulePeriodicPasses(shard);
                });
                return shard;
            });
        }
    }

    /** Starts the shard's timeout scan and expiration pass; on the shard's thread. */
    private void schedulePeriodicPasses(Shard shard) {
        String context = "__transaction_state-" + shard.partition;
        shard.timer.schedulePeriodic(TIMEOUT_TIMER_KEY, settings.abortTimedOutCheckIntervalMs(),
            backgroundErrors.guard(TIMEOUT_TASK, LOG, context, () -> abortTimedOut(shard)));
        shard.timer.schedulePeriodic(EXPIRATION_TIMER_KEY, settings.removeExpiredCheckIntervalMs(),
            backgroundErrors.guard(EXPIRATION_TASK, LOG, context, () -> expireTransactionalIds(shard)));
    }

    // ---------------------------------------------------------------- persistence

    private static byte[] encode(short version, Message message) {
        ByteBuffer buffer = ByteBuffer.allocate(2 + message.size(version));
        buffer.putShort(version);
        message.write(new ByteBufferWriter(buffer), version);
        return buffer.array();
    }

    /**
     * One record of the state log: the transactional id's state after a transition. Transactions
     * v2 records are written as value version 1, whose tagged fields carry the previous and next
     * producer ids and the client's transaction version; v1 records stay at version 0.
     */
    private record Transition(TransactionState state, long producerId, short producerEpoch, Set<TransactionMetadata.TxnPartition> partitions,
                              long previousProducerId, long nextProducerId, short clientTransactionVersion, long startTimestampMs) {
        static Transition of(TransactionMetadata txn, TransactionState state, short epoch, long producerId,
                             Set<TransactionMetadata.TxnPartition> partitions) {
            return new Transition(state, producerId, epoch, partitions, txn.lastProducerId, txn.nextProducerId, txn.clientTransactionVersion,
                txn.startTimestampMs);
        }
    }

    private byte[] value(TransactionMetadata txn, Transition transition) {
        TransactionLogValue value = new TransactionLogValue().setProducerId(transition.producerId()).setProducerEpoch(transition.producerEpoch())
            .setTransactionTimeoutMs(txn.timeoutMs).setTransactionStatus(transition.state().id)
            .setTransactionLastUpdateTimestampMs(time.milliseconds()).setTransactionStartTimestampMs(transition.startTimestampMs())
            .setPreviousProducerId(transition.previousProducerId()).setNextProducerId(transition.nextProducerId())
            .setClientTransactionVersion(transition.clientTransactionVersion());
        Map<String, List<Integer>> byTopic = new java.util.LinkedHashMap<>();
        for (TransactionMetadata.TxnPartition partition : transition.partitions()) {
            byTopic.computeIfAbsent(partition.topic(), t -> new ArrayList<>()).add(partition.partition());
        }
        for (Map.Entry<String, List<Integer>> topic : byTopic.entrySet()) {
            value.transactionPartitions().add(new TransactionLogValue.PartitionsSchema().setTopic(topic.getKey()).setPartitionIds(topic.getValue()));
        }
        short version = transition.clientTransactionVersion() >= TransactionMetadata.TRANSACTION_VERSION_2 ? (short) 1 : (short) 0;
        return encode(version, value);
    }

    /** Persists a transition; {@code done} runs on the shard's thread with NONE or the write's error. */
    private void persist(Shard shard, TransactionMetadata txn, TransactionState state, short epoch, long producerId,
                         Set<TransactionMetadata.TxnPartition> partitions, Consumer<ErrorCode> done) {
        persist(shard, txn, Transition.of(txn, state, epoch, producerId, partitions), done);
    }

    private void persist(Shard shard, TransactionMetadata txn, Transition transition, Consumer<ErrorCode> done) {
        write(shard, txn, transition.state(), value(txn, transition), done);
    }

    /** Appends the record (a null value is a tombstone) with {@code pending} as the pending state meanwhile. */
    private void write(Shard shard, TransactionMetadata txn, TransactionState pending, byte[] value, Consumer<ErrorCode> done) {
        txn.pendingState = pending;
        byte[] key = encode((short) 0, new TransactionLogKey().setTransactionalId(txn.transactionalId));
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
            .append(time.milliseconds(), key, value);
        try {
            log.append(shard.partition, builder.build(), error -> shard.executor.execute(() -> {
                txn.pendingState = null;
                done.accept(error);
            }));
        } catch (RuntimeException e) {
            // Nothing was written: without this the id would stay pending (CONCURRENT_TRANSACTIONS) for good.
            txn.pendingState = null;
            throw e;
        }
    }

    private void load(Shard shard) {
        log.replay(shard.partition, (key, value) -> {
            try {
                Reader keyReader = new Reader(key.duplicate());
                if (keyReader.readShort() != 0) {
                    return;
                }
                String id = new TransactionLogKey(keyReader, (short) 0).transactionalId();
                if (value == null) {
                    shard.transactions.remove(id);
                    return;
                }
                Reader valueReader = new Reader(value.duplicate());
                short version = valueReader.readShort();
                TransactionLogValue stored = new TransactionLogValue(valueReader, version);
                TransactionMetadata txn = shard.transactions.get(id);
                if (txn == null) {
                    txn = new TransactionMetadata(id, stored.producerId(), stored.producerEpoch(), stored.transactionTimeoutMs(),
                        TransactionState.fromId(stored.transactionStatus()), stored.transactionLastUpdateTimestampMs());
                    shard.transactions.put(id, txn);
                }
                if (txn.producerId != stored.producerId()) {
                    txn.lastProducerId = txn.producerId;
                }
                if (stored.previousProducerId() != TransactionMetadata.NO_PRODUCER_ID) {
                    txn.lastProducerId = stored.previousProducerId();
                }
                txn.nextProducerId = stored.nextProducerId();
                txn.clientTransactionVersion = stored.clientTransactionVersion();
                if (txn.producerId != stored.producerId() || txn.producerEpoch != stored.producerEpoch()) {
                    txn.lastProducerEpoch = txn.producerEpoch;
                }
                txn.producerId = stored.producerId();
                txn.producerEpoch = stored.producerEpoch();
                txn.timeoutMs = stored.transactionTimeoutMs();
                txn.state = TransactionState.fromId(stored.transactionStatus());
                txn.startTimestampMs = stored.transactionStartTimestampMs();
                txn.lastUpdateTimestampMs = stored.transactionLastUpdateTimestampMs();
                txn.partitions.clear();
                if (stored.transactionPartitions() != null) {
                    for (TransactionLogValue.PartitionsSchema topic : stored.transactionPartitions()) {
                        for (int partition : topic.partitionIds()) {
                            txn.partitions.add(new TransactionMetadata.TxnPartition(topic.topic(), partition));
                        }
                    }
                }
            } catch (ProtocolException | IllegalArgumentException e) {
                LOG.warn("Skipping an unreadable record in __transaction_state-{}: {}", shard.partition, e.getMessage());
            }
        });
        shard.loaded = true;
        for (TransactionMetadata txn : shard.transactions.values()) {
            if (txn.state == TransactionState.PREPARE_COMMIT || txn.state == TransactionState.PREPARE_ABORT) {
                LOG.info("Resuming the {} of transaction {} after a restart", txn.state == TransactionState.PREPARE_COMMIT ? "commit" : "abort",
                    txn.transactionalId);
                sendMarkers(shard, txn, txn.state == TransactionState.PREPARE_COMMIT);
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    private <T> CompletableFuture<T> onShard(String transactionalId, T notCoordinator,
                                             java.util.function.BiConsumer<Shard, CompletableFuture<T>> operation) {
        Shard shard = shards.get(partitionFor(transactionalId));
        if (shard == null) {
            return CompletableFuture.completedFuture(notCoordinator);
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        shard.executor.execute(() -> {
            try {
                operation.accept(shard, result);
            } catch (Throwable e) {
                LOG.error("Transaction coordinator operation on {} failed", transactionalId, e);
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Kafka's mapping of state-log write errors for transactional clients. */
    static ErrorCode mapWriteError(ErrorCode error) {
        return switch (error) {
            case NONE -> ErrorCode.NONE;
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT -> ErrorCode.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> ErrorCode.NOT_COORDINATOR;
            default -> ErrorCode.UNKNOWN_SERVER_ERROR;
        };
    }

    /** Common producer checks of AddPartitions, AddOffsets and EndTxn; null when valid. */
    private static ErrorCode validateProducer(TransactionMetadata txn, long producerId, short producerEpoch) {
        if (txn == null || txn.producerId != producerId) {
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
        }
        if (txn.producerEpoch != producerEpoch) {
            return ErrorCode.PRODUCER_FENCED;
        }
        if (txn.pendingState != null) {
            return ErrorCode.CONCURRENT_TRANSACTIONS;
        }
        return null;
    }

    // ---------------------------------------------------------------- InitProducerId

    /** The result of InitProducerId. */
    public record InitResult(ErrorCode error, long producerId, short producerEpoch) {
    }

    public CompletableFuture<InitResult> initProducerId(String transactionalId, int timeoutMs, long expectedProducerId, short expectedEpoch) {
        if (timeoutMs <= 0 || timeoutMs > settings.maxTimeoutMs()) {
            return CompletableFuture.completedFuture(new InitResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, (short) -1));
        }
        return onShard(transactionalId, new InitResult(ErrorCode.NOT_COORDINATOR, -1, (short) -1), (shard, result) -> {
            if (!shard.loaded) {
                result.complete(new InitResult(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1, (short) -1));
                return;
            }
            TransactionMetadata txn = shard.transactions.get(transactionalId);
            long now = time.milliseconds();
            if (txn == null) {
                txn = new TransactionMetadata(transactionalId, producerIds.getAsLong(), (short) -1, timeoutMs, TransactionState.EMPTY, now);
                shard.transactions.put(transactionalId, txn);
            }
            initExisting(shard, txn, timeoutMs, expectedProducerId, expectedEpoch, result);
        });
    }

    private void initExisting(Shard shard, TransactionMetadata txn, int timeoutMs, long expectedProducerId, short expectedEpoch,
                              CompletableFuture<InitResult> result) {
        if (txn.pendingState != null || txn.state == TransactionState.PREPARE_COMMIT || txn.state == TransactionState.PREPARE_ABORT
            || txn.state == TransactionState.PREPARE_EPOCH_FENCE) {
            result.complete(new InitResult(ErrorCode.CONCURRENT_TRANSACTIONS, -1, (short) -1));
            return;
        }
        if (expectedProducerId >= 0) {
            boolean current = expectedProducerId == txn.producerId && expectedEpoch == txn.producerEpoch;
            boolean retryOfBump = expectedProducerId == txn.lastProducerId && expectedEpoch == txn.lastProducerEpoch;
            if (retryOfBump && TransactionState.IDLE.contains(txn.state)) {
                result.complete(new InitResult(ErrorCode.NONE, txn.producerId, txn.producerEpoch));
                return;
            }
            if (!current) {
                result.complete(new InitResult(ErrorCode.PRODUCER_FENCED, -1, (short) -1));
                return;
            }
        }
        if (txn.state == TransactionState.ONGOING) {
            // A new producer instance with this id: fence the old one by aborting its transaction with a bumped epoch.
            fenceAndAbort(shard, txn);
            result.complete(new InitResult(ErrorCode.CONCURRENT_TRANSACTIONS, -1, (short) -1));
            return;
        }
        long producerId = txn.producerId;
        short epoch = (short) (txn.producerEpoch + 1);
        if (txn.producerEpoch >= Short.MAX_VALUE - 1) {
            producerId = producerIds.getAsLong();
            epoch = 0;
        }
        long newProducerId = producerId;
        short newEpoch = epoch;
        txn.timeoutMs = timeoutMs;
        persist(shard, txn, TransactionState.EMPTY, newEpoch, newProducerId, Set.of(), error -> {
            if (error != ErrorCode.NONE) {
                result.complete(new InitResult(mapWriteError(error), -1, (short) -1));
                return;
            }
            if (newProducerId != txn.producerId) {
                txn.lastProducerId = txn.producerId;
            }
            txn.lastProducerEpoch = txn.producerEpoch;
            txn.producerId = newProducerId;
            txn.producerEpoch = newEpoch;
            txn.state = TransactionState.EMPTY;
            txn.partitions.clear();
            txn.startTimestampMs = -1;
            txn.lastUpdateTimestampMs = time.milliseconds();
            result.complete(new InitResult(ErrorCode.NONE, newProducerId, newEpoch));
        });
    }

    /**
     * Aborts the open transaction with the epoch bumped once, which fences its producer. A
     * transactions v2 transaction is aborted as its EndTxn would have, so an exhausted epoch
     * rotates the producer id and the client's own late abort is answered as a retry.
     */
    private void fenceAndAbort(Shard shard, TransactionMetadata txn) {
        LOG.info("Fencing producer {} epoch {} of transactional id {}: aborting its open transaction with a bumped epoch", txn.producerId,
            txn.producerEpoch, txn.transactionalId);
        if (txn.supportsEpochBump()) {
            prepareEndV2(shard, txn, false, false, result -> { });
        } else {
            prepareEnd(shard, txn, false, (short) (txn.producerEpoch + 1), error -> { });
        }
    }

    // ---------------------------------------------------------------- AddPartitionsToTxn / AddOffsetsToTxn

    /** AddPartitionsToTxn / AddOffsetsToTxn from a transactions v1 client. */
    public CompletableFuture<ErrorCode> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                      Set<TransactionMetadata.TxnPartition> partitions) {
        return addPartitions(transactionalId, producerId, producerEpoch, partitions, (short) 0);
    }

    /**
     * Adds partitions to the producer's transaction, starting one if none is open. With
     * {@code clientTransactionVersion} 2 this is the implicit add of a partition leader (Produce
     * v12) or group coordinator (TxnOffsetCommit v5) on the client's behalf.
     */
    public CompletableFuture<ErrorCode> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                      Set<TransactionMetadata.TxnPartition> partitions, short clientTransactionVersion) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(ErrorCode.INVALID_REQUEST);
        }
        return onShard(transactionalId, ErrorCode.NOT_COORDINATOR, (shard, result) -> {
            if (!shard.loaded) {
                result.complete(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
                return;
            }
            TransactionMetadata txn = shard.transactions.get(transactionalId);
            ErrorCode error = validateProducer(txn, producerId, producerEpoch);
            if (error != null) {
                result.complete(error);
                return;
            }
            if (txn.state == TransactionState.PREPARE_COMMIT || txn.state == TransactionState.PREPARE_ABORT) {
                result.complete(ErrorCode.CONCURRENT_TRANSACTIONS);
                return;
            }
            if (txn.state == TransactionState.ONGOING && txn.partitions.containsAll(partitions)) {
                result.complete(ErrorCode.NONE);
                return;
            }
            Set<TransactionMetadata.TxnPartition> all = new LinkedHashSet<>(txn.state == TransactionState.ONGOING ? txn.partitions : Set.of());
            all.addAll(partitions);
            long startMs = txn.state == TransactionState.ONGOING ? txn.startTimestampMs : time.milliseconds();
            Transition ongoing = new Transition(TransactionState.ONGOING, txn.producerId, txn.producerEpoch, all, txn.lastProducerId,
                TransactionMetadata.NO_PRODUCER_ID, clientTransactionVersion, startMs);
            persist(shard, txn, ongoing, writeError -> {
                if (writeError == ErrorCode.NONE) {
                    txn.state = TransactionState.ONGOING;
                    txn.startTimestampMs = startMs;
                    txn.clientTransactionVersion = clientTransactionVersion;
                    txn.partitions.clear();
                    txn.partitions.addAll(all);
                    txn.lastUpdateTimestampMs = time.milliseconds();
                }
                result.complete(mapWriteError(writeError));
            });
        });
    }

    /**
     * KIP-890 verification (AddPartitionsToTxn v4+ with VerifyOnly, from a partition leader):
     * per partition NONE if it is in the producer's open transaction at this epoch, else
     * INVALID_TXN_STATE. Errors for the whole transaction, as Kafka's
     * {@code handleVerifyPartitionsInTransaction}: NOT_COORDINATOR when this node does not own the
     * transactional id, COORDINATOR_LOAD_IN_PROGRESS while its shard loads,
     * INVALID_PRODUCER_ID_MAPPING for an unknown id or another producer id, PRODUCER_FENCED for
     * another epoch, CONCURRENT_TRANSACTIONS while the transaction is being completed.
     */
    public CompletableFuture<Map<TransactionMetadata.TxnPartition, ErrorCode>> verifyPartitions(String transactionalId, long producerId,
            short producerEpoch, Set<TransactionMetadata.TxnPartition> partitions) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(allWith(partitions, ErrorCode.INVALID_REQUEST));
        }
        return onShard(transactionalId, allWith(partitions, ErrorCode.NOT_COORDINATOR), (shard, result) -> {
            if (!shard.loaded) {
                result.complete(allWith(partitions, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS));
                return;
            }
            TransactionMetadata txn = shard.transactions.get(transactionalId);
            if (txn == null || txn.producerId != producerId) {
                result.complete(allWith(partitions, ErrorCode.INVALID_PRODUCER_ID_MAPPING));
            } else if (txn.producerEpoch != producerEpoch) {
                result.complete(allWith(partitions, ErrorCode.PRODUCER_FENCED));
            } else if (txn.state == TransactionState.PREPARE_COMMIT || txn.state == TransactionState.PREPARE_ABORT) {
                result.complete(allWith(partitions, ErrorCode.CONCURRENT_TRANSACTIONS));
            } else {
                Map<TransactionMetadata.TxnPartition, ErrorCode> verdicts = new java.util.LinkedHashMap<>();
                for (TransactionMetadata.TxnPartition partition : partitions) {
                    boolean added = txn.state == TransactionState.ONGOING && txn.partitions.contains(partition);
                    verdicts.put(partition, added ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE);
                }
                result.complete(verdicts);
            }
        });
    }

    private static Map<TransactionMetadata.TxnPartition, ErrorCode> allWith(Set<TransactionMetadata.TxnPartition> partitions, ErrorCode error) {
        Map<TransactionMetadata.TxnPartition, ErrorCode> errors = new java.util.LinkedHashMap<>();
        partitions.forEach(partition -> errors.put(partition, error));
        return errors;
    }

    // ---------------------------------------------------------------- EndTxn

    /** The result of EndTxn: with transactions v2 also the producer id and epoch the client continues with. */
    public record EndResult(ErrorCode error, long producerId, short producerEpoch) {
        static EndResult error(ErrorCode error) {
            return new EndResult(error, TransactionMetadata.NO_PRODUCER_ID, TransactionMetadata.NO_PRODUCER_EPOCH);
        }
    }

    /** EndTxn from a transactions v1 client (EndTxn v0-v4). */
    public CompletableFuture<ErrorCode> endTransaction(String transactionalId, long producerId, short producerEpoch, boolean commit) {
        return endTransaction(transactionalId, producerId, producerEpoch, commit, (short) 0).thenApply(EndResult::error);
    }

    /** EndTxn; {@code clientTransactionVersion} is 2 for EndTxn v5+ (transactions v2), else 0. */
    public CompletableFuture<EndResult> endTransaction(String transactionalId, long producerId, short producerEpoch, boolean commit,
                                                       short clientTransactionVersion) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(EndResult.error(ErrorCode.INVALID_REQUEST));
        }
        return onShard(transactionalId, EndResult.error(ErrorCode.NOT_COORDINATOR), (shard, result) -> {
            if (!shard.loaded) {
                result.complete(EndResult.error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS));
                return;
            }
            TransactionMetadata txn = shard.transactions.get(transactionalId);
            if (clientTransactionVersion >= TransactionMetadata.TRANSACTION_VERSION_2) {
                endTransactionV2(shard, txn, producerId, producerEpoch, commit, result);
            } else {
                endTransactionV1(shard, txn, producerId, producerEpoch, commit, error -> result.complete(EndResult.error(error)));
            }
        });
    }

    private void endTransactionV1(Shard shard, TransactionMetadata txn, long producerId, short producerEpoch, boolean commit,
                                  Consumer<ErrorCode> result) {
        ErrorCode error = validateProducer(txn, producerId, producerEpoch);
        if (error != null) {
            result.accept(error);
            return;
        }
        switch (txn.state) {
            case ONGOING -> prepareEnd(shard, txn, commit, txn.producerEpoch, result);
            case COMPLETE_COMMIT -> result.accept(commit ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE);
            case COMPLETE_ABORT -> result.accept(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE);
            case PREPARE_COMMIT -> result.accept(commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
            case PREPARE_ABORT -> result.accept(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS);
            default -> result.accept(ErrorCode.INVALID_TXN_STATE);
        }
    }

    /** EndTxn with the epoch bump of transactions v2; the outcomes are the table in the class javadoc. */
    private void endTransactionV2(Shard shard, TransactionMetadata txn, long producerId, short producerEpoch, boolean commit,
                                  CompletableFuture<EndResult> result) {
        if (txn == null) {
            result.complete(EndResult.error(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
            return;
        }
        // A retry of an EndTxn that rotated the producer id (epoch overflow) names the previous id at the last epoch.
        boolean retryOnOverflow = txn.lastProducerId == producerId && producerEpoch == Short.MAX_VALUE - 1 && txn.producerEpoch == 0
            && txn.producerId != producerId;
        boolean retryOnEpochBump = txn.producerId == producerId && txn.producerEpoch == producerEpoch + 1;
        boolean retry = retryOnEpochBump || retryOnOverflow;
        boolean current = txn.producerId == producerId && txn.producerEpoch == producerEpoch;
        boolean validEpoch = switch (txn.state) {
            // current: the client got the bumped epoch of the transaction being completed and has
            // already ended its next one; it must wait (CONCURRENT_TRANSACTIONS below), not be fenced.
            case PREPARE_COMMIT, PREPARE_ABORT -> retryOnEpochBump || current;
            case COMPLETE_COMMIT, COMPLETE_ABORT -> retry || current;
            default -> current;
        };
        if (txn.producerId != producerId && !retryOnOverflow) {
            result.complete(EndResult.error(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
        } else if (!validEpoch) {
            result.complete(EndResult.error(ErrorCode.PRODUCER_FENCED));
        } else if (txn.pendingState != null) {
            result.complete(EndResult.error(ErrorCode.CONCURRENT_TRANSACTIONS));
        } else {
            Consumer<EndResult> answer = result::complete;
            EndResult done = new EndResult(ErrorCode.NONE, txn.producerId, txn.producerEpoch);
            switch (txn.state) {
                case ONGOING -> prepareEndV2(shard, txn, commit, false, answer);
                case COMPLETE_COMMIT -> {
                    if (commit) {
                        answer.accept(retry ? done : EndResult.error(ErrorCode.INVALID_TXN_STATE));
                    } else if (retry) {
                        answer.accept(EndResult.error(ErrorCode.INVALID_TXN_STATE));
                    } else {
                        prepareEndV2(shard, txn, false, true, answer);
                    }
                }
                case COMPLETE_ABORT -> {
                    if (commit) {
                        answer.accept(EndResult.error(ErrorCode.INVALID_TXN_STATE));
                    } else if (retry) {
                        answer.accept(done);
                    } else {
                        prepareEndV2(shard, txn, false, true, answer);
                    }
                }
                case PREPARE_COMMIT -> answer.accept(EndResult.error(current || commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE));
                case PREPARE_ABORT -> answer.accept(EndResult.error(current || !commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE));
                case EMPTY -> {
                    if (commit) {
                        answer.accept(EndResult.error(ErrorCode.INVALID_TXN_STATE));
                    } else {
                        prepareEndV2(shard, txn, false, true, answer);
                    }
                }
                default -> answer.accept(EndResult.error(ErrorCode.INVALID_TXN_STATE));
            }
        }
    }

    /**
     * Transactions v2: persists PrepareCommit/PrepareAbort with the epoch bumped (and, when the
     * epoch is exhausted, the producer id to take over at completion), answers with the identity
     * the client continues with, then writes the markers. {@code noPartitionAdded} is an abort of
     * a transaction that never added a partition (the client cannot know whether its writes did).
     */
    private void prepareEndV2(Shard shard, TransactionMetadata txn, boolean commit, boolean noPartitionAdded, Consumer<EndResult> answer) {
        TransactionState prepared = commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
        long nextProducerId = TransactionMetadata.isEpochExhausted(txn.producerEpoch) ? producerIds.getAsLong() : TransactionMetadata.NO_PRODUCER_ID;
        // The bump can reach Short.MAX_VALUE (markers only); a client never holds that epoch, it moves to nextProducerId.
        short bumpedEpoch = txn.producerEpoch == Short.MAX_VALUE ? Short.MAX_VALUE : (short) (txn.producerEpoch + 1);
        long startMs = noPartitionAdded ? time.milliseconds() : txn.startTimestampMs;
        Set<TransactionMetadata.TxnPartition> partitions = noPartitionAdded ? Set.of() : new LinkedHashSet<>(txn.partitions);
        Transition transition = new Transition(prepared, txn.producerId, bumpedEpoch, partitions, txn.lastProducerId, nextProducerId,
            TransactionMetadata.TRANSACTION_VERSION_2, startMs);
        persist(shard, txn, transition, error -> {
            if (error != ErrorCode.NONE) {
                answer.accept(EndResult.error(mapWriteError(error)));
                return;
            }
            txn.lastProducerEpoch = txn.producerEpoch;
            txn.producerEpoch = bumpedEpoch;
            txn.nextProducerId = nextProducerId;
            txn.clientTransactionVersion = TransactionMetadata.TRANSACTION_VERSION_2;
            txn.startTimestampMs = startMs;
            txn.partitions.clear();
            txn.partitions.addAll(partitions);
            txn.state = prepared;
            txn.lastUpdateTimestampMs = time.milliseconds();
            answer.accept(nextProducerId != TransactionMetadata.NO_PRODUCER_ID
                ? new EndResult(ErrorCode.NONE, nextProducerId, (short) 0)
                : new EndResult(ErrorCode.NONE, txn.producerId, bumpedEpoch));
            sendMarkers(shard, txn, commit);
        });
    }

    /** Persists PrepareCommit/PrepareAbort, answers, then writes the markers and completes. */
    private void prepareEnd(Shard shard, TransactionMetadata txn, boolean commit, short epoch, Consumer<ErrorCode> answer) {
        TransactionState prepared = commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
        persist(shard, txn, prepared, epoch, txn.producerId, txn.partitions, error -> {
            if (error != ErrorCode.NONE) {
                answer.accept(mapWriteError(error));
                return;
            }
            if (epoch != txn.producerEpoch) {
                txn.lastProducerEpoch = txn.producerEpoch;
                txn.producerEpoch = epoch;
            }
            txn.state = prepared;
            txn.lastUpdateTimestampMs = time.milliseconds();
            answer.accept(ErrorCode.NONE);
            sendMarkers(shard, txn, commit);
        });
    }

    private void sendMarkers(Shard shard, TransactionMetadata txn, boolean commit) {
        Set<TransactionMetadata.TxnPartition> remaining = new LinkedHashSet<>(txn.partitions);
        if (remaining.isEmpty()) {
            complete(shard, txn, commit);
            return;
        }
        markers.writeMarkers(txn.producerId, txn.producerEpoch, shard.coordinatorEpoch, commit, remaining, results -> shard.executor.execute(() -> {
            Set<TransactionMetadata.TxnPartition> retry = new LinkedHashSet<>();
            for (Map.Entry<TransactionMetadata.TxnPartition, ErrorCode> result : results.entrySet()) {
                ErrorCode error = result.getValue();
                if (error != ErrorCode.NONE && error != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
                    retry.add(result.getKey());
                }
            }
            if (retry.isEmpty()) {
                complete(shard, txn, commit);
            } else {
                LOG.warn("Retrying {} markers of transaction {} for {}", commit ? "commit" : "abort", txn.transactionalId, retry);
                txn.partitions.retainAll(retry);
                shard.executor.schedule(() -> sendMarkers(shard, txn, commit), MARKER_RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);
            }
        }));
    }

    /**
     * Persists CompleteCommit/CompleteAbort once every marker is written. A transactions v2
     * transaction whose epoch was exhausted switches to its next producer id at epoch 0 here,
     * keeping the old id as the previous one so that a retried EndTxn is recognised.
     */
    private void complete(Shard shard, TransactionMetadata txn, boolean commit) {
        TransactionState completed = commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT;
        boolean rotate = txn.supportsEpochBump() && txn.nextProducerId != TransactionMetadata.NO_PRODUCER_ID;
        long producerId = rotate ? txn.nextProducerId : txn.producerId;
        short epoch = rotate ? 0 : txn.producerEpoch;
        long previousProducerId = rotate ? txn.producerId : txn.lastProducerId;
        Transition transition = new Transition(completed, producerId, epoch, Set.of(), previousProducerId, TransactionMetadata.NO_PRODUCER_ID,
            txn.clientTransactionVersion, txn.startTimestampMs);
        persist(shard, txn, transition, error -> {
            if (error != ErrorCode.NONE) {
                shard.executor.schedule(() -> complete(shard, txn, commit), MARKER_RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);
                return;
            }
            txn.lastProducerId = previousProducerId;
            txn.producerId = producerId;
            txn.producerEpoch = epoch;
            txn.nextProducerId = TransactionMetadata.NO_PRODUCER_ID;
            txn.state = completed;
            txn.partitions.clear();
            txn.lastUpdateTimestampMs = time.milliseconds();
        });
    }

    private void abortTimedOut(Shard shard) {
        if (!shard.loaded) {
            return;
        }
        long now = time.milliseconds();
        for (TransactionMetadata txn : new ArrayList<>(shard.transactions.values())) {
            if (txn.state == TransactionState.ONGOING && txn.pendingState == null && now > txn.startTimestampMs + txn.timeoutMs) {
                LOG.info("Aborting transaction {} of producer {}: it passed its timeout of {} ms", txn.transactionalId, txn.producerId, txn.timeoutMs);
                fenceAndAbort(shard, txn);
            }
        }
    }

    // ---------------------------------------------------------------- transactional id expiration

    /**
     * Removes, on every shard, the transactional ids idle longer than
     * {@code transactional.id.expiration.ms} in Empty, CompleteCommit or CompleteAbort; runs every
     * {@code transaction.remove.expired.transaction.cleanup.interval.ms}. Completes with the number
     * of ids removed once their tombstones are written.
     */
    public CompletableFuture<Integer> expireTransactionalIds() {
        List<CompletableFuture<Integer>> perShard = new ArrayList<>();
        for (Shard shard : shards.values()) {
            CompletableFuture<Integer> removed = new CompletableFuture<>();
            shard.executor.execute(() -> expireTransactionalIds(shard).whenComplete((count, failure) -> removed.complete(count == null ? 0 : count)));
            perShard.add(removed);
        }
        return CompletableFuture.allOf(perShard.toArray(new CompletableFuture[0]))
            .thenApply(done -> perShard.stream().mapToInt(CompletableFuture::join).sum());
    }

    private static boolean expirationAllowed(TransactionState state) {
        return state == TransactionState.EMPTY || state == TransactionState.COMPLETE_COMMIT || state == TransactionState.COMPLETE_ABORT;
    }

    /** Runs on the shard's thread: writes a tombstone for each expired id and forgets it once written. */
    private CompletableFuture<Integer> expireTransactionalIds(Shard shard) {
        if (!shard.loaded) {
            return CompletableFuture.completedFuture(0);
        }
        long now = time.milliseconds();
        List<CompletableFuture<Boolean>> removals = new ArrayList<>();
        for (TransactionMetadata txn : new ArrayList<>(shard.transactions.values())) {
            if (txn.pendingState != null || !expirationAllowed(txn.state) || txn.lastUpdateTimestampMs > now - settings.transactionalIdExpirationMs()) {
                continue;
            }
            CompletableFuture<Boolean> removed = new CompletableFuture<>();
            removals.add(removed);
            // While the tombstone is written the pending state Dead makes every other operation on the id
            // answer CONCURRENT_TRANSACTIONS, so nothing can revive it in between.
            write(shard, txn, TransactionState.DEAD, null, error -> {
                if (error == ErrorCode.NONE) {
                    shard.transactions.remove(txn.transactionalId);
                    LOG.info("Expired transactional id {} (producer {}): idle for {} ms", txn.transactionalId, txn.producerId,
                        now - txn.lastUpdateTimestampMs);
                    removed.complete(true);
                } else {
                    LOG.warn("Writing the tombstone of expired transactional id {} failed: {}", txn.transactionalId, error);
                    removed.complete(false);
                }
            });
        }
        return CompletableFuture.allOf(removals.toArray(new CompletableFuture[0]))
            .thenApply(done -> (int) removals.stream().filter(CompletableFuture::join).count());
    }

    // ---------------------------------------------------------------- describe and list

    /** A snapshot of one transactional id for DescribeTransactions / ListTransactions. */
    public record TransactionView(String transactionalId, long producerId, short producerEpoch, int timeoutMs, String state,
                                  long startTimestampMs, Set<TransactionMetadata.TxnPartition> partitions) {
    }

    public CompletableFuture<TransactionView> describe(String transactionalId) {
        return onShard(transactionalId, null, (shard, result) -> {
            TransactionMetadata txn = shard.transactions.get(transactionalId);
            result.complete(txn == null ? null : view(txn));
        });
    }

    public boolean coordinates(String transactionalId) {
        Shard shard = shards.get(partitionFor(transactionalId));
        return shard != null;
    }

    /** Whether every partition this node coordinates has been loaded (readiness). */
    public boolean isLoaded() {
        return shards.values().stream().allMatch(shard -> shard.loaded);
    }

    public boolean isLoaded(String transactionalId) {
        Shard shard = shards.get(partitionFor(transactionalId));
        return shard != null && shard.loaded;
    }

    public CompletableFuture<List<TransactionView>> list() {
        List<CompletableFuture<List<TransactionView>>> perShard = new ArrayList<>();
        for (Shard shard : shards.values()) {
            CompletableFuture<List<TransactionView>> future = new CompletableFuture<>();
            shard.executor.execute(() -> future.complete(shard.transactions.values().stream().map(TransactionCoordinator::view).toList()));
            perShard.add(future);
        }
        return CompletableFuture.allOf(perShard.toArray(new CompletableFuture[0])).thenApply(done -> {
            List<TransactionView> all = new ArrayList<>();
            perShard.forEach(future -> all.addAll(future.join()));
            return all;
        });
    }

    private static TransactionView view(TransactionMetadata txn) {
        return new TransactionView(txn.transactionalId, txn.producerId, txn.producerEpoch, txn.timeoutMs, txn.state.displayName,
            txn.startTimestampMs, Set.copyOf(txn.partitions));
    }

    @Override
    public void close() {
        for (ScheduledExecutorService thread : threads) {
            thread.shutdownNow();
        }
    }
}
