package io.strata.server.api;

import io.strata.common.Time;
import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.transaction.MarkerWriter;
import io.strata.coordinator.transaction.TransactionMetadata;
import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.WriteTxnMarkersRequestData;
import io.strata.protocol.message.WriteTxnMarkersResponseData;
import io.strata.protocol.records.ControlRecordType;
import io.strata.protocol.records.EndTransactionMarker;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.server.replica.ReplicaManager;
import io.strata.storage.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Writes transaction markers (COMMIT/ABORT control batches) to the partitions of a transaction,
 * each to its leader as the metadata image names it at the time of the write: appended here for
 * partitions this node leads, sent as one WriteTxnMarkers request per other leader (on the
 * inter-broker listener) through a {@link RemoteMarkerWriter}. {@code done} runs once every
 * partition has an answer.
 *
 * <p>Per-partition outcomes, as Kafka's TransactionMarkerChannelManager treats them: a partition
 * the image no longer has is UNKNOWN_TOPIC_OR_PARTITION (the coordinator counts it as done); one
 * without a leader, whose leader has no endpoint on the listener, whose leader could not be
 * reached, or whose leader answered NOT_LEADER_OR_FOLLOWER (or UNKNOWN_TOPIC_OR_PARTITION while
 * this image still has it: that broker's metadata lags) is NOT_LEADER_OR_FOLLOWER / NETWORK_EXCEPTION,
 * which the coordinator retries after its back-off, looking the leader up again each time.
 *
 * <p>A marker on a {@code __consumer_offsets} partition written here also tells the group
 * coordinator to publish or drop the transaction's offsets (the remote leader's own handler does
 * that for its partitions). Thread-safe.
 */
