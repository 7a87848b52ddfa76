package io.strata.metadata.authorizer;

/**
 * A filter over ACLs, as DescribeAcls and DeleteAcls carry one (Kafka's {@code AclBindingFilter}).
 * Null strings match anything; ANY matches every value of its field. The pattern type selects:
 * ANY, patterns of any type with exactly the filter's name; MATCH, the patterns that apply to the
 * named resource (the literal name, the literal {@code *}, and every prefix of the name);
 * LITERAL or PREFIXED, patterns of that type with exactly that name.
 */
public record AclFilter(ResourceType resourceType, String resourceName, PatternType patternType, String principal, String host,
                        AclOperation operation, AclPermissionType permission) {
    /** Matches every ACL. */
    public static final AclFilter ANY = new AclFilter(ResourceType.ANY, null, PatternType.ANY, null, null, AclOperation.ANY, AclPermissionType.ANY);

    /** Whether a field holds UNKNOWN (a code this version does not know): such a filter is INVALID_REQUEST. */
    public boolean hasUnknown() {
        return resourceType == ResourceType.UNKNOWN || patternType == PatternType.UNKNOWN || operation == AclOperation.UNKNOWN
            || permission == AclPermissionType.UNKNOWN;
    }

    public boolean matches(StandardAcl acl) {
        return patternMatches(acl) && (principal == null || principal.equals(acl.principal())) && (host == null || host.equals(acl.host()))
            && (operation == AclOperation.ANY || operation == acl.operation())
            && (permission == AclPermissionType.ANY || permission == acl.permission());
    }

    private boolean patternMatches(StandardAcl acl) {
        if (resourceType != ResourceType.ANY && resourceType != acl.resourceType()) {
            return false;
        }
        if (patternType != PatternType.ANY && patternType != PatternType.MATCH && patternType != acl.patternType()) {
            return false;
        }
        if (resourceName == null) {
            return true;
        }
        if (patternType == PatternType.ANY || patternType == acl.patternType()) {
            return resourceName.equals(acl.resourceName());
        }
        return acl.patternMatches(resourceName);
    }
}
