package io.strata.metadata.authorizer;

import io.strata.metadata.record.AccessControlEntryRecord;

import java.util.UUID;

/**
 * One ACL: a resource pattern (type, name, LITERAL or PREFIXED) and an entry (principal as
 * {@code Type:Name}, host or {@code *}, operation, ALLOW or DENY). Never of a filter-only value
 * (ANY, MATCH, UNKNOWN): {@link AclControl#validate} refuses those before one is built from a
 * request. Immutable.
 */
public record StandardAcl(ResourceType resourceType, String resourceName, PatternType patternType, String principal, String host,
                          AclOperation operation, AclPermissionType permission) {
    /** The literal resource name that stands for every resource of its type. */
    public static final String WILDCARD_RESOURCE = "*";
    /** The host that stands for every host. */
    public static final String WILDCARD_HOST = "*";

    public static StandardAcl of(AccessControlEntryRecord record) {
        return new StandardAcl(ResourceType.fromCode(record.resourceType()), record.resourceName(), PatternType.fromCode(record.patternType()),
            record.principal(), record.host(), AclOperation.fromCode(record.operation()), AclPermissionType.fromCode(record.permissionType()));
    }

    public AccessControlEntryRecord toRecord(UUID id) {
        return new AccessControlEntryRecord().setId(id).setResourceType(resourceType.code).setResourceName(resourceName)
            .setPatternType(patternType.code).setPrincipal(principal).setHost(host).setOperation(operation.code).setPermissionType(permission.code);
    }

    /** Whether this ACL's pattern applies to the resource {@code name} of its type. */
    boolean patternMatches(String name) {
        return switch (patternType) {
            case LITERAL -> resourceName.equals(name) || resourceName.equals(WILDCARD_RESOURCE);
            case PREFIXED -> name.startsWith(resourceName);
            default -> false;
        };
    }
}
