package io.strata.tools.client;

import io.strata.common.Time;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client's view of a cluster: it bootstraps from a list of addresses, learns the brokers
 * and topic layouts from Metadata, and keeps one {@link KafkaConnection} per broker, opened on
 * first use. Partition requests go to the partition's leader through {@link #connection(int)};
 * cluster-wide requests (Metadata, admin APIs, InitProducerId) go to {@link #anyConnection()}.
 *
 * <p>A connection that fails closes itself; the next call for that broker opens a new one. The
 * bootstrap connection is kept and, once Metadata names the broker at its address, reused as
 * that broker's connection, so a single-node cluster needs one socket.
 *
 * <p>Not thread-safe: one owner at a time.
 */
public final class ClusterClient implements AutoCloseable {
    private final List<HostPort> bootstrapAddresses;
    private final ClientSettings settings;
    private final Time time;
    private final Map<Integer, KafkaConnection> connections = new HashMap<>();
    private KafkaConnection bootstrapConnection;
    private Map<Integer, HostPort> brokers = Map.of();
    private String clusterId;
    private int controllerId = -1;

    private ClusterClient(List<HostPort> bootstrapAddresses, ClientSettings settings, Time time) {
        this.bootstrapAddresses = List.copyOf(bootstrapAddresses);
        this.settings = settings;
        this.time = time;
    }

    /**
     * Connects to the first reachable bootstrap address and reads the cluster's brokers.
     *
     * @throws ClientException naming the last address tried if none is reachable
     */
    public static ClusterClient connect(List<HostPort> bootstrapAddresses, ClientSettings settings, Time time) {
        if (bootstrapAddresses.isEmpty()) {
            throw new IllegalArgumentException("no bootstrap addresses");
        }
        ClusterClient client = new ClusterClient(bootstrapAddresses, settings, time);
        try {
            client.bootstrapConnection = client.openBootstrapConnection();
            client.metadata(List.of(), false);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        return client;
    }

    private KafkaConnection openBootstrapConnection() {
        ClientException lastFailure = null;
        for (HostPort address : bootstrapAddresses) {
            try {
                return KafkaConnection.open(address, settings, time);
            } catch (ClientException e) {
                lastFailure = e;
            }
        }
        throw lastFailure;
    }

    public ClientSettings settings() {
        return settings;
    }

    public Time time() {
        return time;
    }

    public String clusterId() {
        return clusterId;
    }

    /** The controller id Metadata reported, or -1. */
    public int controllerId() {
        return controllerId;
    }

    /** The brokers of the last Metadata response, by node id. */
    public Map<Integer, HostPort> brokers() {
        return brokers;
    }

    /**
     * An open connection to some broker: the bootstrap connection while it lives, else any open
     * broker connection, else a new connection to a known broker or a bootstrap address.
     */
    public KafkaConnection anyConnection() {
        if (bootstrapConnection != null && bootstrapConnection.isOpen()) {
            return bootstrapConnection;
        }
        for (KafkaConnection connection : connections.values()) {
            if (connection.isOpen()) {
                return connection;
            }
        }
        ClientException lastFailure = null;
        for (Integer nodeId : brokers.keySet()) {
            try {
                return connection(nodeId);
            } catch (ClientException e) {
                lastFailure = e;
            }
        }
        try {
            bootstrapConnection = openBootstrapConnection();
            return bootstrapConnection;
        } catch (ClientException e) {
            throw lastFailure != null ? lastFailure : e;
        }
    }

    /**
     * The connection to broker {@code nodeId}, opened if needed.
     *
     * @throws ClientException if Metadata does not list the broker or it is unreachable
     */
    public KafkaConnection connection(int nodeId) {
        KafkaConnection connection = connections.get(nodeId);
        if (connection != null && connection.isOpen()) {
            return connection;
        }
        HostPort address = brokers.get(nodeId);
        if (address == null) {
            throw new ClientException("broker " + nodeId + " is not in the cluster metadata (known: " + brokers.keySet() + ")");
        }
        connection = KafkaConnection.open(address, settings, time);
        connections.put(nodeId, connection);
        return connection;
    }

    /** Whether the broker reached by {@link #anyConnection()} supports some version of {@code api} the client implements. */
    public boolean supports(ApiMessageType api) {
        return anyConnection().versions().supports(api);
    }

    /**
     * Sends Metadata for {@code topics} (null: every topic) and refreshes the broker list.
     *
     * @throws ClientException on a top-level error or a failed exchange
     */
    public MetadataResponseData metadata(Collection<String> topics, boolean allowAutoTopicCreation) {
        MetadataRequestData request = new MetadataRequestData().setAllowAutoTopicCreation(allowAutoTopicCreation);
        if (topics == null) {
            request.setTopics(null);
        } else {
            List<MetadataRequestData.MetadataRequestTopic> requested = new ArrayList<>();
            for (String topic : topics) {
                requested.add(new MetadataRequestData.MetadataRequestTopic().setName(topic));
            }
            request.setTopics(requested);
        }
        MetadataResponseData response = anyConnection().send(request, MetadataResponseData.class);
        if (response.errorCode() != ErrorCode.NONE.code()) {
            throw new BrokerErrorException("Metadata request failed", ErrorCode.forCode(response.errorCode()), null);
        }
        updateBrokers(response);
        return response;
    }

    private void updateBrokers(MetadataResponseData response) {
        Map<Integer, HostPort> updated = new LinkedHashMap<>();
        for (MetadataResponseData.MetadataResponseBroker broker : response.brokers()) {
            updated.put(broker.nodeId(), new HostPort(broker.host(), broker.port()));
        }
        brokers = Map.copyOf(updated);
        clusterId = response.clusterId();
        controllerId = response.controllerId();
        for (Map.Entry<Integer, KafkaConnection> entry : new ArrayList<>(connections.entrySet())) {
            if (!entry.getValue().isOpen() || !entry.getValue().address().equals(brokers.get(entry.getKey()))) {
                entry.getValue().close();
                connections.remove(entry.getKey());
            }
        }
        if (bootstrapConnection != null && bootstrapConnection.isOpen()) {
            for (Map.Entry<Integer, HostPort> broker : brokers.entrySet()) {
                if (broker.getValue().equals(bootstrapConnection.address()) && !connections.containsKey(broker.getKey())) {
                    connections.put(broker.getKey(), bootstrapConnection);
                }
            }
        }
    }

    /**
     * The layout of one topic, waiting (up to the request timeout) while its partitions have no
     * leader yet, as right after creation.
     *
     * @param allowAutoTopicCreation whether a missing topic may be created by the broker (as a
     *                               producer may); if not, a missing topic is an error at once
     * @throws BrokerErrorException for UNKNOWN_TOPIC_OR_PARTITION and other topic errors
     */
    public TopicInfo topic(String name, boolean allowAutoTopicCreation) {
        long deadlineMs = time.hiResClockMs() + settings.requestTimeoutMs();
        while (true) {
            MetadataResponseData response = metadata(List.of(name), allowAutoTopicCreation);
            MetadataResponseData.MetadataResponseTopic topic = findTopic(response, name);
            ErrorCode error = topic == null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.forCode(topic.errorCode());
            boolean settling = error == ErrorCode.LEADER_NOT_AVAILABLE
                || (allowAutoTopicCreation && error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            if (error == ErrorCode.NONE) {
                TopicInfo info = toTopicInfo(topic);
                boolean leadersKnown = info.partitions().stream().allMatch(PartitionInfo::hasLeader);
                if (leadersKnown && info.partitionCount() > 0) {
                    return info;
                }
                settling = true;
            }
            if (!settling || time.hiResClockMs() >= deadlineMs) {
                if (error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
                    throw new BrokerErrorException("cannot find topic " + name, error, null);
                }
                throw new BrokerErrorException("topic " + name + " is not available", error == ErrorCode.NONE ? ErrorCode.LEADER_NOT_AVAILABLE : error, null);
            }
            backoff();
        }
    }

    /** Sleeps the retry backoff; an interrupt ends the command. */
    public void backoff() {
        try {
            time.sleep(ClientLimits.RETRY_BACKOFF_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClientException("interrupted", e);
        }
    }

    static MetadataResponseData.MetadataResponseTopic findTopic(MetadataResponseData response, String name) {
        for (MetadataResponseData.MetadataResponseTopic topic : response.topics()) {
            if (name.equals(topic.name())) {
                return topic;
            }
        }
        return null;
    }

    /** Converts a Metadata topic without an error into a {@link TopicInfo}. */
    public static TopicInfo toTopicInfo(MetadataResponseData.MetadataResponseTopic topic) {
        List<PartitionInfo> partitions = new ArrayList<>();
        for (MetadataResponseData.MetadataResponsePartition partition : topic.partitions()) {
            partitions.add(new PartitionInfo(partition.partitionIndex(), partition.leaderId(), partition.leaderEpoch(),
                partition.replicaNodes(), partition.isrNodes(), partition.offlineReplicas(), ErrorCode.forCode(partition.errorCode())));
        }
        return new TopicInfo(topic.name(), topic.topicId() == null ? Uuids.ZERO : topic.topicId(), topic.isInternal(), partitions);
    }

    @Override
    public void close() {
        for (KafkaConnection connection : connections.values()) {
            connection.close();
        }
        connections.clear();
        if (bootstrapConnection != null) {
            bootstrapConnection.close();
        }
    }
}
