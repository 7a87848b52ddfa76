package io.strata.server.security;

import io.strata.metadata.authorizer.AclOperation;
import io.strata.metadata.authorizer.ResourceType;
import io.strata.protocol.message.ApiMessageType;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.strata.metadata.authorizer.AclOperation.ALTER;
import static io.strata.metadata.authorizer.AclOperation.ALTER_CONFIGS;
import static io.strata.metadata.authorizer.AclOperation.CLUSTER_ACTION;
import static io.strata.metadata.authorizer.AclOperation.CREATE;
import static io.strata.metadata.authorizer.AclOperation.DELETE;
import static io.strata.metadata.authorizer.AclOperation.DESCRIBE;
import static io.strata.metadata.authorizer.AclOperation.DESCRIBE_CONFIGS;
import static io.strata.metadata.authorizer.AclOperation.IDEMPOTENT_WRITE;
import static io.strata.metadata.authorizer.AclOperation.READ;
import static io.strata.metadata.authorizer.AclOperation.WRITE;
import static io.strata.metadata.authorizer.ResourceType.CLUSTER;
import static io.strata.metadata.authorizer.ResourceType.GROUP;
import static io.strata.metadata.authorizer.ResourceType.TOPIC;
import static io.strata.metadata.authorizer.ResourceType.TRANSACTIONAL_ID;

/**
 * The one table of what each API is authorized by: the (resource type, operation) pairs Kafka
 * checks for it (Kafka's documentation, "Operations and Resources on Protocols"; which pair
 * applies to which part of a request is the handler's). {@link Authorization#authorize} refuses
 * (IllegalStateException, a bug) a check that this table does not list for the request's API, so
 * the handlers and the table cannot drift apart; ApiAuthorizationsTest compares the table with
 * Kafka's.
 *
 * <p>{@link #ENFORCED}: the APIs whose handlers perform their checks. While an authorizer is
 * configured, a request of any other API (but ApiVersions, which Kafka never authorizes) is
 * served to super users only and otherwise refused by closing its connection: unchecked
 * access is never granted (see docs/acl-plan.md, what is left).
 */
public final class ApiAuthorizations {
    public record Check(ResourceType type, AclOperation operation) {
    }

    private static final Map<ApiMessageType, List<Check>> TABLE = new EnumMap<>(ApiMessageType.class);

