package io.strata.metadata;

import io.strata.common.Time;
import io.strata.common.config.ConfigException;
import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.ProducerIdsRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.RemoveTopicRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreatePartitionsResponseData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.storage.LogConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The controller: the only writer of the metadata log. A single-threaded event loop: each
 * operation reads the current image, validates the request against it, turns it into
 * metadata records, appends them as one batch (fsynced), applies them to a new image and
 * publishes that image to every {@link MetadataPublisher} before completing. Because one
 * thread runs every operation, the state machine needs no locks, and two concurrent
 * requests (say, two creations of the same topic) are strictly ordered.
 *
 * <p>Readers on any thread use {@link #image()}, a volatile reference to an immutable image.
 */
public final class Controller implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Controller.class);
    /** Producer ids are handed out in blocks, as Kafka's controller does. */
    public static final int PRODUCER_ID_BLOCK_SIZE = 1000;

    private final ControllerSettings settings;
    private final MetadataLog log;
    private final Time time;
    private final ExecutorService thread;
    private final List<MetadataPublisher> publishers = new CopyOnWriteArrayList<>();
    private volatile MetadataImage image = MetadataImage.EMPTY;

    public Controller(ControllerSettings settings, MetadataLog log, Time time) {
        this.settings = settings;
        this.log = log;
        this.time = time;
        this.thread = Executors.newSingleThreadExecutor(task -> {
            Thread controllerThread = new Thread(task, "strata-controller");
            controllerThread.setDaemon(true);
            return controllerThread;
        });
    }

    public MetadataImage image() {
        return image;
    }

    public void addPublisher(MetadataPublisher publisher) {
        publishers.add(publisher);
    }

    /** Replays the metadata log into the image (at start-up, before any operation). Returns the number of batches. */
    public int replay() {
        List<MetadataLog.MetadataBatch> batches = log.readAll();
        MetadataImage current = MetadataImage.EMPTY;
        for (MetadataLog.MetadataBatch batch : batches) {
            current = current.apply(batch.records(), batch.lastOffset());
        }
        image = current;
        return batches.size();
    }

    /** Runs {@code operation} on the controller thread. */
    private <T> CompletableFuture<T> submit(String name, Supplier<T> operation) {
        CompletableFuture<T> result = new CompletableFuture<>();
        thread.execute(() -> {
            try {
                result.complete(operation.get());
            } catch (Throwable e) {
                LOG.error("Controller operation {} failed", name, e);
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Appends, applies and publishes one batch. Controller thread only. */
    private void commit(List<ApiMessage> records) {
        if (records.isEmpty()) {
            return;
        }
        long lastOffset;
        try {
            lastOffset = log.append(records, time.milliseconds());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("could not write to the metadata log", e);
        }
        MetadataImage previous = image;
        MetadataImage next = previous.apply(records, lastOffset);
        image = next;
        for (MetadataPublisher publisher : publishers) {
            publisher.publish(previous, next);
        }
    }

    /** Publishes the replayed image to every publisher (at start-up, after they are registered). */
    public CompletableFuture<Void> publishInitialImage() {
        return submit("publish initial image", () -> {
            for (MetadataPublisher publisher : publishers) {
                publisher.publish(MetadataImage.EMPTY, image);
            }
            return null;
        });
    }

    // ---------------------------------------------------------------- bootstrap and registration

    /**
     * Registers this node as a broker (every start: a new incarnation with the current
     * endpoints) and, on a new cluster, finalizes the bootstrap features.
     */
    public CompletableFuture<Long> registerBroker(List<BrokerRegistration.Endpoint> endpoints, String rack, Map<String, Short> bootstrapFeatures) {
        return submit("register broker", () -> {
            List<ApiMessage> records = new ArrayList<>();
            if (image.features().isEmpty()) {
                for (Map.Entry<String, Short> feature : bootstrapFeatures.entrySet()) {
                    records.add(new FeatureLevelRecord().setName(feature.getKey()).setFeatureLevel(feature.getValue()));
                }
            }
            RegisterBrokerRecord register = new RegisterBrokerRecord()
                .setBrokerId(settings.nodeId())
                .setIncarnationId(UUID.randomUUID())
                .setBrokerEpoch(log.log().logEndOffset() + records.size())
                .setRack(rack)
                .setFenced(false);
            for (BrokerRegistration.Endpoint endpoint : endpoints) {
                register.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName(endpoint.listenerName()).setHost(endpoint.host())
                    .setPort(endpoint.port()).setSecurityProtocol(endpoint.securityProtocol()));
            }
            records.add(register);
            commit(records);
            return register.brokerEpoch();
        });
    }

    /**
     * UpdateFeatures: validates the changes against the current levels and {@code supported}
     * ({@link FeatureUpdates}) and, unless {@code validateOnly}, writes one FeatureLevelRecord per
     * changed feature in one batch, so the new levels survive a restart and every publisher (and
     * the next ApiVersions answer) sees them together. All or nothing.
     */
    public CompletableFuture<FeatureUpdates.Result> updateFeatures(Map<String, FeatureUpdates.Update> updates, Map<String, short[]> supported,
                                                                   boolean validateOnly) {
        return submit("update features", () -> {
            FeatureUpdates.Result result = FeatureUpdates.validate(updates, image.features(), supported, settings.nodeId());
            if (result.error() == ErrorCode.NONE && !validateOnly) {
                commit(result.records());
                LOG.info("Finalized features changed: {} (metadata offset {})", updates, image.offset());
            }
            return result;
        });
    }

    /**
     * The state of the metadata quorum as its leader sees it. Strata's quorum is this node
     * alone: it leads at a fixed epoch, and every appended batch is fsynced and committed at
     * once, so the high watermark is the log end offset and the only voter is always caught up
     * ({@code nowMs} is both its last fetch and its last caught-up time, as Kafka reports for
     * the leader itself).
     */
    public record QuorumState(int leaderId, int leaderEpoch, long highWatermark, long logEndOffset, long nowMs) {
    }

    /** DescribeQuorum's answer, read on the controller thread so that it sees a whole batch or none. */
    public CompletableFuture<QuorumState> describeQuorum() {
        return submit("describe quorum", () -> new QuorumState(settings.nodeId(), MetadataLog.SINGLE_VOTER_EPOCH,
            log.log().highWatermark(), log.log().logEndOffset(), time.milliseconds()));
    }

    // ---------------------------------------------------------------- topics

    /** Creates topics (or only validates them); one result per requested topic, in order. */
    public CompletableFuture<List<CreateTopicsResponseData.CreatableTopicResult>> createTopics(List<CreateTopicsRequestData.CreatableTopic> topics,
                                                                                             boolean validateOnly) {
        return submit("create topics", () -> {
            List<CreateTopicsResponseData.CreatableTopicResult> results = new ArrayList<>();
            List<ApiMessage> records = new ArrayList<>();
            Set<String> seenInRequest = new HashSet<>();
            Map<String, String> pendingCollisions = new HashMap<>();
            for (CreateTopicsRequestData.CreatableTopic topic : topics) {
                CreateTopicsResponseData.CreatableTopicResult result = new CreateTopicsResponseData.CreatableTopicResult().setName(topic.name());
                results.add(result);
                if (!seenInRequest.add(topic.name())) {
                    fail(result, ErrorCode.INVALID_REQUEST, "Duplicate topic name " + topic.name() + " in the request");
                    continue;
                }
                List<ApiMessage> topicRecords = createTopicRecords(topic, result, pendingCollisions);
                if (topicRecords != null && !validateOnly) {
                    records.addAll(topicRecords);
                }
            }
            commit(records);
            return results;
        });
    }

    private static void fail(CreateTopicsResponseData.CreatableTopicResult result, ErrorCode error, String message) {
        result.setErrorCode(error.code()).setErrorMessage(message).setNumPartitions(-1).setReplicationFactor((short) -1);
    }

    private List<ApiMessage> createTopicRecords(CreateTopicsRequestData.CreatableTopic topic, CreateTopicsResponseData.CreatableTopicResult result,
                                                Map<String, String> pendingCollisions) {
        MetadataImage current = image;
        String invalid = TopicNames.validate(topic.name());
        if (invalid != null) {
            fail(result, ErrorCode.INVALID_TOPIC_EXCEPTION, invalid);
            return null;
        }
        if (current.topic(topic.name()) != null) {
            fail(result, ErrorCode.TOPIC_ALREADY_EXISTS, "Topic '" + topic.name() + "' already exists.");
            return null;
        }
        String unified = TopicNames.unifyCollisionChars(topic.name());
        for (String existing : current.topicsByName().keySet()) {
            if (TopicNames.unifyCollisionChars(existing).equals(unified)) {
                fail(result, ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic '" + topic.name() + "' collides with existing topic: " + existing);
                return null;
            }
        }
        if (pendingCollisions.containsKey(unified)) {
            fail(result, ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic '" + topic.name() + "' collides with topic " + pendingCollisions.get(unified)
                + " in the same request");
            return null;
        }
        Map<String, String> configs = new LinkedHashMap<>();
        for (CreateTopicsRequestData.CreatableTopicConfig config : topic.configs()) {
            if (config.value() == null) {
                fail(result, ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: " + config.name());
                return null;
            }
            configs.put(config.name(), config.value());
        }
        try {
            LogConfig.validateOverrides(configs);
        } catch (ConfigException e) {
            fail(result, ErrorCode.INVALID_CONFIG, e.getMessage());
            return null;
        }
        List<int[]> assignment = assignReplicas(topic, result);
        if (assignment == null) {
            return null;
        }
        UUID topicId = Uuids.randomTopicId();
        List<ApiMessage> records = new ArrayList<>();
        records.add(new TopicRecord().setName(topic.name()).setTopicId(topicId));
        for (int partition = 0; partition < assignment.size(); partition++) {
            records.add(partitionRecord(topicId, partition, assignment.get(partition)));
        }
        for (Map.Entry<String, String> config : configs.entrySet()) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName(topic.name())
                .setName(config.getKey()).setValue(config.getValue()));
        }
        pendingCollisions.put(unified, topic.name());
        result.setTopicId(topicId).setNumPartitions(assignment.size()).setReplicationFactor((short) assignment.get(0).length)
            .setErrorCode(ErrorCode.NONE.code());
        LogConfig effective = LogConfig.of(settings.topicDefaults(), configs);
        for (Map.Entry<String, Object> entry : effective.values().entrySet()) {
            byte source = configs.containsKey(entry.getKey()) ? (byte) 1 : settings.topicDefaults().containsKey(entry.getKey()) ? (byte) 4 : (byte) 5;
            result.configs().add(new CreateTopicsResponseData.CreatableTopicConfigs().setName(entry.getKey())
                .setValue(ConfigValues.toString(entry.getValue())).setReadOnly(false).setConfigSource(source).setIsSensitive(false));
        }
        return records;
    }

    private static PartitionRecord partitionRecord(UUID topicId, int partition, int[] replicas) {
        PartitionRecord record = new PartitionRecord().setPartitionId(partition).setTopicId(topicId)
            .setLeader(replicas[0]).setLeaderEpoch(0).setPartitionEpoch(0);
        for (int replica : replicas) {
            record.replicas().add(replica);
            record.isr().add(replica);
        }
        return record;
    }

    /** Replica lists per partition, from the request's manual assignment or round-robin over registered brokers. */
    private List<int[]> assignReplicas(CreateTopicsRequestData.CreatableTopic topic, CreateTopicsResponseData.CreatableTopicResult result) {
        List<Integer> brokers = new ArrayList<>(image.brokers().keySet());
        brokers.sort(null);
        if (!topic.assignments().isEmpty()) {
            if (topic.numPartitions() != -1 || topic.replicationFactor() != -1) {
                fail(result, ErrorCode.INVALID_REQUEST, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.");
                return null;
            }
            return manualAssignment(topic.assignments().stream()
                .map(a -> Map.entry(a.partitionIndex(), a.brokerIds())).toList(), 0, brokers, result::setErrorCode, result::setErrorMessage);
        }
        int partitions = topic.numPartitions() == -1 ? settings.defaultPartitions() : topic.numPartitions();
        short replication = topic.replicationFactor() == -1 ? settings.defaultReplicationFactor() : topic.replicationFactor();
        if (partitions <= 0) {
            fail(result, ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.");
            return null;
        }
        if (replication <= 0) {
            fail(result, ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value.");
            return null;
        }
        if (replication > brokers.size()) {
            fail(result, ErrorCode.INVALID_REPLICATION_FACTOR, "Unable to replicate the partition " + replication
                + " time(s): The target replication factor of " + replication + " cannot be reached because only " + brokers.size()
                + " broker(s) are registered.");
            return null;
        }
        return roundRobin(partitions, replication, brokers, 0);
    }

    private static List<int[]> roundRobin(int partitions, int replication, List<Integer> brokers, int firstPartition) {
        List<int[]> assignment = new ArrayList<>(partitions);
        for (int p = 0; p < partitions; p++) {
            int[] replicas = new int[replication];
            for (int r = 0; r < replication; r++) {
                replicas[r] = brokers.get((firstPartition + p + r) % brokers.size());
            }
            assignment.add(replicas);
        }
        return assignment;
    }

    private interface ErrorSink {
        Object set(short code);
    }

    private interface MessageSink {
        Object set(String message);
    }

    private static List<int[]> manualAssignment(List<Map.Entry<Integer, List<Integer>>> requested, int firstPartition, List<Integer> brokers,
                                                ErrorSink error, MessageSink message) {
        List<int[]> assignment = new ArrayList<>();
        int expectedReplication = -1;
        for (int i = 0; i < requested.size(); i++) {
            Map.Entry<Integer, List<Integer>> entry = requested.get(i);
            String problem = null;
            if (entry.getKey() != firstPartition + i) {
                problem = "Partitions should be numbered consecutively from " + firstPartition + ", but found " + entry.getKey();
            } else if (entry.getValue().isEmpty()) {
                problem = "The manual partition assignment includes an empty replica list.";
            } else if (new HashSet<>(entry.getValue()).size() != entry.getValue().size()) {
                problem = "The manual partition assignment includes duplicate replicas: " + entry.getValue();
            } else if (expectedReplication != -1 && entry.getValue().size() != expectedReplication) {
                problem = "The manual partition assignment includes partitions with different replication factors.";
            } else {
                for (int broker : entry.getValue()) {
                    if (!brokers.contains(broker)) {
                        problem = "The manual partition assignment includes broker " + broker + ", but no such broker is registered.";
                    }
                }
            }
            if (problem != null) {
                error.set(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code());
                message.set(problem);
                return null;
            }
            expectedReplication = entry.getValue().size();
            assignment.add(entry.getValue().stream().mapToInt(Integer::intValue).toArray());
        }
        return assignment;
    }

    /** The outcome of deleting one topic. */
    public record DeleteResult(String name, UUID topicId, ErrorCode error, String message) {
    }

    /** Deletes topics named by name or by id (a null name means by id). */
    public CompletableFuture<List<DeleteResult>> deleteTopics(List<String> names, List<UUID> ids) {
        return submit("delete topics", () -> {
            List<DeleteResult> results = new ArrayList<>();
            List<ApiMessage> records = new ArrayList<>();
            Set<UUID> deleting = new HashSet<>();
            MetadataImage current = image;
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                UUID id = ids.get(i);
                TopicImage topic = name != null ? current.topic(name) : current.topic(id);
                if (topic == null) {
                    ErrorCode error = name != null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID;
                    results.add(new DeleteResult(name, id, error, name != null
                        ? "This server does not host this topic-partition." : "This server does not host this topic ID."));
                    continue;
                }
                if (!settings.deleteTopicEnable()) {
                    results.add(new DeleteResult(topic.name(), topic.id(), ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled."));
                    continue;
                }
                if (deleting.add(topic.id())) {
                    records.add(new RemoveTopicRecord().setTopicId(topic.id()));
                }
                results.add(new DeleteResult(topic.name(), topic.id(), ErrorCode.NONE, null));
            }
            commit(records);
            return results;
        });
    }

    /** Adds partitions to topics. */
    public CompletableFuture<List<CreatePartitionsResponseData.CreatePartitionsTopicResult>> createPartitions(
            List<CreatePartitionsRequestData.CreatePartitionsTopic> topics, boolean validateOnly) {
        return submit("create partitions", () -> {
            List<CreatePartitionsResponseData.CreatePartitionsTopicResult> results = new ArrayList<>();
            List<ApiMessage> records = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (CreatePartitionsRequestData.CreatePartitionsTopic request : topics) {
                CreatePartitionsResponseData.CreatePartitionsTopicResult result =
                    new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(request.name());
                results.add(result);
                if (!seen.add(request.name())) {
                    result.setErrorCode(ErrorCode.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name in the request.");
                    continue;
                }
                List<ApiMessage> topicRecords = createPartitionRecords(request, result);
                if (topicRecords != null && !validateOnly) {
                    records.addAll(topicRecords);
                }
            }
            commit(records);
            return results;
        });
    }

    private List<ApiMessage> createPartitionRecords(CreatePartitionsRequestData.CreatePartitionsTopic request,
                                                    CreatePartitionsResponseData.CreatePartitionsTopicResult result) {
        TopicImage topic = image.topic(request.name());
        if (topic == null) {
            result.setErrorCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code()).setErrorMessage("This server does not host this topic-partition.");
            return null;
        }
        int current = topic.partitionCount();
        if (request.count() < current) {
            result.setErrorCode(ErrorCode.INVALID_PARTITIONS.code()).setErrorMessage("Topic currently has " + current
                + " partitions, which is higher than the requested " + request.count() + ".");
            return null;
        }
        if (request.count() == current) {
            result.setErrorCode(ErrorCode.INVALID_PARTITIONS.code()).setErrorMessage("Topic already has " + current + " partitions.");
            return null;
        }
        int added = request.count() - current;
        List<Integer> brokers = new ArrayList<>(image.brokers().keySet());
        brokers.sort(null);
        int replication = topic.partition(0).replicas().length;
        List<int[]> assignment;
        if (request.assignments() != null && !request.assignments().isEmpty()) {
            if (request.assignments().size() != added) {
                result.setErrorCode(ErrorCode.INVALID_REPLICA_ASSIGNMENT.code()).setErrorMessage("Attempted to add " + added
                    + " additional partition(s), but only " + request.assignments().size() + " assignment(s) were specified.");
                return null;
            }
            List<Map.Entry<Integer, List<Integer>>> entries = new ArrayList<>();
            for (int i = 0; i < added; i++) {
                entries.add(Map.entry(current + i, request.assignments().get(i).brokerIds()));
            }
            assignment = manualAssignment(entries, current, brokers, result::setErrorCode, result::setErrorMessage);
            if (assignment == null) {
                return null;
            }
        } else {
            assignment = roundRobin(added, replication, brokers, current);
        }
        List<ApiMessage> records = new ArrayList<>();
        for (int i = 0; i < added; i++) {
            records.add(partitionRecord(topic.id(), current + i, assignment.get(i)));
        }
        result.setErrorCode(ErrorCode.NONE.code());
        return records;
    }

    // ---------------------------------------------------------------- configs

    /** One change to a dynamic configuration: a value to set, or null to remove the key. */
    public record ConfigChange(ConfigResource resource, String name, String value) {
    }

    /** Validated config changes, applied together. Validation is the caller's (it knows the resource types). */
    public CompletableFuture<Void> alterConfigs(List<ConfigChange> changes) {
        return submit("alter configs", () -> {
            List<ApiMessage> records = new ArrayList<>();
            for (ConfigChange change : changes) {
                records.add(new ConfigRecord().setResourceType(change.resource().type()).setResourceName(change.resource().name())
                    .setName(change.name()).setValue(change.value()));
            }
            commit(records);
            return null;
        });
    }

    // ---------------------------------------------------------------- producer ids

    /** Hands out a block of producer ids that will never be handed out again; returns its first id. */
    public CompletableFuture<Long> allocateProducerIds(int blockSize) {
        return submit("allocate producer ids", () -> {
            long first = image.nextProducerId();
            commit(List.of(new ProducerIdsRecord().setBrokerId(settings.nodeId()).setBrokerEpoch(0).setNextProducerId(first + blockSize)));
            return first;
        });
    }

    @Override
    public void close() throws InterruptedException {
        thread.shutdown();
        thread.awaitTermination(10, TimeUnit.SECONDS);
    }
}
