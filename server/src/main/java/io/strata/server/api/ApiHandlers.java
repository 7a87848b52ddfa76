package io.strata.server.api;

import io.strata.protocol.message.ApiMessageType;

import java.util.EnumMap;
import java.util.Map;

/** The handler of each API; the dispatch table the broker is built with. */
public final class ApiHandlers {
    private ApiHandlers() {
    }

    public static Map<ApiMessageType, ApiHandler> create(BrokerContext context) {
        // Only picks the "controller id" reported to clients among alive brokers; no seed is needed outside tests.
        return create(context, new java.util.Random());
    }

    /** The dispatch table, with {@code random} choosing the broker that Metadata and DescribeCluster report as controller. */
    public static Map<ApiMessageType, ApiHandler> create(BrokerContext context, java.util.Random random) {
        Map<ApiMessageType, ApiHandler> handlers = new EnumMap<>(ApiMessageType.class);
        handlers.put(ApiMessageType.API_VERSIONS, new ApiVersionsHandler(context));
        handlers.put(ApiMessageType.METADATA, new MetadataHandler(context, random));
        handlers.put(ApiMessageType.PRODUCE, new ProduceHandler(context));
        handlers.put(ApiMessageType.FETCH, new FetchHandler(context));
        handlers.put(ApiMessageType.LIST_OFFSETS, new ListOffsetsHandler(context));
        handlers.put(ApiMessageType.CREATE_TOPICS, new CreateTopicsHandler(context));
        handlers.put(ApiMessageType.INIT_PRODUCER_ID, new InitProducerIdHandler(context));
        handlers.put(ApiMessageType.DELETE_TOPICS, new DeleteTopicsHandler(context));
        handlers.put(ApiMessageType.CREATE_PARTITIONS, new CreatePartitionsHandler(context));
        handlers.put(ApiMessageType.DELETE_RECORDS, new DeleteRecordsHandler(context));
        handlers.put(ApiMessageType.DESCRIBE_CONFIGS, new DescribeConfigsHandler(context));
        handlers.put(ApiMessageType.ALTER_CONFIGS, new AlterConfigsHandler(context));
        handlers.put(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, new IncrementalAlterConfigsHandler(context));
        handlers.put(ApiMessageType.DESCRIBE_CLUSTER, new DescribeClusterHandler(context, random));
        handlers.put(ApiMessageType.DESCRIBE_TOPIC_PARTITIONS, new DescribeTopicPartitionsHandler(context));
        handlers.put(ApiMessageType.ALTER_REPLICA_LOG_DIRS, new AlterReplicaLogDirsHandler(context));
        handlers.put(ApiMessageType.DESCRIBE_LOG_DIRS, new DescribeLogDirsHandler(context));
        handlers.put(ApiMessageType.OFFSET_FOR_LEADER_EPOCH, new OffsetForLeaderEpochHandler(context));
        handlers.put(ApiMessageType.UPDATE_FEATURES, new UpdateFeaturesHandler(context));
        handlers.put(ApiMessageType.UNREGISTER_BROKER, new UnregisterBrokerHandler(context));
        handlers.put(ApiMessageType.ELECT_LEADERS, new ElectLeadersHandler(context));
        handlers.put(ApiMessageType.ALTER_PARTITION_REASSIGNMENTS, PartitionReassignmentsHandler.alter(context));
        handlers.put(ApiMessageType.LIST_PARTITION_REASSIGNMENTS, PartitionReassignmentsHandler.list(context));
        // KIP-853 voter changes from an Admin on bootstrap.servers: forwarded to the active controller, as Kafka's broker does.
        handlers.put(ApiMessageType.ADD_RAFT_VOTER, RaftVoterHandlers.forwardAddVoter(context));
        handlers.put(ApiMessageType.REMOVE_RAFT_VOTER, RaftVoterHandlers.forwardRemoveVoter(context));
        handlers.put(ApiMessageType.DESCRIBE_QUORUM, new DescribeQuorumHandler(context));
        new GroupHandlers(context, context.offsetsTopic()).register(handlers);
        new ConsumerGroupHandlers(context).register(handlers);
        new TransactionHandlers(context).register(handlers);
        new AclHandlers(context).register(handlers);
        return handlers;
    }

    /** The incremental fetch sessions of {@code handlers}' Fetch handler, or null if it has none of {@link #create}'s. */
    public static FetchSessionStatistics fetchSessions(Map<ApiMessageType, ApiHandler> handlers) {
        return handlers.get(ApiMessageType.FETCH) instanceof FetchHandler fetch ? fetch.sessions() : null;
    }
}
