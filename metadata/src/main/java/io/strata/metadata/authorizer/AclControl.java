package io.strata.metadata.authorizer;

import io.strata.metadata.record.RemoveAccessControlEntryRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.CreateAclsRequestData;
import io.strata.protocol.message.CreateAclsResponseData;
import io.strata.protocol.message.DeleteAclsRequestData;
import io.strata.protocol.message.DeleteAclsResponseData;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The controller's side of CreateAcls and DeleteAcls (Kafka's AclControlManager): validates,
 * and turns each request into the records that carry it out, answered per creation / filter.
 *
 * <p>Creation: an ACL whose resource type, pattern type, operation or permission is a filter
 * value (ANY, MATCH) or unknown, whose resource name is empty, whose principal has no colon, or
 * a CLUSTER ACL not named {@code kafka-cluster}, is INVALID_REQUEST with Kafka's message; an ACL
 * that already exists (or is repeated in the request) succeeds and writes nothing. Deletion: a
 * filter with an unknown field is INVALID_REQUEST; otherwise every ACL it matches is removed
 * (once, even if several filters match it) and listed under the filter. Stateless.
 */
public final class AclControl {
    /** The only name of the CLUSTER resource. */
    public static final String CLUSTER_NAME = "kafka-cluster";

    private AclControl() {
    }

    /** Records to write and the answer to give once they are committed. */
    public record Outcome<T>(List<ApiMessage> records, T response) {
    }

    public static Outcome<CreateAclsResponseData> createAcls(AclIndex current, CreateAclsRequestData request, Supplier<UUID> ids) {
        Set<StandardAcl> existing = new HashSet<>(current.acls().values());
        List<ApiMessage> records = new ArrayList<>();
        CreateAclsResponseData response = new CreateAclsResponseData();
        for (CreateAclsRequestData.AclCreation creation : request.creations()) {
            StandardAcl acl = new StandardAcl(ResourceType.fromCode(creation.resourceType()), creation.resourceName(),
                PatternType.fromCode(creation.resourcePatternType()), creation.principal(), creation.host(),
                AclOperation.fromCode(creation.operation()), AclPermissionType.fromCode(creation.permissionType()));
            String invalid = validate(acl);
            if (invalid != null) {
                response.results().add(new CreateAclsResponseData.AclCreationResult().setErrorCode(ErrorCode.INVALID_REQUEST.code())
                    .setErrorMessage(invalid));
                continue;
            }
            if (existing.add(acl)) {
                records.add(acl.toRecord(ids.get()));
            }
            response.results().add(new CreateAclsResponseData.AclCreationResult().setErrorCode(ErrorCode.NONE.code()).setErrorMessage(null));
        }
        return new Outcome<>(records, response);
    }

    /** Why {@code acl} cannot be created (Kafka's messages), or null if it can. */
    public static String validate(StandardAcl acl) {
        if (acl.resourceType() == ResourceType.UNKNOWN || acl.resourceType() == ResourceType.ANY) {
            return "Invalid resourceType " + acl.resourceType();
        }
        if (!acl.patternType().isSpecific()) {
            return "Invalid patternType " + acl.patternType();
        }
        if (acl.operation() == AclOperation.UNKNOWN || acl.operation() == AclOperation.ANY) {
            return "Invalid operation " + acl.operation();
        }
        if (acl.permission() != AclPermissionType.ALLOW && acl.permission() != AclPermissionType.DENY) {
            return "Invalid permissionType " + acl.permission();
        }
        if (acl.resourceName() == null || acl.resourceName().isEmpty()) {
            return "Resource name should not be empty";
        }
        if (acl.resourceType() == ResourceType.CLUSTER && !acl.resourceName().equals(CLUSTER_NAME)) {
            return "The only valid name for the CLUSTER resource is " + CLUSTER_NAME;
        }
        if (acl.host() == null || acl.host().isEmpty()) {
            return "Invalid host " + acl.host();
        }
        try {
            KafkaPrincipal.parse(acl.principal());
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        return null;
    }

    public static AclFilter filterOf(DeleteAclsRequestData.DeleteAclsFilter filter) {
        return new AclFilter(ResourceType.fromCode(filter.resourceTypeFilter()), filter.resourceNameFilter(),
            PatternType.fromCode(filter.patternTypeFilter()), filter.principalFilter(), filter.hostFilter(),
            AclOperation.fromCode(filter.operation()), AclPermissionType.fromCode(filter.permissionType()));
    }

    public static Outcome<DeleteAclsResponseData> deleteAcls(AclIndex current, DeleteAclsRequestData request) {
        Set<UUID> removed = new HashSet<>();
        List<ApiMessage> records = new ArrayList<>();
        DeleteAclsResponseData response = new DeleteAclsResponseData();
        for (DeleteAclsRequestData.DeleteAclsFilter wire : request.filters()) {
            AclFilter filter = filterOf(wire);
            DeleteAclsResponseData.DeleteAclsFilterResult result = new DeleteAclsResponseData.DeleteAclsFilterResult().setErrorMessage(null);
            response.filterResults().add(result);
            if (filter.hasUnknown()) {
                result.setErrorCode(ErrorCode.INVALID_REQUEST.code()).setErrorMessage("Unknown patternFilter or entryFilter.");
                continue;
            }
            for (Map.Entry<UUID, StandardAcl> entry : current.acls().entrySet()) {
                StandardAcl acl = entry.getValue();
                if (!filter.matches(acl)) {
                    continue;
                }
                if (removed.add(entry.getKey())) {
                    records.add(new RemoveAccessControlEntryRecord().setId(entry.getKey()));
                }
                result.matchingAcls().add(new DeleteAclsResponseData.DeleteAclsMatchingAcl().setErrorMessage(null).setResourceType(acl.resourceType().code)
                    .setResourceName(acl.resourceName()).setPatternType(acl.patternType().code).setPrincipal(acl.principal())
                    .setHost(acl.host()).setOperation(acl.operation().code).setPermissionType(acl.permission().code));
            }
        }
        return new Outcome<>(records, response);
    }
}
