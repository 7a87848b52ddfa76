package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;
import io.strata.metadata.TopicNames;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;
import io.strata.server.config.ServerConfig;
import io.strata.server.network.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Metadata: brokers (every unfenced broker with an endpoint on the listener the request arrived
 * on), the cluster id, a random alive broker as the controller (Kafka's KRaft answer, see
 * {@link AliveBrokers}), and the requested topics with topic ids, partitions, leaders, epochs and
 * replicas. Unknown topics are created on the spot when the client allows it and
 * {@code auto.create.topics.enable} is on; since creation is synchronous here, the answer
 * already carries the new topic's partitions.
 */
final class MetadataHandler implements ApiHandler {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataHandler.class);
    private final BrokerContext context;
    /** Picks the broker reported as controller; shared by the handler threads (java.util.Random is thread-safe). */
    private final java.util.Random random;

    MetadataHandler(BrokerContext context, java.util.Random random) {
        this.context = context;
        this.random = random;
    }

    @Override
    public void handle(Request request) {
        MetadataRequestData body = request.body(MetadataRequestData.class);
        short version = request.apiVersion();
        boolean allTopics = body.topics() == null || (version == 0 && body.topics().isEmpty());
        boolean autoCreate = (version < 4 || body.allowAutoTopicCreation()) && context.config().getBoolean(ServerConfig.AUTO_CREATE_TOPICS_ENABLE);
        MetadataImage image = context.image();
        List<String> toCreate = new ArrayList<>();
        if (!allTopics && autoCreate) {
            Set<String> names = new LinkedHashSet<>();
            for (MetadataRequestData.MetadataRequestTopic topic : body.topics()) {
                if (topic.name() != null && image.topic(topic.name()) == null && TopicNames.validate(topic.name()) == null
                    && !TopicNames.isInternal(topic.name()) && mayCreate(request, topic.name())) {
                    names.add(topic.name());
                }
            }
            toCreate.addAll(names);
        }
        if (toCreate.isEmpty()) {
            request.respond(buildResponse(request, body, allTopics, List.of()));
            return;
        }
        List<CreateTopicsRequestData.CreatableTopic> creations = new ArrayList<>();
        for (String name : toCreate) {
            creations.add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(-1).setReplicationFactor((short) -1));
        }
        context.controller().createTopics(creations, false).whenComplete((results, error) -> {
            if (error != null) {
                LOG.warn("Auto-creating topics {} failed", toCreate, error);
            }
            request.respond(buildResponse(request, body, allTopics, toCreate));
        });
    }

    /** Auto-creation needs DESCRIBE and CREATE (on the cluster or the topic), as Kafka. */
    private boolean mayCreate(Request request, String name) {
        var authorization = context.authorization();
        return authorization.authorize(request, io.strata.metadata.authorizer.AclOperation.DESCRIBE, io.strata.metadata.authorizer.ResourceType.TOPIC, name)
            && (authorization.authorizeCluster(request, io.strata.metadata.authorizer.AclOperation.CREATE) || authorization.authorize(request, io.strata.metadata.authorizer.AclOperation.CREATE, io.strata.metadata.authorizer.ResourceType.TOPIC, name));
    }

    /**
     * The response with authorization applied, as Kafka's: a topic the principal may not DESCRIBE
     * is left out of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED (its existence
     * not told) when named; a missing topic it may describe but not create is
     * TOPIC_AUTHORIZATION_FAILED when auto-creation was asked; authorized operations are the
     * principal's.
     */
    private MetadataResponseData buildResponse(Request request, MetadataRequestData body, boolean allTopics, List<String> justCreated) {
        MetadataResponseData response = unfilteredResponse(request, body, allTopics, justCreated);
        var authorization = context.authorization();
        boolean autoCreate = (request.apiVersion() < 4 || body.allowAutoTopicCreation())
            && context.config().getBoolean(ServerConfig.AUTO_CREATE_TOPICS_ENABLE);
        java.util.Iterator<MetadataResponseData.MetadataResponseTopic> topics = response.topics().iterator();
        while (topics.hasNext()) {
            MetadataResponseData.MetadataResponseTopic topic = topics.next();
            if (topic.name() == null) {
                continue;
            }
            if (!authorization.authorize(request, io.strata.metadata.authorizer.AclOperation.DESCRIBE, io.strata.metadata.authorizer.ResourceType.TOPIC, topic.name())) {
                if (allTopics) {
                    topics.remove();
                } else {
                    topic.setErrorCode(ErrorCode.TOPIC_AUTHORIZATION_FAILED.code()).setTopicId(Uuids.ZERO).setIsInternal(false)
                        .setTopicAuthorizedOperations(AuthorizedOperations.OMITTED).partitions().clear();
                }
                continue;
            }
            if (autoCreate && topic.errorCode() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code() && !mayCreate(request, topic.name())
                && TopicNames.validate(topic.name()) == null && !TopicNames.isInternal(topic.name())) {
                topic.setErrorCode(ErrorCode.TOPIC_AUTHORIZATION_FAILED.code());
            }
            if (body.includeTopicAuthorizedOperations() && topic.errorCode() == ErrorCode.NONE.code()) {
                topic.setTopicAuthorizedOperations(authorization.topicOperations(request, topic.name()));
            }
        }
        if (body.includeClusterAuthorizedOperations()) {
            response.setClusterAuthorizedOperations(authorization.clusterOperations(request));
        }
        return response;
    }

    private MetadataResponseData unfilteredResponse(Request request, MetadataRequestData body, boolean allTopics, List<String> justCreated) {
        MetadataImage image = context.image();
        MetadataResponseData response = new MetadataResponseData()
            .setClusterId(context.clusterId())
            .setControllerId(AliveBrokers.randomAliveBrokerId(image, random))
            .setClusterAuthorizedOperations(body.includeClusterAuthorizedOperations() ? AuthorizedOperations.CLUSTER : AuthorizedOperations.OMITTED);
        for (BrokerRegistration broker : new java.util.TreeMap<>(image.brokers()).values()) {
            BrokerRegistration.Endpoint endpoint = broker.endpoint(request.listenerName());
            if (endpoint != null && !broker.fenced()) {
                response.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(broker.id())
                    .setHost(endpoint.host()).setPort(endpoint.port()).setRack(broker.rack()));
            }
        }
        if (allTopics) {
            for (TopicImage topic : image.topicsByName().values()) {
                response.topics().add(describe(image, topic, body.includeTopicAuthorizedOperations(), request.listenerName(), request.apiVersion()));
            }
            return response;
        }
        for (MetadataRequestData.MetadataRequestTopic requested : body.topics()) {
            response.topics().add(describeRequested(image, requested, body.includeTopicAuthorizedOperations(), justCreated, request.listenerName(),
                request.apiVersion()));
        }
        return response;
    }

    private MetadataResponseData.MetadataResponseTopic describeRequested(MetadataImage image, MetadataRequestData.MetadataRequestTopic requested,
                                                                       boolean includeOperations, List<String> justCreated, String listenerName,
                                                                       short version) {
        // By id (v10+): kafka-clients leaves the name at its default, "", rather than null (MetadataRequest.Builder.forTopicIds).
        if (requested.name() == null || requested.name().isEmpty() && !Uuids.ZERO.equals(requested.topicId())) {
            TopicImage byId = image.topic(requested.topicId());
            if (byId == null || Uuids.ZERO.equals(requested.topicId())) {
                return new MetadataResponseData.MetadataResponseTopic().setErrorCode(ErrorCode.UNKNOWN_TOPIC_ID.code())
                    .setTopicId(requested.topicId()).setName(null).setTopicAuthorizedOperations(AuthorizedOperations.OMITTED);
            }
            return describe(image, byId, includeOperations, listenerName, version);
        }
        TopicImage topic = image.topic(requested.name());
        if (topic != null) {
            return describe(image, topic, includeOperations, listenerName, version);
        }
        ErrorCode error = TopicNames.validate(requested.name()) != null ? ErrorCode.INVALID_TOPIC_EXCEPTION
            : justCreated.contains(requested.name()) ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        return new MetadataResponseData.MetadataResponseTopic().setErrorCode(error.code()).setName(requested.name())
            .setTopicAuthorizedOperations(AuthorizedOperations.OMITTED);
    }

    /**
     * A topic's partitions as Kafka's KRaft metadata cache describes them at Metadata
     * {@code version}: leader, partition error and offline replicas by {@link PartitionLeaders}.
     */
    static MetadataResponseData.MetadataResponseTopic describe(MetadataImage image, TopicImage topic, boolean includeOperations,
                                                             String listenerName, short version) {
        MetadataResponseData.MetadataResponseTopic result = new MetadataResponseData.MetadataResponseTopic()
            .setName(topic.name()).setTopicId(topic.id()).setIsInternal(TopicNames.isInternal(topic.name()))
            .setTopicAuthorizedOperations(includeOperations ? AuthorizedOperations.TOPIC : AuthorizedOperations.OMITTED);
        for (int index = 0; index < topic.partitionCount(); index++) {
            PartitionRegistration partition = topic.partition(index);
            if (partition == null) {
                continue;
            }
            PartitionLeaders.Leader leader = PartitionLeaders.leader(image, partition, listenerName);
            MetadataResponseData.MetadataResponsePartition described = new MetadataResponseData.MetadataResponsePartition()
                .setPartitionIndex(index)
                .setErrorCode(PartitionLeaders.metadataError(leader, version).code())
                .setLeaderId(PartitionLeaders.reportedLeaderId(image, partition, listenerName)).setLeaderEpoch(partition.leaderEpoch());
            for (int replica : partition.replicas()) {
                described.replicaNodes().add(replica);
            }
            for (int replica : partition.isr()) {
                described.isrNodes().add(replica);
            }
            described.offlineReplicas().addAll(PartitionLeaders.offlineReplicas(image, partition, listenerName));
            result.partitions().add(described);
        }
        return result;
    }

}
