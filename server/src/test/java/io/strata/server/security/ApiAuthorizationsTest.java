package io.strata.server.security;

import io.strata.common.config.ConfigException;
import io.strata.metadata.authorizer.AclIndex;
import io.strata.metadata.authorizer.AclOperation;
import io.strata.metadata.authorizer.ResourceType;
import io.strata.protocol.message.ApiMessageType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ApiAuthorizationsTest {
    /**
     * Facts of Kafka's documentation table "Operations and Resources on Protocols" (docs/security,
     * Authorization and ACLs): protocol (API key), operation, resource. Inter-broker and
     * controller RPCs are CLUSTER_ACTION on the cluster.
     */
    private static final String KAFKA_TABLE = """
        PRODUCE 0 WRITE TRANSACTIONAL_ID
        PRODUCE 0 IDEMPOTENT_WRITE CLUSTER
        PRODUCE 0 WRITE TOPIC
        FETCH 1 CLUSTER_ACTION CLUSTER
        FETCH 1 READ TOPIC
        LIST_OFFSETS 2 DESCRIBE TOPIC
        METADATA 3 DESCRIBE TOPIC
        METADATA 3 CREATE CLUSTER
        METADATA 3 CREATE TOPIC
        OFFSET_COMMIT 8 READ GROUP
        OFFSET_COMMIT 8 READ TOPIC
        OFFSET_FETCH 9 DESCRIBE GROUP
        OFFSET_FETCH 9 DESCRIBE TOPIC
        FIND_COORDINATOR 10 DESCRIBE GROUP
        FIND_COORDINATOR 10 DESCRIBE TRANSACTIONAL_ID
        JOIN_GROUP 11 READ GROUP
        HEARTBEAT 12 READ GROUP
        LEAVE_GROUP 13 READ GROUP
        SYNC_GROUP 14 READ GROUP
        DESCRIBE_GROUPS 15 DESCRIBE GROUP
        LIST_GROUPS 16 DESCRIBE CLUSTER
        LIST_GROUPS 16 DESCRIBE GROUP
        CREATE_TOPICS 19 CREATE CLUSTER
        CREATE_TOPICS 19 CREATE TOPIC
        DELETE_TOPICS 20 DELETE TOPIC
        DELETE_RECORDS 21 DELETE TOPIC
        INIT_PRODUCER_ID 22 WRITE TRANSACTIONAL_ID
        INIT_PRODUCER_ID 22 IDEMPOTENT_WRITE CLUSTER
        OFFSET_FOR_LEADER_EPOCH 23 CLUSTER_ACTION CLUSTER
        OFFSET_FOR_LEADER_EPOCH 23 DESCRIBE TOPIC
        ADD_PARTITIONS_TO_TXN 24 WRITE TRANSACTIONAL_ID
        ADD_PARTITIONS_TO_TXN 24 WRITE TOPIC
        ADD_OFFSETS_TO_TXN 25 WRITE TRANSACTIONAL_ID
        ADD_OFFSETS_TO_TXN 25 READ GROUP
        END_TXN 26 WRITE TRANSACTIONAL_ID
        WRITE_TXN_MARKERS 27 CLUSTER_ACTION CLUSTER
        TXN_OFFSET_COMMIT 28 WRITE TRANSACTIONAL_ID
        TXN_OFFSET_COMMIT 28 READ GROUP
        TXN_OFFSET_COMMIT 28 READ TOPIC
        DESCRIBE_ACLS 29 DESCRIBE CLUSTER
        CREATE_ACLS 30 ALTER CLUSTER
        DELETE_ACLS 31 ALTER CLUSTER
        DESCRIBE_CONFIGS 32 DESCRIBE_CONFIGS CLUSTER
        DESCRIBE_CONFIGS 32 DESCRIBE_CONFIGS TOPIC
        ALTER_CONFIGS 33 ALTER_CONFIGS CLUSTER
        ALTER_CONFIGS 33 ALTER_CONFIGS TOPIC
        ALTER_REPLICA_LOG_DIRS 34 ALTER CLUSTER
        DESCRIBE_LOG_DIRS 35 DESCRIBE CLUSTER
        CREATE_PARTITIONS 37 ALTER TOPIC
        DELETE_GROUPS 42 DELETE GROUP
        ELECT_LEADERS 43 ALTER CLUSTER
        INCREMENTAL_ALTER_CONFIGS 44 ALTER_CONFIGS CLUSTER
        INCREMENTAL_ALTER_CONFIGS 44 ALTER_CONFIGS TOPIC
        ALTER_PARTITION_REASSIGNMENTS 45 ALTER CLUSTER
        LIST_PARTITION_REASSIGNMENTS 46 DESCRIBE CLUSTER
        OFFSET_DELETE 47 DELETE GROUP
        OFFSET_DELETE 47 READ TOPIC
        DESCRIBE_PRODUCERS 61 READ TOPIC
        DESCRIBE_TRANSACTIONS 65 DESCRIBE TRANSACTIONAL_ID
        LIST_TRANSACTIONS 66 DESCRIBE TRANSACTIONAL_ID
        UPDATE_FEATURES 57 ALTER CLUSTER
        DESCRIBE_QUORUM 55 DESCRIBE CLUSTER
        CONSUMER_GROUP_HEARTBEAT 68 READ GROUP
        CONSUMER_GROUP_DESCRIBE 69 DESCRIBE GROUP
        DESCRIBE_TOPIC_PARTITIONS 75 DESCRIBE TOPIC
        BROKER_REGISTRATION 62 CLUSTER_ACTION CLUSTER
        BROKER_HEARTBEAT 63 CLUSTER_ACTION CLUSTER
        ALTER_PARTITION 56 CLUSTER_ACTION CLUSTER
        ALLOCATE_PRODUCER_IDS 67 CLUSTER_ACTION CLUSTER
        VOTE 52 CLUSTER_ACTION CLUSTER
        BEGIN_QUORUM_EPOCH 53 CLUSTER_ACTION CLUSTER
        END_QUORUM_EPOCH 54 CLUSTER_ACTION CLUSTER
        FETCH_SNAPSHOT 59 CLUSTER_ACTION CLUSTER
        ASSIGN_REPLICAS_TO_DIRS 73 CLUSTER_ACTION CLUSTER
        UNREGISTER_BROKER 64 ALTER CLUSTER
        """;

    @Test
    void tableHoldsEveryCheckOfKafkasDocumentationTable() {
        List<String> missing = new ArrayList<>();
        for (String line : KAFKA_TABLE.strip().split("\n")) {
            String[] fields = line.trim().split(" ");
            ApiMessageType api = ApiMessageType.valueOf(fields[0]);
            assertThat(api.apiKey).as(line).isEqualTo(Short.parseShort(fields[1]));
            ApiAuthorizations.Check check = new ApiAuthorizations.Check(ResourceType.valueOf(fields[3]), AclOperation.valueOf(fields[2]));
            List<ApiAuthorizations.Check> checks = ApiAuthorizations.checks(api);
            if (checks == null || !checks.contains(check)) {
                missing.add(line.trim());
            }
        }
        assertThat(missing).isEmpty();
    }

    @Test
    void everyAdvertisedApiHasAnEntryAndApiVersionsNeedsNothing() {
        Map<String, String> absent = new TreeMap<>();
        for (ApiMessageType api : io.strata.server.StrataServer.apiVersions().ranges().keySet()) {
            if (ApiAuthorizations.checks(api) == null) {
                absent.put(api.apiName, "no entry");
            }
        }
        for (ApiMessageType api : io.strata.server.api.ControllerApis.apiVersions().ranges().keySet()) {
            if (ApiAuthorizations.checks(api) == null) {
                absent.put(api.apiName, "no entry");
            }
        }
        assertThat(absent).isEmpty();
        assertThat(ApiAuthorizations.checks(ApiMessageType.API_VERSIONS)).isEmpty();
    }

    @Test
    void aCheckOutsideTheTableIsABug() {
        assertThatThrownBy(() -> ApiAuthorizations.requireListed(ApiMessageType.FETCH, ResourceType.TOPIC, AclOperation.WRITE))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("TOPIC WRITE").hasMessageContaining("Fetch");
    }

    @Test
    void authorizerClassNameSelectsTheStandardAuthorizerAndRefusesTheLegacyOne() {
        assertThat(Authorization.of("", "", false, () -> AclIndex.EMPTY).enabled()).isFalse();
        assertThat(Authorization.of(null, "", false, () -> AclIndex.EMPTY)).isSameAs(Authorization.NONE);
        assertThat(Authorization.of("org.apache.kafka.metadata.authorizer.StandardAuthorizer", "User:admin", false, () -> AclIndex.EMPTY)
            .enabled()).isTrue();
        assertThatThrownBy(() -> Authorization.of("kafka.security.authorizer.AclAuthorizer", "", false, () -> AclIndex.EMPTY))
            .isInstanceOf(ConfigException.class).hasMessageContaining("org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        assertThatThrownBy(() -> Authorization.of("com.example.Mine", "", false, () -> AclIndex.EMPTY)).isInstanceOf(ConfigException.class);
    }

    @Test
    void serverConfigRefusesTheLegacyAuthorizerAtStartUp() {
        assertThatThrownBy(() -> io.strata.server.config.ServerConfig.fromMap(Map.of("authorizer.class.name", "kafka.security.authorizer.AclAuthorizer")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("use org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        assertThat(io.strata.server.config.ServerConfig.fromMap(Map.of("authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users", "User:ANONYMOUS")).getString("super.users"))
            .isEqualTo("User:ANONYMOUS");
    }
}