    static {
        put(ApiMessageType.PRODUCE, c(TRANSACTIONAL_ID, WRITE), c(CLUSTER, IDEMPOTENT_WRITE), c(TOPIC, WRITE));
        put(ApiMessageType.FETCH, c(CLUSTER, CLUSTER_ACTION), c(TOPIC, READ));
        put(ApiMessageType.LIST_OFFSETS, c(TOPIC, DESCRIBE));
        put(ApiMessageType.METADATA, c(TOPIC, DESCRIBE), c(CLUSTER, CREATE), c(TOPIC, CREATE));
        put(ApiMessageType.OFFSET_COMMIT, c(GROUP, READ), c(TOPIC, READ));
        put(ApiMessageType.OFFSET_FETCH, c(GROUP, DESCRIBE), c(TOPIC, DESCRIBE));
        put(ApiMessageType.FIND_COORDINATOR, c(GROUP, DESCRIBE), c(TRANSACTIONAL_ID, DESCRIBE));
        put(ApiMessageType.JOIN_GROUP, c(GROUP, READ));
        put(ApiMessageType.HEARTBEAT, c(GROUP, READ));
        put(ApiMessageType.LEAVE_GROUP, c(GROUP, READ));
        put(ApiMessageType.SYNC_GROUP, c(GROUP, READ));
        put(ApiMessageType.DESCRIBE_GROUPS, c(GROUP, DESCRIBE));
        put(ApiMessageType.LIST_GROUPS, c(CLUSTER, DESCRIBE), c(GROUP, DESCRIBE));
        put(ApiMessageType.API_VERSIONS);
        put(ApiMessageType.CREATE_TOPICS, c(CLUSTER, CREATE), c(TOPIC, CREATE), c(TOPIC, DESCRIBE_CONFIGS));
        put(ApiMessageType.DELETE_TOPICS, c(TOPIC, DELETE), c(TOPIC, DESCRIBE));
        put(ApiMessageType.DELETE_RECORDS, c(TOPIC, DELETE));
        put(ApiMessageType.INIT_PRODUCER_ID, c(TRANSACTIONAL_ID, WRITE), c(CLUSTER, IDEMPOTENT_WRITE), c(TOPIC, WRITE));
        put(ApiMessageType.OFFSET_FOR_LEADER_EPOCH, c(CLUSTER, CLUSTER_ACTION), c(TOPIC, DESCRIBE));
        put(ApiMessageType.ADD_PARTITIONS_TO_TXN, c(TRANSACTIONAL_ID, WRITE), c(TOPIC, WRITE), c(CLUSTER, CLUSTER_ACTION));
        put(ApiMessageType.ADD_OFFSETS_TO_TXN, c(TRANSACTIONAL_ID, WRITE), c(GROUP, READ));
        put(ApiMessageType.END_TXN, c(TRANSACTIONAL_ID, WRITE));
        put(ApiMessageType.WRITE_TXN_MARKERS, c(CLUSTER, CLUSTER_ACTION));
        put(ApiMessageType.TXN_OFFSET_COMMIT, c(GROUP, READ), c(TRANSACTIONAL_ID, WRITE), c(TOPIC, READ));
        put(ApiMessageType.DESCRIBE_ACLS, c(CLUSTER, DESCRIBE));
        put(ApiMessageType.CREATE_ACLS, c(CLUSTER, ALTER));
        put(ApiMessageType.DELETE_ACLS, c(CLUSTER, ALTER));
        put(ApiMessageType.DESCRIBE_CONFIGS, c(CLUSTER, DESCRIBE_CONFIGS), c(TOPIC, DESCRIBE_CONFIGS));
        put(ApiMessageType.ALTER_CONFIGS, c(CLUSTER, ALTER_CONFIGS), c(TOPIC, ALTER_CONFIGS));
        put(ApiMessageType.INCREMENTAL_ALTER_CONFIGS, c(CLUSTER, ALTER_CONFIGS), c(TOPIC, ALTER_CONFIGS));
        put(ApiMessageType.ALTER_REPLICA_LOG_DIRS, c(CLUSTER, ALTER));
        put(ApiMessageType.DESCRIBE_LOG_DIRS, c(CLUSTER, DESCRIBE));
        put(ApiMessageType.CREATE_PARTITIONS, c(TOPIC, ALTER));
        put(ApiMessageType.DELETE_GROUPS, c(GROUP, DELETE));
        put(ApiMessageType.ELECT_LEADERS, c(CLUSTER, ALTER));
        put(ApiMessageType.ALTER_PARTITION_REASSIGNMENTS, c(CLUSTER, ALTER));
        put(ApiMessageType.LIST_PARTITION_REASSIGNMENTS, c(CLUSTER, DESCRIBE));
        put(ApiMessageType.OFFSET_DELETE, c(GROUP, DELETE), c(TOPIC, READ));
        // No check refuses DescribeCluster; CLUSTER DESCRIBE gates only the authorized operations it reports.
        put(ApiMessageType.DESCRIBE_CLUSTER, c(CLUSTER, DESCRIBE));
        put(ApiMessageType.DESCRIBE_PRODUCERS, c(TOPIC, READ));
        put(ApiMessageType.DESCRIBE_TRANSACTIONS, c(TRANSACTIONAL_ID, DESCRIBE));
        put(ApiMessageType.LIST_TRANSACTIONS, c(TRANSACTIONAL_ID, DESCRIBE));
        put(ApiMessageType.UPDATE_FEATURES, c(CLUSTER, ALTER));
        put(ApiMessageType.DESCRIBE_TOPIC_PARTITIONS, c(TOPIC, DESCRIBE));
        put(ApiMessageType.CONSUMER_GROUP_HEARTBEAT, c(GROUP, READ), c(TOPIC, DESCRIBE));
        put(ApiMessageType.CONSUMER_GROUP_DESCRIBE, c(GROUP, DESCRIBE), c(TOPIC, DESCRIBE));
        put(ApiMessageType.DESCRIBE_QUORUM, c(CLUSTER, DESCRIBE));
        put(ApiMessageType.ADD_RAFT_VOTER, c(CLUSTER, ALTER));
        put(ApiMessageType.REMOVE_RAFT_VOTER, c(CLUSTER, ALTER));
        put(ApiMessageType.UNREGISTER_BROKER, c(CLUSTER, ALTER));
        // Inter-broker and controller RPCs.
        for (ApiMessageType api : List.of(ApiMessageType.BROKER_REGISTRATION, ApiMessageType.BROKER_HEARTBEAT, ApiMessageType.ALTER_PARTITION,
            ApiMessageType.ALLOCATE_PRODUCER_IDS, ApiMessageType.VOTE, ApiMessageType.BEGIN_QUORUM_EPOCH, ApiMessageType.END_QUORUM_EPOCH,
            ApiMessageType.FETCH_SNAPSHOT, ApiMessageType.UPDATE_RAFT_VOTER, ApiMessageType.ASSIGN_REPLICAS_TO_DIRS)) {
            put(api, c(CLUSTER, CLUSTER_ACTION));
        }
    }

    /** The APIs whose handlers perform the checks of {@link #TABLE} (the others are super users only while authorizing). */
    public static final Set<ApiMessageType> ENFORCED = Set.of(ApiMessageType.API_VERSIONS, ApiMessageType.PRODUCE, ApiMessageType.FETCH,
        ApiMessageType.LIST_OFFSETS, ApiMessageType.METADATA, ApiMessageType.CREATE_TOPICS, ApiMessageType.DELETE_TOPICS,
        ApiMessageType.INIT_PRODUCER_ID, ApiMessageType.CREATE_ACLS, ApiMessageType.DELETE_ACLS, ApiMessageType.DESCRIBE_ACLS,
        ApiMessageType.DESCRIBE_CLUSTER);

    private ApiAuthorizations() {
    }

    private static Check c(ResourceType type, AclOperation operation) {
        return new Check(type, operation);
    }

    private static void put(ApiMessageType api, Check... checks) {
        TABLE.put(api, List.of(checks));
    }

    /** The checks of {@code api}; empty for an API Kafka never authorizes; null for an API this table does not know. */
    public static List<Check> checks(ApiMessageType api) {
        return TABLE.get(api);
    }

    /** Every API of the table (unmodifiable). */
    public static Map<ApiMessageType, List<Check>> table() {
        return java.util.Collections.unmodifiableMap(TABLE);
    }

    /** @throws IllegalStateException if the table does not list {@code type}/{@code operation} for {@code api} (a handler bug) */
    static void requireListed(ApiMessageType api, ResourceType type, AclOperation operation) {
        List<Check> checks = TABLE.get(api);
        if (checks == null || !checks.contains(new Check(type, operation))) {
            throw new IllegalStateException("authorization check " + type + " " + operation + " is not in the table for " + api.apiName);
        }
    }
}
