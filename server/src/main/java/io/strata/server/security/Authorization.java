package io.strata.server.security;

import io.strata.common.config.ConfigException;
import io.strata.metadata.authorizer.AclIndex;
import io.strata.metadata.authorizer.AclOperation;
import io.strata.metadata.authorizer.ResourceType;
import io.strata.metadata.authorizer.StandardAuthorizer;
import io.strata.server.network.Request;

import java.util.function.Supplier;

/**
 * The broker's authorizer as configured by {@code authorizer.class.name}: empty (the default)
 * authorizes everything, as Kafka without an authorizer; Kafka's StandardAuthorizer class name
 * selects {@link StandardAuthorizer} over the ACLs of the current metadata image, with
 * {@code super.users} and {@code allow.everyone.if.no.acl.found}. Which API checks what is
 * {@link ApiAuthorizations}' table. Thread-safe.
 */
public final class Authorization {
    public static final String AUTHORIZER_CLASS_NAME = "authorizer.class.name";
    public static final String SUPER_USERS = "super.users";
    public static final String ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found";

    /** Authorizes everything: no authorizer configured. */
    public static final Authorization NONE = new Authorization(null);

    private final StandardAuthorizer authorizer;

    private Authorization(StandardAuthorizer authorizer) {
        this.authorizer = authorizer;
    }

    /**
     * @param className {@code authorizer.class.name} (null or blank: none)
     * @throws ConfigException for the ZooKeeper-era AclAuthorizer (saying to use StandardAuthorizer) or any other class
     */
    public static Authorization of(String className, String superUsers, boolean allowEveryoneIfNoAclFound, Supplier<AclIndex> acls) {
        String name = className == null ? "" : className.trim();
        if (name.isEmpty()) {
            return NONE;
        }
        if (name.equals(StandardAuthorizer.LEGACY_CLASS_NAME)) {
            throw new ConfigException(AUTHORIZER_CLASS_NAME, name, "the ZooKeeper-based AclAuthorizer does not exist in KRaft mode; use "
                + StandardAuthorizer.CLASS_NAME);
        }
        if (!name.equals(StandardAuthorizer.CLASS_NAME)) {
            throw new ConfigException(AUTHORIZER_CLASS_NAME, name, "the only authorizer is " + StandardAuthorizer.CLASS_NAME);
        }
        return new Authorization(new StandardAuthorizer(acls, StandardAuthorizer.parseSuperUsers(superUsers), allowEveryoneIfNoAclFound));
    }

    /**
     * Whether the dispatcher may hand {@code request} to its handler: always without an authorizer,
     * for an API whose handler performs its own checks ({@link ApiAuthorizations#ENFORCED}), and
     * for a super user; otherwise not.
     */
    public boolean admits(Request request) {
        return authorizer == null || ApiAuthorizations.ENFORCED.contains(request.header().api()) || authorizer.isSuperUser(request.principal());
    }

    /** Whether an authorizer is configured (CreateAcls, DeleteAcls and DescribeAcls answer SECURITY_DISABLED without one). */
    public boolean enabled() {
        return authorizer != null;
    }

    public boolean authorize(Request request, AclOperation operation, ResourceType type, String name) {
        ApiAuthorizations.requireListed(request.header().api(), type, operation);
        return allowed(request, operation, type, name);
    }

    private boolean allowed(Request request, AclOperation operation, ResourceType type, String name) {
        return authorizer == null || authorizer.authorize(request.principal(), request.clientHost(), operation, type, name);
    }

    /** {@link #authorize} on the CLUSTER resource ({@code kafka-cluster}). */
    public boolean authorizeCluster(Request request, AclOperation operation) {
        return authorize(request, operation, ResourceType.CLUSTER, io.strata.metadata.authorizer.AclControl.CLUSTER_NAME);
    }

    /**
     * Whether the principal may perform {@code operation} on at least one resource of {@code type}
     * (Kafka's authorizeByResourceType, which an idempotent producer without WRITE on the cluster
     * needs for some topic): a super user, an ALLOW that matches and no DENY of the same pattern
     * scope covering every resource ({@code *}), or no ACL of the type with
     * allow.everyone.if.no.acl.found.
     */
    public boolean authorizeAny(Request request, AclOperation operation, ResourceType type) {
        ApiAuthorizations.requireListed(request.header().api(), type, operation);
        return authorizer == null || authorizer.authorizeAny(request.principal(), request.clientHost(), operation, type);
    }

    /** The operations Metadata reports per topic (Kafka's supported operations of TOPIC). */
    private static final AclOperation[] TOPIC_OPERATIONS = {AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
        AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS};
    private static final AclOperation[] CLUSTER_OPERATIONS = {AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE,
        AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
        AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS};
    private static final AclOperation[] GROUP_OPERATIONS = {AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE};

    /** The authorized-operations bits of a topic (every one of them without an authorizer). */
    public int topicOperations(Request request, String topic) {
        return authorizedOperations(request, ResourceType.TOPIC, topic, TOPIC_OPERATIONS);
    }

    /** The authorized-operations bits of the cluster: 0 without DESCRIBE on it, as Kafka reports. */
    public int clusterOperations(Request request) {
        if (!allowed(request, AclOperation.DESCRIBE, ResourceType.CLUSTER, io.strata.metadata.authorizer.AclControl.CLUSTER_NAME)) {
            return 0;
        }
        return authorizedOperations(request, ResourceType.CLUSTER, io.strata.metadata.authorizer.AclControl.CLUSTER_NAME, CLUSTER_OPERATIONS);
    }

    /** The authorized-operations bits of a group. */
    public int groupOperations(Request request, String group) {
        return authorizedOperations(request, ResourceType.GROUP, group, GROUP_OPERATIONS);
    }

    /** The bit set (bit = operation code) of {@code operations} the principal may perform on the resource. */
    public int authorizedOperations(Request request, ResourceType type, String name, AclOperation... operations) {
        int bits = 0;
        for (AclOperation operation : operations) {
            if (allowed(request, operation, type, name)) {
                bits |= 1 << operation.code;
            }
        }
        return bits;
    }
}
