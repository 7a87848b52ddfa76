package io.strata.coordinator.transaction;

import io.strata.common.Time;
import io.strata.coordinator.group.CoordinatorLog;
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
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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
 * <p>Threading: every transactional id's state is touched only on its partition's thread.
 */
public final class TransactionCoordinator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionCoordinator.class);
    private static final long MARKER_RETRY_BACKOFF_MS = 100;

    private final TransactionCoordinatorSettings settings;
    private final CoordinatorLog log;
    private final MarkerWriter markers;
    private final LongSupplier producerIds;
    private final Time time;
    private final ScheduledExecutorService[] threads;
    private final Map<Integer, Shard> shards = new ConcurrentHashMap<>();

    /** The state of one {@code __transaction_state} partition. */
    private final class Shard {
        final int partition;
        final ScheduledExecutorService executor;
        final Map<String, TransactionMetadata> transactions = new HashMap<>();
        volatile boolean loaded;
        /** The coordinator epoch written into markers: the partition's leader epoch. */
        int coordinatorEpoch;

        Shard(int partition, ScheduledExecutorService executor) {
            this.partition = partition;
            this.executor = executor;
        }
    }

    public TransactionCoordinator(TransactionCoordinatorSettings settings, CoordinatorLog log, MarkerWriter markers, LongSupplier producerIds,
                                  Time time, int threadCount) {
        this.settings = settings;
        this.log = log;
        this.markers = markers;
        this.producerIds = producerIds;
        this.time = time;
        this.threads = new ScheduledExecutorService[Math.max(1, threadCount)];
        for (int i = 0; i < threads.length; i++) {
            int index = i;
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
                Thread thread = new Thread(task, "strata-txn-coordinator-" + index);
                thread.setDaemon(true);
                return thread;
            });
            executor.setRemoveOnCancelPolicy(true);
            threads[i] = executor;
        }
    }

    public int partitionFor(String transactionalId) {
        return (transactionalId.hashCode() & 0x7fffffff) % settings.stateLogPartitions();
    }

    public int stateLogPartitions() {
        return settings.stateLogPartitions();
    }

    /** Starts coordinating these partitions: replays each, resumes prepared transactions, starts the timeout scan. */
    public void onPartitionsLed(Map<Integer, Integer> partitionLeaderEpochs) {
        for (Map.Entry<Integer, Integer> entry : partitionLeaderEpochs.entrySet()) {
            shards.computeIfAbsent(entry.getKey(), p -> {
                ScheduledExecutorService executor = threads[p % threads.length];
                Shard shard = new Shard(p, executor);
                shard.coordinatorEpoch = entry.getValue();
                executor.execute(() -> load(shard));
                executor.scheduleWithFixedDelay(() -> abortTimedOut(shard), settings.abortTimedOutCheckIntervalMs(),
                    settings.abortTimedOutCheckIntervalMs(), TimeUnit.MILLISECONDS);
                return shard;
            });
        }
    }

    // ---------------------------------------------------------------- persistence

    private static byte[] encode(short version, Message message) {
        ByteBuffer buffer = ByteBuffer.allocate(2 + message.size(version));
        buffer.putShort(version);
        message.write(new ByteBufferWriter(buffer), version);
        return buffer.array();
    }

    private byte[] value(TransactionMetadata txn, TransactionState state, short epoch, long producerId, Set<TransactionMetadata.TxnPartition> partitions) {
        TransactionLogValue value = new TransactionLogValue().setProducerId(producerId).setProducerEpoch(epoch)
            .setTransactionTimeoutMs(txn.timeoutMs).setTransactionStatus(state.id)
            .setTransactionLastUpdateTimestampMs(time.milliseconds()).setTransactionStartTimestampMs(txn.startTimestampMs);
        Map<String, List<Integer>> byTopic = new java.util.LinkedHashMap<>();
        for (TransactionMetadata.TxnPartition partition : partitions) {
            byTopic.computeIfAbsent(partition.topic(), t -> new ArrayList<>()).add(partition.partition());
        }
        for (Map.Entry<String, List<Integer>> topic : byTopic.entrySet()) {
            value.transactionPartitions().add(new TransactionLogValue.PartitionsSchema().setTopic(topic.getKey()).setPartitionIds(topic.getValue()));
        }
        return encode((short) 0, value);
    }

    /** Persists a transition; {@code done} runs on the shard's thread with NONE or the write's error. */
    private void persist(Shard shard, TransactionMetadata txn, TransactionState state, short epoch, long producerId,
                         Set<TransactionMetadata.TxnPartition> partitions, Consumer<ErrorCode> done) {
        txn.pendingState = state;
        byte[] key = encode((short) 0, new TransactionLogKey().setTransactionalId(txn.transactionalId));
        byte[] value = value(txn, state, epoch, producerId, partitions);
        RecordBatchBuilder builder = new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
            .append(time.milliseconds(), key, value);
        log.append(shard.partition, builder.build(), error -> shard.executor.execute(() -> {
            txn.pendingState = null;
            done.accept(error);
        }));
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
                txn.lastProducerEpoch = txn.producerEpoch;
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

    private void fenceAndAbort(Shard shard, TransactionMetadata txn) {
        short fencedEpoch = (short) (txn.producerEpoch + 1);
        LOG.info("Fencing producer {} epoch {} of transactional id {}: aborting its open transaction with epoch {}", txn.producerId,
            txn.producerEpoch, txn.transactionalId, fencedEpoch);
        prepareEnd(shard, txn, false, fencedEpoch, error -> { });
    }

    // ---------------------------------------------------------------- AddPartitionsToTxn / AddOffsetsToTxn

    public CompletableFuture<ErrorCode> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                      Set<TransactionMetadata.TxnPartition> partitions) {
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
            long previousStart = txn.startTimestampMs;
            txn.startTimestampMs = startMs;
            persist(shard, txn, TransactionState.ONGOING, txn.producerEpoch, txn.producerId, all, writeError -> {
                if (writeError == ErrorCode.NONE) {
                    txn.state = TransactionState.ONGOING;
                    txn.partitions.clear();
                    txn.partitions.addAll(all);
                    txn.lastUpdateTimestampMs = time.milliseconds();
                } else {
                    txn.startTimestampMs = previousStart;
                }
                result.complete(mapWriteError(writeError));
            });
        });
    }

    /** KIP-890 verification: whether a partition leader may accept the first transactional batch of this producer. */
    public CompletableFuture<Boolean> isPartitionInTransaction(String transactionalId, long producerId, short producerEpoch,
                                                               TransactionMetadata.TxnPartition partition) {
        return onShard(transactionalId, false, (shard, result) -> {
            TransactionMetadata txn = shard.transactions.get(transactionalId);
            result.complete(txn != null && txn.producerId == producerId && txn.producerEpoch == producerEpoch
                && txn.state == TransactionState.ONGOING && txn.partitions.contains(partition));
        });
    }

    /**
     * KIP-890 verification by producer id (the partition leader does not know the transactional
     * id): NONE if the producer at this epoch has an open transaction containing the partition,
     * INVALID_PRODUCER_EPOCH if the producer id has moved to a newer epoch (the writer is a fenced
     * zombie), INVALID_TXN_STATE otherwise.
     */
    public ErrorCode verifyByProducer(long producerId, short producerEpoch, TransactionMetadata.TxnPartition partition) {
        ErrorCode verdict = ErrorCode.INVALID_TXN_STATE;
        for (Shard shard : shards.values()) {
            CompletableFuture<ErrorCode> found = new CompletableFuture<>();
            shard.executor.execute(() -> {
                ErrorCode answer = null;
                for (TransactionMetadata txn : shard.transactions.values()) {
                    if (txn.producerId != producerId) {
                        continue;
                    }
                    if (txn.producerEpoch > producerEpoch) {
                        answer = ErrorCode.INVALID_PRODUCER_EPOCH;
                    } else if (txn.producerEpoch == producerEpoch && txn.state == TransactionState.ONGOING && txn.partitions.contains(partition)) {
                        answer = ErrorCode.NONE;
                    }
                    break;
                }
                found.complete(answer);
            });
            try {
                ErrorCode answer = found.get(10, TimeUnit.SECONDS);
                if (answer != null) {
                    return answer;
                }
            } catch (Exception e) {
                return ErrorCode.COORDINATOR_NOT_AVAILABLE;
            }
        }
        return verdict;
    }

    // ---------------------------------------------------------------- EndTxn

    public CompletableFuture<ErrorCode> endTransaction(String transactionalId, long producerId, short producerEpoch, boolean commit) {
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
            switch (txn.state) {
                case ONGOING -> prepareEnd(shard, txn, commit, txn.producerEpoch, result::complete);
                case COMPLETE_COMMIT -> result.complete(commit ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE);
                case COMPLETE_ABORT -> result.complete(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE);
                case PREPARE_COMMIT -> result.complete(commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
                case PREPARE_ABORT -> result.complete(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS);
                default -> result.complete(ErrorCode.INVALID_TXN_STATE);
            }
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

    private void complete(Shard shard, TransactionMetadata txn, boolean commit) {
        TransactionState completed = commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT;
        persist(shard, txn, completed, txn.producerEpoch, txn.producerId, Set.of(), error -> {
            if (error != ErrorCode.NONE) {
                shard.executor.schedule(() -> complete(shard, txn, commit), MARKER_RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);
                return;
            }
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