public final class TransactionMarkers implements MarkerWriter {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionMarkers.class);

    private final ReplicaManager replicaManager;
    private final GroupCoordinator groupCoordinator;
    private final Time time;
    private final RemoteMarkerWriter remote;
    private final String interBrokerListenerName;

    /** Markers only to partitions led here; partitions led elsewhere fail NOT_LEADER_OR_FOLLOWER (and are retried). */
    public TransactionMarkers(ReplicaManager replicaManager, GroupCoordinator groupCoordinator, Time time) {
        this(replicaManager, groupCoordinator, time, RemoteMarkerWriter.NONE, null);
    }

    /** @param interBrokerListenerName the listener whose endpoint of a leader the markers are sent to */
    public TransactionMarkers(ReplicaManager replicaManager, GroupCoordinator groupCoordinator, Time time, RemoteMarkerWriter remote,
                              String interBrokerListenerName) {
        this.replicaManager = replicaManager;
        this.groupCoordinator = groupCoordinator;
        this.time = time;
        this.remote = remote;
        this.interBrokerListenerName = interBrokerListenerName;
    }

    @Override
    public void writeMarkers(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
                             Set<TransactionMetadata.TxnPartition> partitions, Consumer<Map<TransactionMetadata.TxnPartition, ErrorCode>> done) {
        MetadataImage image = replicaManager.image();
        Map<TransactionMetadata.TxnPartition, ErrorCode> results = new ConcurrentHashMap<>();
        Map<Integer, List<TransactionMetadata.TxnPartition>> byRemoteLeader = new TreeMap<>();
        for (TransactionMetadata.TxnPartition partition : partitions) {
            PartitionRegistration registration = registration(image, partition);
            if (registration == null) {
                results.put(partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            } else if (registration.leader() == replicaManager.nodeId()) {
                results.put(partition, writeMarker(new TopicPartition(partition.topic(), partition.partition()), producerId, producerEpoch,
                    coordinatorEpoch, commit));
            } else if (!registration.hasLeader()) {
                results.put(partition, ErrorCode.NOT_LEADER_OR_FOLLOWER);
            } else {
                byRemoteLeader.computeIfAbsent(registration.leader(), leader -> new ArrayList<>()).add(partition);
            }
        }
        List<CompletableFuture<Void>> sends = new ArrayList<>();
        for (Map.Entry<Integer, List<TransactionMetadata.TxnPartition>> entry : byRemoteLeader.entrySet()) {
            sends.add(sendToLeader(image, entry.getKey(), entry.getValue(), producerId, producerEpoch, coordinatorEpoch, commit, results));
        }
        CompletableFuture.allOf(sends.toArray(new CompletableFuture[0])).whenComplete((ignored, failure) -> {
            Map<TransactionMetadata.TxnPartition, ErrorCode> ordered = new LinkedHashMap<>();
            for (TransactionMetadata.TxnPartition partition : partitions) {
                ordered.put(partition, results.getOrDefault(partition, ErrorCode.UNKNOWN_SERVER_ERROR));
            }
            done.accept(ordered);
        });
    }

    private static PartitionRegistration registration(MetadataImage image, TransactionMetadata.TxnPartition partition) {
        TopicImage topic = image.topic(partition.topic());
        return topic == null ? null : topic.partition(partition.partition());
    }

    /** One WriteTxnMarkers request for the partitions {@code leaderId} leads; fills {@code results} for each, never fails. */
    private CompletableFuture<Void> sendToLeader(MetadataImage image, int leaderId, List<TransactionMetadata.TxnPartition> partitions,
                                                 long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
                                                 Map<TransactionMetadata.TxnPartition, ErrorCode> results) {
        BrokerRegistration leader = image.brokers().get(leaderId);
        BrokerRegistration.Endpoint endpoint = leader == null || interBrokerListenerName == null ? null : leader.endpoint(interBrokerListenerName);
        if (endpoint == null) {
            LOG.warn("No {} endpoint of broker {}, the leader of {}: the markers of producer {} wait for it", interBrokerListenerName, leaderId,
                partitions, producerId);
            partitions.forEach(partition -> results.put(partition, ErrorCode.NOT_LEADER_OR_FOLLOWER));
            return CompletableFuture.completedFuture(null);
        }
        WriteTxnMarkersRequestData request = markersRequest(partitions, producerId, producerEpoch, coordinatorEpoch, commit);
        CompletableFuture<WriteTxnMarkersResponseData> sent;
        try {
            sent = remote.send(leaderId, endpoint.host(), endpoint.port(), request);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return sent.handle((response, failure) -> {
            if (failure != null) {
                LOG.warn("Writing markers of producer {} to {} on broker {} failed; retrying: {}", producerId, partitions, leaderId, failure.toString());
                partitions.forEach(partition -> results.put(partition, ErrorCode.NETWORK_EXCEPTION));
                return null;
            }
            Map<TransactionMetadata.TxnPartition, ErrorCode> answered = answers(response);
            for (TransactionMetadata.TxnPartition partition : partitions) {
                ErrorCode error = answered.getOrDefault(partition, ErrorCode.UNKNOWN_SERVER_ERROR);
                if (error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && registration(replicaManager.image(), partition) != null) {
                    error = ErrorCode.NOT_LEADER_OR_FOLLOWER; // the leader has not seen the partition yet: retry
                }
                results.put(partition, error);
            }
            return null;
        });
    }

    static WriteTxnMarkersRequestData markersRequest(List<TransactionMetadata.TxnPartition> partitions, long producerId, short producerEpoch,
                                                     int coordinatorEpoch, boolean commit) {
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        for (TransactionMetadata.TxnPartition partition : partitions) {
            byTopic.computeIfAbsent(partition.topic(), topic -> new ArrayList<>()).add(partition.partition());
        }
        List<WriteTxnMarkersRequestData.WritableTxnMarkerTopic> topics = new ArrayList<>();
        byTopic.forEach((topic, indexes) -> topics.add(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(topic)
            .setPartitionIndexes(indexes)));
        return new WriteTxnMarkersRequestData().setMarkers(List.of(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(producerId)
            .setProducerEpoch(producerEpoch).setTransactionResult(commit).setCoordinatorEpoch(coordinatorEpoch).setTopics(topics)));
    }

    private static Map<TransactionMetadata.TxnPartition, ErrorCode> answers(WriteTxnMarkersResponseData response) {
        Map<TransactionMetadata.TxnPartition, ErrorCode> answered = new LinkedHashMap<>();
        for (WriteTxnMarkersResponseData.WritableTxnMarkerResult marker : response.markers()) {
            for (WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult topic : marker.topics()) {
                for (WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult partition : topic.partitions()) {
                    answered.put(new TransactionMetadata.TxnPartition(topic.name(), partition.partitionIndex()),
                        ErrorCode.forCode(partition.errorCode()));
                }
            }
        }
        return answered;
    }

    /** Appends one marker here, as the partition's leader; returns NONE or the error. */
    public ErrorCode writeMarker(TopicPartition topicPartition, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) {
        return writeMarker(topicPartition, producerId, producerEpoch, coordinatorEpoch, commit, io.strata.storage.MarkerCheck.NOT_OLDER);
    }

    /** {@link #writeMarker(TopicPartition, long, short, int, boolean)} with the given check of the marker's epoch. */
    public ErrorCode writeMarker(TopicPartition topicPartition, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
                                 io.strata.storage.MarkerCheck check) {
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, coordinatorEpoch);
        ErrorCode error = replicaManager.appendMarker(topicPartition,
            RecordBatchBuilder.endTransactionMarker(0L, time.milliseconds(), 0, producerId, producerEpoch, marker), check);
        if (error == ErrorCode.NONE && topicPartition.topic().equals(InternalTopics.CONSUMER_OFFSETS)) {
            groupCoordinator.onTransactionMarker(topicPartition.partition(), producerId, commit);
        }
        return error;
    }
}
