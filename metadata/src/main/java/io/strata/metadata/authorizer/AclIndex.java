package io.strata.metadata.authorizer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Every ACL of the cluster, indexed by resource for {@link #decide}, as Kafka's
 * StandardAuthorizerData: per resource type, LITERAL ACLs by exact name (the wildcard {@code *}
 * is one of those names) and PREFIXED ACLs in a map sorted by name.
 *
 * <p>Finding the prefixed ACLs of a resource name walks the sorted map down from the name
 * itself: a key that is a prefix of the name matches and the walk goes on with the next lower
 * key; a key that is not shares only its first {@code c} characters with the name and sorts
 * below it, so every prefix of the name longer than {@code c} sorts above that key (already
 * walked past) and the walk jumps to the floor of the name's first {@code c} characters. Example: keys {@code a, ab, abx, ac}, name {@code abc}: floor(abc) = abx,
 * not a prefix, common part "ab"; floor(ab) = ab, a prefix; lower(ab) = a, a prefix; lower(a) =
 * none. The walk visits at most one non-matching key per matching one, plus one.
 *
 * <p>Immutable; built whole from the image's ACLs whenever a batch changes them (ACL changes are
 * rare next to the reads, which never lock).
 */
public final class AclIndex {
    public static final AclIndex EMPTY = new AclIndex(Map.of());

    /** The answer of the ACLs alone; {@link StandardAuthorizer} resolves NO_ACL with allow.everyone.if.no.acl.found. */
    public enum Decision { ALLOWED, DENIED, NO_ACL }

    private final Map<UUID, StandardAcl> byId;
    private final Map<ResourceType, Map<String, List<StandardAcl>>> literal = new EnumMap<>(ResourceType.class);
    private final Map<ResourceType, TreeMap<String, List<StandardAcl>>> prefixed = new EnumMap<>(ResourceType.class);

    private AclIndex(Map<UUID, StandardAcl> byId) {
        this.byId = byId;
        for (StandardAcl acl : byId.values()) {
            Map<String, List<StandardAcl>> names = acl.patternType() == PatternType.PREFIXED
                ? prefixed.computeIfAbsent(acl.resourceType(), type -> new TreeMap<>())
                : literal.computeIfAbsent(acl.resourceType(), type -> new HashMap<>());
            names.computeIfAbsent(acl.resourceName(), name -> new ArrayList<>()).add(acl);
        }
    }

    /** The index of {@code acls} (copied). */
    public static AclIndex of(Map<UUID, StandardAcl> acls) {
        return acls.isEmpty() ? EMPTY : new AclIndex(Collections.unmodifiableMap(new HashMap<>(acls)));
    }

    /** Every ACL by id (unmodifiable). */
    public Map<UUID, StandardAcl> acls() {
        return byId;
    }

    /**
     * Whether the ACLs let {@code principal} on {@code host} perform {@code operation} on the
     * resource: DENIED if any applying DENY matches (deny wins), else ALLOWED if any applying
     * ALLOW matches, else NO_ACL if no ACL at all applies to the resource, else DENIED. An ACL
     * matches when its principal is the principal or {@code User:*}, its host is the host or
     * {@code *}, and its operation covers the one asked ({@link AclOperation#matchedBy}).
     */
    public Decision decide(String principal, String host, AclOperation operation, ResourceType type, String name) {
        boolean anyForResource = false;
        boolean allowed = false;
        List<List<StandardAcl>> candidates = applying(type, name);
        for (List<StandardAcl> acls : candidates) {
            for (StandardAcl acl : acls) {
                anyForResource = true;
                if (!principalMatches(acl, principal) || !hostMatches(acl, host) || !operation.matchedBy(acl.operation(), acl.permission())) {
                    continue;
                }
                if (acl.permission() == AclPermissionType.DENY) {
                    return Decision.DENIED;
                }
                allowed = true;
            }
        }
        return allowed ? Decision.ALLOWED : anyForResource ? Decision.DENIED : Decision.NO_ACL;
    }

    /**
     * Kafka's authorizeByResourceType over the ACLs alone: ALLOWED if some ALLOW of the principal
     * and host for {@code operation} on a resource of {@code type} names a resource that no
     * matching DENY covers (a DENY of the literal {@code *} covers all; a DENY of a prefix covers
     * every name it prefixes; a literal DENY covers its own name); NO_ACL if the type has no ACL
     * at all; else DENIED.
     */
    public Decision decideAny(String principal, String host, AclOperation operation, ResourceType type) {
        List<StandardAcl> allows = new ArrayList<>();
        List<StandardAcl> denies = new ArrayList<>();
        boolean anyOfType = false;
        for (StandardAcl acl : byId.values()) {
            if (acl.resourceType() != type) {
                continue;
            }
            anyOfType = true;
            if (principalMatches(acl, principal) && hostMatches(acl, host) && operation.matchedBy(acl.operation(), acl.permission())) {
                (acl.permission() == AclPermissionType.DENY ? denies : allows).add(acl);
            }
        }
        for (StandardAcl allow : allows) {
            boolean covered = false;
            for (StandardAcl deny : denies) {
                covered |= deny.patternType() == PatternType.LITERAL && deny.resourceName().equals(StandardAcl.WILDCARD_RESOURCE)
                    || deny.patternType() == PatternType.PREFIXED && allow.resourceName().startsWith(deny.resourceName())
                    || deny.patternType() == PatternType.LITERAL && allow.patternType() == PatternType.LITERAL
                    && deny.resourceName().equals(allow.resourceName());
            }
            if (!covered) {
                return Decision.ALLOWED;
            }
        }
        return anyOfType ? Decision.DENIED : Decision.NO_ACL;
    }

    /** The lists of ACLs whose pattern applies to the resource: its literal name, the literal wildcard, its prefixes. */
    private List<List<StandardAcl>> applying(ResourceType type, String name) {
        List<List<StandardAcl>> found = new ArrayList<>();
        Map<String, List<StandardAcl>> literals = literal.get(type);
        if (literals != null) {
            addIfPresent(found, literals.get(name));
            if (!name.equals(StandardAcl.WILDCARD_RESOURCE)) {
                addIfPresent(found, literals.get(StandardAcl.WILDCARD_RESOURCE));
            }
        }
        TreeMap<String, List<StandardAcl>> prefixes = prefixed.get(type);
        if (prefixes != null) {
            String key = prefixes.floorKey(name);
            while (key != null) {
                if (name.startsWith(key)) {
                    found.add(prefixes.get(key));
                    key = prefixes.lowerKey(key);
                } else {
                    // name[0, c) is below this key (it is a proper prefix of it), so the walk strictly descends.
                    key = prefixes.floorKey(name.substring(0, commonPrefixLength(key, name)));
                }
            }
        }
        return found;
    }

    private static void addIfPresent(List<List<StandardAcl>> found, List<StandardAcl> acls) {
        if (acls != null) {
            found.add(acls);
        }
    }

    private static int commonPrefixLength(String a, String b) {
        int length = Math.min(a.length(), b.length());
        int i = 0;
        while (i < length && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        return i;
    }

    private static boolean principalMatches(StandardAcl acl, String principal) {
        return acl.principal().equals(principal) || acl.principal().equals(KafkaPrincipal.WILDCARD);
    }

    private static boolean hostMatches(StandardAcl acl, String host) {
        return acl.host().equals(StandardAcl.WILDCARD_HOST) || acl.host().equals(host);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof AclIndex that && byId.equals(that.byId);
    }

    @Override
    public int hashCode() {
        return byId.hashCode();
    }

    @Override
    public String toString() {
        return "AclIndex" + byId.values();
    }
}
