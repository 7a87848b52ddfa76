package io.strata.server.cluster;

import io.strata.coordinator.transaction.TransactionCoordinator;
import io.strata.coordinator.transaction.TransactionMetadata;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AddPartitionsToTxnRequestData;
import io.strata.protocol.message.AddPartitionsToTxnResponseData;
import io.strata.protocol.message.ApiMessageType;
import io.strata.server.api.InternalTopics;
import io.strata.server.network.client.InterBrokerClient;
import io.strata.storage.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * A partition leader's (and a group coordinator's) path to the transaction coordinator of a
 * transactional id, as Kafka's {@code AddPartitionsToTxnManager}: adds partitions to the
 * producer's transaction (transactions v2: Produce v12, TxnOffsetCommit v5) or verifies that they
 * were added (KIP-890 part 1: VerifyOnly, for transactions v1 clients).
 *
 * <p>The coordinator is the leader of the id's {@code __transaction_state} shard in the image
 * ({@link TransactionCoordinator#partitionFor}, the function FindCoordinator uses). A shard led here
 * is asked directly; one led elsewhere gets an AddPartitionsToTxn v{@value #REQUEST_VERSION}
 * request (the batched broker form) at the leader's endpoint on the inter-broker listener.
 *
 * <p>Batching, as Kafka's: per destination node at most one request is in flight; what arrives
 * meanwhile waits in that node's pending batch, one entry per transactional id, and goes out as
 * one request when the answer comes. A second entry for an id already pending replaces it: the
 * older entry is answered NETWORK_EXCEPTION when the epochs are equal (the client is retrying)
 * and INVALID_PRODUCER_EPOCH when the newcomer's epoch is higher (the older writer is fenced); a
 * newcomer with a lower epoch is itself answered INVALID_PRODUCER_EPOCH.
 *
 * <p>Answers are per partition: NONE, or the error to pass on. A coordinator that cannot be
 * located (no shard leader, no live endpoint) is COORDINATOR_NOT_AVAILABLE; a request that failed
 * or timed out is NETWORK_EXCEPTION for each of its partitions; CLUSTER_AUTHORIZATION_FAILED at
 * the top level becomes INVALID_TXN_STATE, as Kafka keeps it from clients. Callers translate for
 * their API (Produce: NOT_ENOUGH_REPLICAS for the retriable ones). Futures never fail.
 *
 * <p>Thread-safe: the pending batches and the in-flight set are guarded by {@code lock}; futures
 * are completed outside it, on the inter-broker client's event loop or the coordinator's thread,
 * so callers must not block in their continuations.
 */
public final class AddPartitionsToTxnManager implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AddPartitionsToTxnManager.class);

    /** The version sent: v5 answers TRANSACTION_ABORTABLE, which Produce v12 clients handle. */
    public static final short REQUEST_VERSION = 5;
    /**
     * At most this many transactions wait for one destination while a request to it is in flight
     * (one per transactional id); more are answered NETWORK_EXCEPTION at once, so that a
     * coordinator that stopped answering cannot make a leader hold unbounded produce requests.
     */
    static final int PENDING_TRANSACTIONS_PER_NODE_MAX = 10_000;

    /** Sends one AddPartitionsToTxn request to a broker; the future fails if it could not be sent or answered. */
    @FunctionalInterface
    public interface Sender {
        CompletableFuture<AddPartitionsToTxnResponseData> send(int brokerId, String host, int port, AddPartitionsToTxnRequestData request);

        /** Over a node's inter-broker client (one connection per destination, its request timeout). */
        static Sender over(InterBrokerClient client) {
            return (brokerId, host, port, request) -> client.send(new InterBrokerClient.Endpoint(brokerId, host, port),
                ApiMessageType.ADD_PARTITIONS_TO_TXN, REQUEST_VERSION, request).thenApply(response -> (AddPartitionsToTxnResponseData) response);
        }
    }

    /** This node's transaction coordinator, for the shards it leads. */
    @FunctionalInterface
    public interface LocalCoordinator {
        CompletableFuture<Map<TopicPartition, ErrorCode>> addOrVerify(String transactionalId, long producerId, short producerEpoch,
                                                                      Set<TopicPartition> partitions, boolean verifyOnly);

        /** Adds as transactions v2 (the implicit add of a leader or group coordinator); verifies with {@code verifyPartitions}. */
        static LocalCoordinator of(TransactionCoordinator coordinator) {
            return (transactionalId, producerId, producerEpoch, partitions, verifyOnly) -> {
                Set<TransactionMetadata.TxnPartition> txnPartitions = new java.util.LinkedHashSet<>();
                partitions.forEach(partition -> txnPartitions.add(new TransactionMetadata.TxnPartition(partition.topic(), partition.partition())));
                if (verifyOnly) {
                    return coordinator.verifyPartitions(transactionalId, producerId, producerEpoch, txnPartitions).thenApply(verdicts -> {
                        Map<TopicPartition, ErrorCode> errors = new LinkedHashMap<>();
                        verdicts.forEach((partition, error) -> errors.put(new TopicPartition(partition.topic(), partition.partition()), error));
                        return errors;
                    });
                }
                return coordinator.addPartitions(transactionalId, producerId, producerEpoch, txnPartitions, TransactionMetadata.TRANSACTION_VERSION_2)
                    .thenApply(error -> allWith(partitions, error));
            };
        }
    }

    private record Pending(AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction, Set<TopicPartition> partitions,
                           CompletableFuture<Map<TopicPartition, ErrorCode>> result) {
    }

    /** One destination's transactions waiting for the next request, by transactional id. */
    private static final class Batch {
        String host;
        int port;
        final LinkedHashMap<String, Pending> byTransactionalId = new LinkedHashMap<>();
    }

    private final int nodeId;
    private final Supplier<MetadataImage> image;
    private final ToIntFunction<String> partitionFor;
    private final LocalCoordinator local;
    private final String listenerName;
    private final Sender sender;
    private final Object lock = new Object();
    /** Guarded by lock. */
    private final Map<Integer, Batch> pending = new HashMap<>();
    /** Nodes with a request in flight. Guarded by lock. */
    private final Set<Integer> inFlight = new HashSet<>();
    /** Guarded by lock. */
    private boolean closed;

    /**
     * @param partitionFor the {@code __transaction_state} partition of a transactional id
     *                     ({@link TransactionCoordinator#partitionFor}, as FindCoordinator uses)
     * @param local        this node's coordinator, asked for the shards led here
     * @param listenerName the listener whose endpoint of the coordinator's node requests go to
     */
    public AddPartitionsToTxnManager(int nodeId, Supplier<MetadataImage> image, ToIntFunction<String> partitionFor, LocalCoordinator local,
                                     String listenerName, Sender sender) {
        this.nodeId = nodeId;
        this.image = image;
        this.partitionFor = partitionFor;
        this.local = local;
        this.listenerName = listenerName;
        this.sender = sender;
    }

    /**
     * Adds {@code partitions} to the producer's transaction ({@code verifyOnly} false, as a
     * transactions v2 client's implicit add) or checks that they are in it ({@code verifyOnly}
     * true); completes with an answer for every partition.
     */
    public CompletableFuture<Map<TopicPartition, ErrorCode>> addOrVerify(String transactionalId, long producerId, short producerEpoch,
                                                                         Set<TopicPartition> partitions, boolean verifyOnly) {
        MetadataImage current = image.get();
        TopicImage stateTopic = current.topic(InternalTopics.TRANSACTION_STATE);
        PartitionRegistration shard = stateTopic == null ? null : stateTopic.partition(partitionFor.applyAsInt(transactionalId));
        if (shard == null || !shard.hasLeader()) {
            // No shard yet (the topic is created on the first FindCoordinator): no transaction can have begun.
            return CompletableFuture.completedFuture(allWith(partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE));
        }
        if (shard.leader() == nodeId) {
            return local(transactionalId, producerId, producerEpoch, partitions, verifyOnly);
        }
        BrokerRegistration leader = current.brokers().get(shard.leader());
        BrokerRegistration.Endpoint endpoint = leader == null || leader.fenced() || listenerName == null ? null : leader.endpoint(listenerName);
        if (endpoint == null) {
            return CompletableFuture.completedFuture(allWith(partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE));
        }
        return enqueue(shard.leader(), endpoint, transaction(transactionalId, producerId, producerEpoch, partitions, verifyOnly), partitions);
    }

    private CompletableFuture<Map<TopicPartition, ErrorCode>> local(String transactionalId, long producerId, short producerEpoch,
                                                                    Set<TopicPartition> partitions, boolean verifyOnly) {
        CompletableFuture<Map<TopicPartition, ErrorCode>> answer;
        try {
            answer = local.addOrVerify(transactionalId, producerId, producerEpoch, partitions, verifyOnly);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.exceptionally(failure -> {
            // Never UNKNOWN_SERVER_ERROR in the middle of a transaction (KAFKA-14034): the caller retries an unavailable coordinator.
            LOG.warn("The transaction coordinator failed to {} {} for {}", verifyOnly ? "verify" : "add", partitions, transactionalId, failure);
            return allWith(partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE);
        });
    }

    private static AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction(String transactionalId, long producerId,
            short producerEpoch, Set<TopicPartition> partitions, boolean verifyOnly) {
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        partitions.forEach(partition -> byTopic.computeIfAbsent(partition.topic(), topic -> new ArrayList<>()).add(partition.partition()));
        List<AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic> topics = new ArrayList<>();
        byTopic.forEach((topic, indexes) -> topics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(topic)
            .setPartitions(indexes)));
        return new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction().setTransactionalId(transactionalId).setProducerId(producerId)
            .setProducerEpoch(producerEpoch).setVerifyOnly(verifyOnly).setTopics(topics);
    }

    private CompletableFuture<Map<TopicPartition, ErrorCode>> enqueue(int brokerId, BrokerRegistration.Endpoint endpoint,
            AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction, Set<TopicPartition> partitions) {
        Pending incoming = new Pending(transaction, partitions, new CompletableFuture<>());
        Pending displaced = null;
        ErrorCode displacedError = null;
        ErrorCode refused = null;
        synchronized (lock) {
            Batch batch = pending.computeIfAbsent(brokerId, id -> new Batch());
            batch.host = endpoint.host();
            batch.port = endpoint.port();
            Pending existing = batch.byTransactionalId.get(transaction.transactionalId());
            if (closed) {
                refused = ErrorCode.NETWORK_EXCEPTION;
            } else if (existing != null && existing.transaction.producerEpoch() > transaction.producerEpoch()) {
                refused = ErrorCode.INVALID_PRODUCER_EPOCH;
            } else if (existing == null && batch.byTransactionalId.size() >= PENDING_TRANSACTIONS_PER_NODE_MAX) {
                refused = ErrorCode.NETWORK_EXCEPTION;
            } else {
                if (existing != null) {
                    displaced = existing;
                    displacedError = existing.transaction.producerEpoch() < transaction.producerEpoch() ? ErrorCode.INVALID_PRODUCER_EPOCH
                        : ErrorCode.NETWORK_EXCEPTION;
                }
                batch.byTransactionalId.put(transaction.transactionalId(), incoming);
            }
        }
        if (displaced != null) {
            displaced.result.complete(allWith(displaced.partitions, displacedError));
        }
        if (refused != null) {
            incoming.result.complete(allWith(partitions, refused));
        } else {
            maybeSend(brokerId);
        }
        return incoming.result;
    }

    /** Sends the node's pending batch unless a request to it is in flight (its answer sends the next). */
    private void maybeSend(int brokerId) {
        Batch batch;
        synchronized (lock) {
            if (inFlight.contains(brokerId) || closed) {
                return;
            }
            batch = pending.remove(brokerId);
            if (batch == null || batch.byTransactionalId.isEmpty()) {
                return;
            }
            inFlight.add(brokerId);
        }
        AddPartitionsToTxnRequestData request = new AddPartitionsToTxnRequestData();
        batch.byTransactionalId.values().forEach(entry -> request.transactions().add(entry.transaction));
        CompletableFuture<AddPartitionsToTxnResponseData> sent;
        try {
            sent = sender.send(brokerId, batch.host, batch.port, request);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((response, failure) -> {
            synchronized (lock) {
                inFlight.remove(brokerId);
            }
            answer(brokerId, batch, response, failure);
            maybeSend(brokerId);
        });
    }

    private static void answer(int brokerId, Batch batch, AddPartitionsToTxnResponseData response, Throwable failure) {
        if (failure != null) {
            LOG.warn("AddPartitionsToTxn to broker {} failed: {}", brokerId, failure.toString());
            batch.byTransactionalId.values().forEach(entry -> entry.result.complete(allWith(entry.partitions, ErrorCode.NETWORK_EXCEPTION)));
            return;
        }
        if (response.errorCode() != ErrorCode.NONE.code()) {
            ErrorCode error = ErrorCode.forCode(response.errorCode());
            LOG.warn("AddPartitionsToTxn to broker {} answered {}", brokerId, error);
            ErrorCode passed = error == ErrorCode.CLUSTER_AUTHORIZATION_FAILED ? ErrorCode.INVALID_TXN_STATE : error;
            batch.byTransactionalId.values().forEach(entry -> entry.result.complete(allWith(entry.partitions, passed)));
            return;
        }
        Map<String, AddPartitionsToTxnResponseData.AddPartitionsToTxnResult> byId = new HashMap<>();
        response.resultsByTransaction().forEach(result -> byId.put(result.transactionalId(), result));
        for (Map.Entry<String, Pending> entry : batch.byTransactionalId.entrySet()) {
            Pending sentEntry = entry.getValue();
            AddPartitionsToTxnResponseData.AddPartitionsToTxnResult result = byId.get(entry.getKey());
            Map<TopicPartition, ErrorCode> answered = new HashMap<>();
            if (result != null) {
                for (AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult topic : result.topicResults()) {
                    for (AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult partition : topic.resultsByPartition()) {
                        answered.put(new TopicPartition(topic.name(), partition.partitionIndex()), ErrorCode.forCode(partition.partitionErrorCode()));
                    }
                }
            }
            Map<TopicPartition, ErrorCode> errors = new LinkedHashMap<>();
            // A partition the answer leaves out was not decided: retriable, never taken as added.
            sentEntry.partitions.forEach(partition -> errors.put(partition, answered.getOrDefault(partition, ErrorCode.NETWORK_EXCEPTION)));
            sentEntry.result.complete(errors);
        }
    }

    private static Map<TopicPartition, ErrorCode> allWith(Set<TopicPartition> partitions, ErrorCode error) {
        Map<TopicPartition, ErrorCode> errors = new LinkedHashMap<>();
        partitions.forEach(partition -> errors.put(partition, error));
        return errors;
    }

    /** Answers every waiting transaction NETWORK_EXCEPTION; requests in flight are answered by the client (closed after this). */
    @Override
    public void close() {
        List<Pending> waiting = new ArrayList<>();
        synchronized (lock) {
            closed = true;
            pending.values().forEach(batch -> waiting.addAll(batch.byTransactionalId.values()));
            pending.clear();
        }
        waiting.forEach(entry -> entry.result.complete(allWith(entry.partitions, ErrorCode.NETWORK_EXCEPTION)));
    }
}
