package io.strata.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.AclCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The ACL authorizer against kafka-clients' Admin, producer and consumer and Kafka's
 * kafka-acls tool: ACL round trips, SECURITY_DISABLED without an authorizer, refusals with
 * Kafka's exceptions, ACLs taking effect without a restart, and ACLs surviving a restart.
 */
class AclAuthorizerTest {
    private static final String AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    private static final AclBindingFilter ALL = AclBindingFilter.ANY;

    @TempDir
    Path dataDir;

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000,
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000));
    }

    private static AclBinding acl(ResourceType type, String name, PatternType pattern, String principal, AclOperation operation,
                                  AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern), new AccessControlEntry(principal, "*", operation, permission));
    }

    @Test
    void aclApisAnswerSecurityDisabledWithoutAnAuthorizer() throws Exception {
        try (StrataTestServer server = new StrataTestServer(dataDir); Admin admin = admin(server.bootstrap())) {
            assertThatThrownBy(() -> admin.describeAcls(ALL).values().get()).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(SecurityDisabledException.class);
            assertThatThrownBy(() -> admin.createAcls(List.of(acl(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:a", AclOperation.READ,
                AclPermissionType.ALLOW))).all().get()).hasCauseInstanceOf(SecurityDisabledException.class);
        }
    }

    @Test
    void aclsRoundTripAndSurviveARestart() throws Exception {
        try (StrataTestServer server = new StrataTestServer(dataDir, Map.of("authorizer.class.name", AUTHORIZER, "super.users", "User:ANONYMOUS"))) {
            List<AclBinding> created = List.of(
                acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
                acl(ResourceType.TOPIC, "pay", PatternType.PREFIXED, "User:*", AclOperation.WRITE, AclPermissionType.DENY),
                acl(ResourceType.GROUP, "*", PatternType.LITERAL, "User:alice", AclOperation.ALL, AclPermissionType.ALLOW),
                acl(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:bob", AclOperation.ALTER, AclPermissionType.ALLOW));
            try (Admin admin = admin(server.bootstrap())) {
                admin.createAcls(created).all().get();
                assertThat(admin.describeAcls(ALL).values().get()).containsExactlyInAnyOrderElementsOf(created);
                // MATCH: the ACLs that apply to topic payments (the prefixed DENY), not orders'.
                Collection<AclBinding> matching = admin.describeAcls(new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, "payments",
                    PatternType.MATCH), AccessControlEntryFilter.ANY)).values().get();
                assertThat(matching).containsExactly(created.get(1));
                assertThatThrownBy(() -> admin.createAcls(List.of(acl(ResourceType.CLUSTER, "other", PatternType.LITERAL, "User:a",
                    AclOperation.ALTER, AclPermissionType.ALLOW))).all().get())
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.InvalidRequestException.class);
            }
            server.restart();
            try (Admin admin = admin(server.bootstrap())) {
                assertThat(admin.describeAcls(ALL).values().get()).containsExactlyInAnyOrderElementsOf(created);
                Collection<AclBinding> deleted = admin.deleteAcls(List.of(new AclBindingFilter(new ResourcePatternFilter(ResourceType.ANY, null,
                    PatternType.ANY), new AccessControlEntryFilter("User:alice", null, AclOperation.ANY, AclPermissionType.ANY)))).all().get();
                assertThat(deleted).containsExactlyInAnyOrder(created.get(0), created.get(2));
                assertThat(admin.describeAcls(ALL).values().get()).containsExactlyInAnyOrder(created.get(1), created.get(3));
            }
            // Kafka's kafka-acls tool.
            KafkaTool.Result added = KafkaTool.run(AclCommand::main, "--bootstrap-server", server.bootstrap(), "--add", "--allow-principal",
                "User:carol", "--operation", "Read", "--topic", "tool-topic");
            assertThat(added.exitCode()).as(added.toString()).isZero();
            KafkaTool.Result listed = KafkaTool.run(AclCommand::main, "--bootstrap-server", server.bootstrap(), "--list", "--topic", "tool-topic");
            assertThat(listed.exitCode()).as(listed.toString()).isZero();
            assertThat(listed.stdout()).contains("principal=User:carol").contains("operation=READ").contains("permissionType=ALLOW");
        }
    }

    @Test
    void refusedUntilAnAclAllowsItWithoutARestart() throws Exception {
        String topic = "guarded";
        // First as a super user: the topic, and the ACLs that let ANONYMOUS manage ACLs once it is no longer one.
        try (StrataTestServer server = new StrataTestServer(dataDir, Map.of("authorizer.class.name", AUTHORIZER, "super.users", "User:ANONYMOUS"));
             Admin admin = admin(server.bootstrap())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.createAcls(List.of(acl(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:ANONYMOUS", AclOperation.ALTER,
                AclPermissionType.ALLOW))).all().get();
        }
        try (StrataTestServer server = new StrataTestServer(dataDir, Map.of("authorizer.class.name", AUTHORIZER, "super.users", "User:admin"));
             Admin admin = admin(server.bootstrap())) {
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("not-allowed", 1, (short) 1))).all().get())
                .hasCauseInstanceOf(TopicAuthorizationException.class);
            assertThatThrownBy(() -> admin.deleteTopics(List.of(topic)).all().get()).hasCauseInstanceOf(TopicAuthorizationException.class);
            // ALTER on the cluster implies DESCRIBE, which DescribeAcls needs.
            assertThat(admin.describeAcls(ALL).values().get()).hasSize(1);

            try (KafkaProducer<String, String> producer = producer(server.bootstrap(), true)) {
                // Metadata hides the topic first: no DESCRIBE.
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, "k", "v")).get()).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
            }
            admin.createAcls(List.of(acl(ResourceType.TOPIC, topic, PatternType.LITERAL, "User:ANONYMOUS", AclOperation.DESCRIBE,
                AclPermissionType.ALLOW))).all().get();
            // Described now, but InitProducerId needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
            try (KafkaProducer<String, String> idempotent = producer(server.bootstrap(), true)) {
                // The producer's own InitProducerId may fail before send (thrown there) or after (the future fails).
                assertThatThrownBy(() -> idempotent.send(new ProducerRecord<>(topic, "k", "v")).get())
                    .hasRootCauseInstanceOf(ClusterAuthorizationException.class);
            }
            try (KafkaProducer<String, String> producer = producer(server.bootstrap(), false)) {
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, "k", "v")).get()).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
            }
            admin.createAcls(List.of(acl(ResourceType.TOPIC, topic, PatternType.LITERAL, "User:ANONYMOUS", AclOperation.WRITE,
                AclPermissionType.ALLOW))).all().get();
            try (KafkaProducer<String, String> producer = producer(server.bootstrap(), true)) {
                producer.send(new ProducerRecord<>(topic, "k", "v")).get();
            }
            TopicPartition partition = new TopicPartition(topic, 0);
            try (KafkaConsumer<String, String> consumer = consumer(server.bootstrap())) {
                consumer.assign(List.of(partition));
                consumer.seekToBeginning(List.of(partition));
                assertThatThrownBy(() -> consumer.poll(Duration.ofSeconds(10))).isInstanceOf(TopicAuthorizationException.class);
            }
            admin.createAcls(List.of(acl(ResourceType.TOPIC, "guar", PatternType.PREFIXED, "User:ANONYMOUS", AclOperation.READ,
                AclPermissionType.ALLOW))).all().get();
            try (KafkaConsumer<String, String> consumer = consumer(server.bootstrap())) {
                consumer.assign(List.of(partition));
                consumer.seekToBeginning(List.of(partition));
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                int received = 0;
                while (received == 0 && System.nanoTime() < deadline) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                    received += records.count();
                }
                assertThat(received).isEqualTo(1);
            }
            // A DENY wins over the ALLOW, again without a restart.
            admin.createAcls(List.of(acl(ResourceType.TOPIC, topic, PatternType.LITERAL, "User:*", AclOperation.WRITE,
                AclPermissionType.DENY))).all().get();
            try (KafkaProducer<String, String> producer = producer(server.bootstrap(), false)) {
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, "k", "v")).get())
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
            }
        }
    }

    private static KafkaProducer<String, String> producer(String bootstrap, boolean idempotent) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent);
        properties.put(ProducerConfig.ACKS_CONFIG, idempotent ? "all" : "1");
        properties.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000);
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer());
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return new KafkaConsumer<>(properties, new StringDeserializer(), new StringDeserializer());
    }
}
