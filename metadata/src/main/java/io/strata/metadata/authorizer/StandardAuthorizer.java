package io.strata.metadata.authorizer;

import java.util.Arrays;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Kafka's StandardAuthorizer decisions over the ACLs of the current metadata image: a principal
 * in {@code super.users} is allowed everything; otherwise the ACLs decide
 * ({@link AclIndex#decide}: deny wins, then allow); a resource no ACL applies to is allowed only
 * when {@code allow.everyone.if.no.acl.found} is true (default false).
 *
 * <p>Thread-safe: reads the published index through {@code acls} on every call.
 */
public final class StandardAuthorizer {
    /** The class name Kafka's {@code authorizer.class.name} uses for this authorizer. */
    public static final String CLASS_NAME = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    /** ZooKeeper-era authorizer, gone from Kafka 4. */
    public static final String LEGACY_CLASS_NAME = "kafka.security.authorizer.AclAuthorizer";

    private final Supplier<AclIndex> acls;
    private final Set<String> superUsers;
    private final boolean allowEveryoneIfNoAclFound;

    public StandardAuthorizer(Supplier<AclIndex> acls, Set<String> superUsers, boolean allowEveryoneIfNoAclFound) {
        this.acls = acls;
        this.superUsers = Set.copyOf(superUsers);
        this.allowEveryoneIfNoAclFound = allowEveryoneIfNoAclFound;
    }

    /** {@code super.users} as Kafka parses it: semicolon-separated principals, blanks trimmed, empty entries dropped. */
    public static Set<String> parseSuperUsers(String value) {
        if (value == null || value.isBlank()) {
            return Set.of();
        }
        return Arrays.stream(value.split(";")).map(String::trim).filter(entry -> !entry.isEmpty()).collect(Collectors.toUnmodifiableSet());
    }

    public boolean isSuperUser(KafkaPrincipal principal) {
        return superUsers.contains(principal.toString());
    }

    public boolean authorize(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type, String name) {
        if (isSuperUser(principal)) {
            return true;
        }
        return switch (acls.get().decide(principal.toString(), host, operation, type, name)) {
            case ALLOWED -> true;
            case DENIED -> false;
            case NO_ACL -> allowEveryoneIfNoAclFound;
        };
    }

    /** Whether the principal may perform {@code operation} on some resource of {@code type} ({@link AclIndex#decideAny}). */
    public boolean authorizeAny(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type) {
        if (isSuperUser(principal)) {
            return true;
        }
        return switch (acls.get().decideAny(principal.toString(), host, operation, type)) {
            case ALLOWED -> true;
            case DENIED -> false;
            case NO_ACL -> allowEveryoneIfNoAclFound;
        };
    }
}
