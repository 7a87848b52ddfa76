package io.strata.tools.client;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreatePartitionsResponseData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.protocol.message.DeleteTopicsRequestData;
import io.strata.protocol.message.DeleteTopicsResponseData;
import io.strata.protocol.message.DescribeConfigsRequestData;
import io.strata.protocol.message.DescribeConfigsResponseData;
import io.strata.protocol.message.IncrementalAlterConfigsRequestData;
import io.strata.protocol.message.IncrementalAlterConfigsResponseData;
import io.strata.protocol.message.MetadataResponseData;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Topic administration over the Kafka admin APIs, as Kafka's Admin client does it: requests
 * go to any broker (in KRaft mode brokers forward them to the controller). Each method checks
 * first that the broker supports the API, so an unsupported operation changes nothing and
 * fails with "the broker does not support X".
 */
public final class TopicAdmin {
    /** ConfigResource type of topics in DescribeConfigs and IncrementalAlterConfigs. */
    static final byte TOPIC_RESOURCE_TYPE = 2;
    /** DescribeConfigs config source of a value set on the topic itself. */
    static final byte TOPIC_CONFIG_SOURCE = 1;
    /** IncrementalAlterConfigs operations. */
    static final byte OPERATION_SET = 0;
    static final byte OPERATION_DELETE = 1;

    private final ClusterClient cluster;

    public TopicAdmin(ClusterClient cluster) {
        this.cluster = cluster;
    }

    /** What CreateTopics reported about a new topic; partitions and replication factor are -1 before CreateTopics v5. */
    public record CreatedTopic(String name, UUID topicId, int partitions, short replicationFactor) {
    }

    /** The outcome for one topic of a multi-topic request. */
    public record TopicResult(String topic, ErrorCode error, String message) {
        public boolean failed() {
            return error != ErrorCode.NONE;
        }

        /** "NAME: message" for a failure. */
        public String describe() {
            return KafkaErrors.describe(error, message);
        }
    }

