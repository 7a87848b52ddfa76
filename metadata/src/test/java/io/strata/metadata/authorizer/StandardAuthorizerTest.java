package io.strata.metadata.authorizer;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class StandardAuthorizerTest {
    private static final KafkaPrincipal ALICE = new KafkaPrincipal("User", "alice");
    private static final KafkaPrincipal BOB = new KafkaPrincipal("User", "bob");
    private static final String HOST = "10.1.2.3";

    private final Map<UUID, StandardAcl> acls = new HashMap<>();
    private long nextId = 1;

    private void add(ResourceType type, String name, PatternType pattern, String principal, String host, AclOperation operation,
                     AclPermissionType permission) {
        acls.put(new UUID(0, nextId++), new StandardAcl(type, name, pattern, principal, host, operation, permission));
    }

    private void allowTopic(String name, PatternType pattern, String principal, AclOperation operation) {
        add(ResourceType.TOPIC, name, pattern, principal, "*", operation, AclPermissionType.ALLOW);
    }

    private StandardAuthorizer authorizer(Set<String> superUsers, boolean allowEveryone) {
        AclIndex index = AclIndex.of(acls);
        return new StandardAuthorizer(() -> index, superUsers, allowEveryone);
    }

    private boolean topic(KafkaPrincipal principal, AclOperation operation, String name) {
        return authorizer(Set.of(), false).authorize(principal, HOST, operation, ResourceType.TOPIC, name);
    }

    @Test
    void noAclDeniesUnlessAllowEveryoneIfNoAclFound() {
        assertThat(authorizer(Set.of(), false).authorize(ALICE, HOST, AclOperation.READ, ResourceType.TOPIC, "t")).isFalse();
        assertThat(authorizer(Set.of(), true).authorize(ALICE, HOST, AclOperation.READ, ResourceType.TOPIC, "t")).isTrue();
    }

    @Test
    void allowEveryoneDoesNotApplyOnceAnyAclNamesTheResource() {
        allowTopic("t", PatternType.LITERAL, "User:bob", AclOperation.READ);
        assertThat(authorizer(Set.of(), true).authorize(ALICE, HOST, AclOperation.READ, ResourceType.TOPIC, "t")).isFalse();
        assertThat(authorizer(Set.of(), true).authorize(ALICE, HOST, AclOperation.READ, ResourceType.TOPIC, "other")).isTrue();
    }

    @Test
    void superUsersAreAllowedEverythingEvenAgainstADeny() {
        add(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", "*", AclOperation.ALL, AclPermissionType.DENY);
        StandardAuthorizer authorizer = authorizer(StandardAuthorizer.parseSuperUsers(" User:admin ; User:alice;;"), false);
        assertThat(authorizer.authorize(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC, "t")).isTrue();
        assertThat(authorizer.authorize(BOB, HOST, AclOperation.WRITE, ResourceType.TOPIC, "t")).isFalse();
        assertThat(StandardAuthorizer.parseSuperUsers("User:a;User:b")).containsExactlyInAnyOrder("User:a", "User:b");
        assertThat(StandardAuthorizer.parseSuperUsers("")).isEmpty();
    }

    @Test
    void denyWinsOverAllow() {
        allowTopic("t", PatternType.LITERAL, "User:alice", AclOperation.READ);
        assertThat(topic(ALICE, AclOperation.READ, "t")).isTrue();
        add(ResourceType.TOPIC, "t", PatternType.PREFIXED, "User:*", "*", AclOperation.READ, AclPermissionType.DENY);
        assertThat(topic(ALICE, AclOperation.READ, "t")).isFalse();
    }

    @Test
    void allowImpliesDescribeButDenyDoesNotImply() {
        for (AclOperation implying : new AclOperation[] {AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}) {
            acls.clear();
            allowTopic("t", PatternType.LITERAL, "User:alice", implying);
            assertThat(topic(ALICE, AclOperation.DESCRIBE, "t")).as(implying + " implies DESCRIBE").isTrue();
            assertThat(topic(ALICE, AclOperation.DESCRIBE_CONFIGS, "t")).as(implying + " does not imply DESCRIBE_CONFIGS").isFalse();
        }
        acls.clear();
        allowTopic("t", PatternType.LITERAL, "User:alice", AclOperation.ALTER_CONFIGS);
        assertThat(topic(ALICE, AclOperation.DESCRIBE_CONFIGS, "t")).isTrue();
        assertThat(topic(ALICE, AclOperation.DESCRIBE, "t")).isFalse();
        acls.clear();
        allowTopic("t", PatternType.LITERAL, "User:alice", AclOperation.DESCRIBE);
        assertThat(topic(ALICE, AclOperation.READ, "t")).as("DESCRIBE does not imply READ").isFalse();
        // A DENY of READ leaves an allowed DESCRIBE alone; a DENY of ALL denies it.
        add(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.DENY);
        assertThat(topic(ALICE, AclOperation.DESCRIBE, "t")).isTrue();
        add(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", "*", AclOperation.ALL, AclPermissionType.DENY);
        assertThat(topic(ALICE, AclOperation.DESCRIBE, "t")).isFalse();
    }

    @Test
    void allAllowsEveryOperation() {
        allowTopic("t", PatternType.LITERAL, "User:alice", AclOperation.ALL);
        for (AclOperation operation : new AclOperation[] {AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
            AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}) {
            assertThat(topic(ALICE, operation, "t")).as(operation.name()).isTrue();
        }
    }

    @Test
    void prefixedAclsMatchEveryNameTheyPrefix() {
        allowTopic("pay", PatternType.PREFIXED, "User:alice", AclOperation.READ);
        allowTopic("a", PatternType.PREFIXED, "User:bob", AclOperation.READ);
        allowTopic("ab", PatternType.PREFIXED, "User:bob", AclOperation.WRITE);
        allowTopic("abx", PatternType.PREFIXED, "User:bob", AclOperation.DELETE);
        allowTopic("ac", PatternType.PREFIXED, "User:bob", AclOperation.ALTER);
        assertThat(topic(ALICE, AclOperation.READ, "payments")).isTrue();
        assertThat(topic(ALICE, AclOperation.READ, "pay")).isTrue();
        assertThat(topic(ALICE, AclOperation.READ, "pa")).isFalse();
        assertThat(topic(ALICE, AclOperation.READ, "xpayments")).isFalse();
        // The walk down the sorted prefixes skips abx (not a prefix of abc) yet still finds ab and a.
        assertThat(topic(BOB, AclOperation.READ, "abc")).isTrue();
        assertThat(topic(BOB, AclOperation.WRITE, "abc")).isTrue();
        assertThat(topic(BOB, AclOperation.DELETE, "abc")).isFalse();
        assertThat(topic(BOB, AclOperation.ALTER, "abc")).isFalse();
        assertThat(topic(BOB, AclOperation.DELETE, "abxyz")).isTrue();
        assertThat(topic(BOB, AclOperation.ALTER, "acme")).isTrue();
    }

    @Test
    void prefixedLookupAgreesWithAScanOverManyNames() {
        java.util.Random random = new java.util.Random(42);
        String[] alphabet = {"a", "b", "ab", "ba", "aa"};
        for (int i = 0; i < 40; i++) {
            String name = alphabet[random.nextInt(alphabet.length)] + alphabet[random.nextInt(alphabet.length)].substring(0, 1 + random.nextInt(1));
            allowTopic(name, PatternType.PREFIXED, "User:alice", AclOperation.READ);
        }
        AclIndex index = AclIndex.of(acls);
        for (int i = 0; i < 500; i++) {
            StringBuilder resource = new StringBuilder();
            for (int length = 1 + random.nextInt(5); length > 0; length--) {
                resource.append(random.nextBoolean() ? 'a' : 'b');
            }
            String name = resource.toString();
            boolean scan = acls.values().stream().anyMatch(acl -> name.startsWith(acl.resourceName()));
            assertThat(index.decide("User:alice", HOST, AclOperation.READ, ResourceType.TOPIC, name) == AclIndex.Decision.ALLOWED)
                .as(name).isEqualTo(scan);
        }
    }

    @Test
    void wildcardResourceAndWildcardPrincipal() {
        allowTopic("*", PatternType.LITERAL, "User:*", AclOperation.READ);
        assertThat(topic(ALICE, AclOperation.READ, "anything")).isTrue();
        assertThat(topic(BOB, AclOperation.READ, "*")).isTrue();
        assertThat(topic(BOB, AclOperation.WRITE, "anything")).isFalse();
        // As in Kafka, the User:* wildcard applies to principals of every type.
        assertThat(authorizer(Set.of(), false).authorize(new KafkaPrincipal("Group", "x"), HOST, AclOperation.READ, ResourceType.TOPIC, "a"))
            .isTrue();
    }

    @Test
    void hostMustBeTheWildcardOrExact() {
        add(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", "10.0.0.1", AclOperation.READ, AclPermissionType.ALLOW);
        assertThat(authorizer(Set.of(), false).authorize(ALICE, "10.0.0.1", AclOperation.READ, ResourceType.TOPIC, "t")).isTrue();
        assertThat(authorizer(Set.of(), false).authorize(ALICE, "10.0.0.2", AclOperation.READ, ResourceType.TOPIC, "t")).isFalse();
    }

    @Test
    void resourceTypesAreSeparate() {
        add(ResourceType.GROUP, "t", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW);
        assertThat(topic(ALICE, AclOperation.READ, "t")).isFalse();
        assertThat(authorizer(Set.of(), false).authorize(ALICE, HOST, AclOperation.READ, ResourceType.GROUP, "t")).isTrue();
    }

    @Test
    void authorizeAnyNeedsAnAllowThatNoDenyCovers() {
        StandardAuthorizer none = authorizer(Set.of(), false);
        assertThat(none.authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
        allowTopic("orders", PatternType.LITERAL, "User:alice", AclOperation.WRITE);
        assertThat(authorizer(Set.of(), false).authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isTrue();
        assertThat(authorizer(Set.of(), false).authorizeAny(BOB, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
        add(ResourceType.TOPIC, "ord", PatternType.PREFIXED, "User:alice", "*", AclOperation.WRITE, AclPermissionType.DENY);
        assertThat(authorizer(Set.of(), false).authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
    }

    @Test
    void principalsParseAsKafkaDoes() {
        assertThat(KafkaPrincipal.parse("User:CN=a,O=b:c")).isEqualTo(new KafkaPrincipal("User", "CN=a,O=b:c"));
        assertThat(KafkaPrincipal.ANONYMOUS.toString()).isEqualTo("User:ANONYMOUS");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> KafkaPrincipal.parse("alice")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("no colon");
    }
}