    /**
     * Creates a topic.
     *
     * @param partitions        -1 for the broker's {@code num.partitions}
     * @param replicationFactor -1 for the broker's {@code default.replication.factor}
     * @throws BrokerErrorException if the broker refuses (TOPIC_ALREADY_EXISTS, INVALID_CONFIG, ...)
     */
    public CreatedTopic createTopic(String name, int partitions, short replicationFactor, Map<String, String> configs) {
        KafkaConnection connection = cluster.anyConnection();
        connection.versions().version(ApiMessageType.CREATE_TOPICS);
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic()
            .setName(name)
            .setNumPartitions(partitions)
            .setReplicationFactor(replicationFactor);
        for (Map.Entry<String, String> config : configs.entrySet()) {
            topic.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().setName(config.getKey()).setValue(config.getValue()));
        }
        CreateTopicsRequestData request = new CreateTopicsRequestData()
            .setTopics(new ArrayList<>(List.of(topic)))
            .setTimeoutMs(ClientLimits.ADMIN_OPERATION_TIMEOUT_MS);
        CreateTopicsResponseData response = connection.send(request, CreateTopicsResponseData.class);
        for (CreateTopicsResponseData.CreatableTopicResult result : response.topics()) {
            if (!name.equals(result.name())) {
                continue;
            }
            ErrorCode error = ErrorCode.forCode(result.errorCode());
            if (error != ErrorCode.NONE) {
                throw new BrokerErrorException("cannot create topic " + name, error, result.errorMessage());
            }
            return new CreatedTopic(name, result.topicId(), result.numPartitions(), result.replicationFactor());
        }
        throw new ClientException("cannot create topic " + name + ": the CreateTopics response does not mention it");
    }

    /** The names of every topic, sorted; internal topics only if asked. */
    public List<String> listTopics(boolean includeInternal) {
        MetadataResponseData response = cluster.metadata(null, false);
        List<String> names = new ArrayList<>();
        for (MetadataResponseData.MetadataResponseTopic topic : response.topics()) {
            if (topic.errorCode() == ErrorCode.NONE.code() && (includeInternal || !topic.isInternal())) {
                names.add(topic.name());
            }
        }
        names.sort(null);
        return names;
    }

    /**
     * The layout of the named topics, or of every topic if {@code names} is empty, sorted by name.
     *
     * @throws BrokerErrorException for the first named topic that does not exist
     */
    public List<TopicInfo> describeTopics(Collection<String> names) {
        MetadataResponseData response = cluster.metadata(names.isEmpty() ? null : names, false);
        Map<String, TopicInfo> topics = new TreeMap<>();
        for (String name : names) {
            MetadataResponseData.MetadataResponseTopic topic = ClusterClient.findTopic(response, name);
            ErrorCode error = topic == null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.forCode(topic.errorCode());
            if (error != ErrorCode.NONE) {
                throw new BrokerErrorException("cannot describe topic " + name, error, null);
            }
        }
        for (MetadataResponseData.MetadataResponseTopic topic : response.topics()) {
            if (topic.errorCode() == ErrorCode.NONE.code()) {
                topics.put(topic.name(), ClusterClient.toTopicInfo(topic));
            }
        }
        return new ArrayList<>(topics.values());
    }

    /** @throws UnsupportedApiException if the broker does not support {@code api} at a version this client implements */
    public void requireSupport(ApiMessageType api) {
        cluster.anyConnection().versions().version(api);
    }

    /** Whether the broker supports {@code api} at a version this client implements. */
    public boolean supports(ApiMessageType api) {
        return cluster.supports(api);
    }

    /**
     * The configs set on each topic itself (source TOPIC_CONFIG), sorted by name. Sensitive
     * values are null.
     *
     * @throws UnsupportedApiException if the broker does not support DescribeConfigs
     */
    public Map<String, Map<String, String>> overriddenConfigs(Collection<String> topics) {
        KafkaConnection connection = cluster.anyConnection();
        connection.versions().version(ApiMessageType.DESCRIBE_CONFIGS);
        DescribeConfigsRequestData request = new DescribeConfigsRequestData();
        for (String topic : topics) {
            request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource()
                .setResourceType(TOPIC_RESOURCE_TYPE)
                .setResourceName(topic)
                .setConfigurationKeys(null));
        }
        DescribeConfigsResponseData response = connection.send(request, DescribeConfigsResponseData.class);
        Map<String, Map<String, String>> configs = new LinkedHashMap<>();
        for (DescribeConfigsResponseData.DescribeConfigsResult result : response.results()) {
            ErrorCode error = ErrorCode.forCode(result.errorCode());
            if (error != ErrorCode.NONE) {
                throw new BrokerErrorException("cannot describe the configs of topic " + result.resourceName(), error, result.errorMessage());
            }
            Map<String, String> overridden = new TreeMap<>();
            for (DescribeConfigsResponseData.DescribeConfigsResourceResult config : result.configs()) {
                if (config.configSource() == TOPIC_CONFIG_SOURCE) {
                    overridden.put(config.name(), config.isSensitive() ? null : config.value());
                }
            }
            configs.put(result.resourceName(), overridden);
        }
        return configs;
    }

    /**
     * Deletes topics; each topic succeeds or fails on its own.
     *
     * @throws UnsupportedApiException if the broker does not support DeleteTopics
     */
    public List<TopicResult> deleteTopics(List<String> names) {
        KafkaConnection connection = cluster.anyConnection();
        short version = connection.versions().version(ApiMessageType.DELETE_TOPICS);
        DeleteTopicsRequestData request = new DeleteTopicsRequestData().setTimeoutMs(ClientLimits.ADMIN_OPERATION_TIMEOUT_MS);
        for (String name : names) {
            if (version >= 6) {
                request.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(name));
            } else {
                request.topicNames().add(name);
            }
        }
        DeleteTopicsResponseData response = connection.send(request, DeleteTopicsResponseData.class);
        Map<String, TopicResult> results = new LinkedHashMap<>();
        for (DeleteTopicsResponseData.DeletableTopicResult result : response.responses()) {
            results.put(result.name(), new TopicResult(result.name(), ErrorCode.forCode(result.errorCode()), result.errorMessage()));
        }
        return inRequestOrder(names, results, "DeleteTopics");
    }

    /**
     * Grows a topic to {@code totalCount} partitions.
     *
     * @throws BrokerErrorException    if the broker refuses (INVALID_PARTITIONS when not growing, ...)
     * @throws UnsupportedApiException if the broker does not support CreatePartitions
     */
    public void createPartitions(String topic, int totalCount) {
        KafkaConnection connection = cluster.anyConnection();
        connection.versions().version(ApiMessageType.CREATE_PARTITIONS);
        CreatePartitionsRequestData request = new CreatePartitionsRequestData()
            .setTopics(new ArrayList<>(List.of(new CreatePartitionsRequestData.CreatePartitionsTopic()
                .setName(topic)
                .setCount(totalCount)
                .setAssignments(null))))
            .setTimeoutMs(ClientLimits.ADMIN_OPERATION_TIMEOUT_MS);
        CreatePartitionsResponseData response = connection.send(request, CreatePartitionsResponseData.class);
        Map<String, TopicResult> results = new LinkedHashMap<>();
        for (CreatePartitionsResponseData.CreatePartitionsTopicResult result : response.results()) {
            results.put(result.name(), new TopicResult(result.name(), ErrorCode.forCode(result.errorCode()), result.errorMessage()));
        }
        TopicResult result = inRequestOrder(List.of(topic), results, "CreatePartitions").get(0);
        if (result.failed()) {
            throw new BrokerErrorException("cannot add partitions to topic " + topic, result.error(), result.message());
        }
    }

    /**
     * Sets and removes configs of a topic in one IncrementalAlterConfigs request.
     *
     * @throws BrokerErrorException    if the broker refuses (INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION, ...)
     * @throws UnsupportedApiException if the broker does not support IncrementalAlterConfigs
     */
    public void alterConfigs(String topic, Map<String, String> set, Collection<String> delete) {
        KafkaConnection connection = cluster.anyConnection();
        connection.versions().version(ApiMessageType.INCREMENTAL_ALTER_CONFIGS);
        IncrementalAlterConfigsRequestData.AlterConfigsResource resource = new IncrementalAlterConfigsRequestData.AlterConfigsResource()
            .setResourceType(TOPIC_RESOURCE_TYPE)
            .setResourceName(topic);
        for (Map.Entry<String, String> entry : set.entrySet()) {
            resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig()
                .setName(entry.getKey()).setConfigOperation(OPERATION_SET).setValue(entry.getValue()));
        }
        for (String name : delete) {
            resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig()
                .setName(name).setConfigOperation(OPERATION_DELETE).setValue(null));
        }
        IncrementalAlterConfigsRequestData request = new IncrementalAlterConfigsRequestData()
            .setResources(new ArrayList<>(List.of(resource)));
        IncrementalAlterConfigsResponseData response = connection.send(request, IncrementalAlterConfigsResponseData.class);
        for (IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse result : response.responses()) {
            ErrorCode error = ErrorCode.forCode(result.errorCode());
            if (topic.equals(result.resourceName()) && error != ErrorCode.NONE) {
                throw new BrokerErrorException("cannot alter the configs of topic " + topic, error, result.errorMessage());
            }
        }
    }

    private static List<TopicResult> inRequestOrder(List<String> names, Map<String, TopicResult> results, String api) {
        List<TopicResult> ordered = new ArrayList<>();
        for (String name : names) {
            TopicResult result = results.get(name);
            if (result == null) {
                throw new ClientException("the " + api + " response does not mention topic " + name);
            }
            ordered.add(result);
        }
        return ordered;
    }
}
