package io.strata.server.api;

import io.strata.metadata.authorizer.AclFilter;
import io.strata.metadata.authorizer.AclOperation;
import io.strata.metadata.authorizer.AclPermissionType;
import io.strata.metadata.authorizer.PatternType;
import io.strata.metadata.authorizer.ResourceType;
import io.strata.metadata.authorizer.StandardAcl;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.CreateAclsRequestData;
import io.strata.protocol.message.CreateAclsResponseData;
import io.strata.protocol.message.DeleteAclsRequestData;
import io.strata.protocol.message.DeleteAclsResponseData;
import io.strata.protocol.message.DescribeAclsRequestData;
import io.strata.protocol.message.DescribeAclsResponseData;
import io.strata.server.network.Request;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CreateAcls (30), DeleteAcls (31) and DescribeAcls (29), as Kafka's broker answers them:
 * SECURITY_DISABLED ("No Authorizer is configured.") without an authorizer; CLUSTER_AUTHORIZATION_FAILED
 * without ALTER (create, delete) or DESCRIBE (describe) on the cluster; otherwise creations and
 * deletions go to the active controller ({@link io.strata.metadata.authorizer.AclControl}, which
 * validates them: INVALID_REQUEST per creation or filter) and DescribeAcls reads this broker's
 * image. A DescribeAcls filter with an unknown code is INVALID_REQUEST. Stateless.
 */
final class AclHandlers {
    static final String NO_AUTHORIZER = "No Authorizer is configured.";

    private final BrokerContext context;

    AclHandlers(BrokerContext context) {
        this.context = context;
    }

    void register(Map<ApiMessageType, ApiHandler> handlers) {
        handlers.put(ApiMessageType.CREATE_ACLS, this::createAcls);
        handlers.put(ApiMessageType.DELETE_ACLS, this::deleteAcls);
        handlers.put(ApiMessageType.DESCRIBE_ACLS, this::describeAcls);
    }

    private ErrorCode refusal(Request request, AclOperation operation) {
        if (!context.authorization().enabled()) {
            return ErrorCode.SECURITY_DISABLED;
        }
        return context.authorization().authorizeCluster(request, operation) ? ErrorCode.NONE : ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
    }

    private static String message(ErrorCode error) {
        return error == ErrorCode.SECURITY_DISABLED ? NO_AUTHORIZER : null;
    }

    private void createAcls(Request request) {
        CreateAclsRequestData body = request.body(CreateAclsRequestData.class);
        ErrorCode refused = refusal(request, AclOperation.ALTER);
        if (refused != ErrorCode.NONE) {
            request.respond(createFailed(body, refused, message(refused)));
            return;
        }
        context.controller().createAcls(body).whenComplete((response, failure) ->
            request.respond(failure == null ? response : createFailed(body, ControllerErrors.of(failure), ControllerErrors.message(failure))));
    }

    private static CreateAclsResponseData createFailed(CreateAclsRequestData body, ErrorCode error, String message) {
        CreateAclsResponseData response = new CreateAclsResponseData();
        for (int i = 0; i < body.creations().size(); i++) {
            response.results().add(new CreateAclsResponseData.AclCreationResult().setErrorCode(error.code()).setErrorMessage(message));
        }
        return response;
    }

    private void deleteAcls(Request request) {
        DeleteAclsRequestData body = request.body(DeleteAclsRequestData.class);
        ErrorCode refused = refusal(request, AclOperation.ALTER);
        if (refused != ErrorCode.NONE) {
            request.respond(deleteFailed(body, refused, message(refused)));
            return;
        }
        context.controller().deleteAcls(body).whenComplete((response, failure) ->
            request.respond(failure == null ? response : deleteFailed(body, ControllerErrors.of(failure), ControllerErrors.message(failure))));
    }

    private static DeleteAclsResponseData deleteFailed(DeleteAclsRequestData body, ErrorCode error, String message) {
        DeleteAclsResponseData response = new DeleteAclsResponseData();
        for (int i = 0; i < body.filters().size(); i++) {
            response.filterResults().add(new DeleteAclsResponseData.DeleteAclsFilterResult().setErrorCode(error.code()).setErrorMessage(message));
        }
        return response;
    }

    private void describeAcls(Request request) {
        DescribeAclsRequestData body = request.body(DescribeAclsRequestData.class);
        ErrorCode refused = refusal(request, AclOperation.DESCRIBE);
        if (refused != ErrorCode.NONE) {
            request.respond(new DescribeAclsResponseData().setErrorCode(refused.code()).setErrorMessage(message(refused)));
            return;
        }
        AclFilter filter = new AclFilter(ResourceType.fromCode(body.resourceTypeFilter()), body.resourceNameFilter(),
            PatternType.fromCode(body.patternTypeFilter()), body.principalFilter(), body.hostFilter(), AclOperation.fromCode(body.operation()),
            AclPermissionType.fromCode(body.permissionType()));
        if (filter.hasUnknown()) {
            request.respond(new DescribeAclsResponseData().setErrorCode(ErrorCode.INVALID_REQUEST.code())
                .setErrorMessage("The filter contains UNKNOWN elements"));
            return;
        }
        request.respond(describe(context.image().acls().acls().values(), filter));
    }

    /** The ACLs {@code filter} matches, grouped by resource pattern, in a stable order (type, pattern type, name). */
    static DescribeAclsResponseData describe(java.util.Collection<StandardAcl> acls, AclFilter filter) {
        Map<String, DescribeAclsResponseData.DescribeAclsResource> resources = new LinkedHashMap<>();
        List<StandardAcl> sorted = acls.stream().filter(filter::matches).sorted(java.util.Comparator
            .comparing((StandardAcl acl) -> acl.resourceType().code).thenComparing(acl -> acl.patternType().code)
            .thenComparing(StandardAcl::resourceName).thenComparing(StandardAcl::principal).thenComparing(StandardAcl::host)
            .thenComparing(acl -> acl.operation().code).thenComparing(acl -> acl.permission().code)).toList();
        for (StandardAcl acl : sorted) {
            String key = acl.resourceType().code + "/" + acl.patternType().code + "/" + acl.resourceName();
            resources.computeIfAbsent(key, k -> new DescribeAclsResponseData.DescribeAclsResource().setResourceType(acl.resourceType().code)
                .setResourceName(acl.resourceName()).setPatternType(acl.patternType().code)).acls()
                .add(new DescribeAclsResponseData.AclDescription().setPrincipal(acl.principal()).setHost(acl.host())
                    .setOperation(acl.operation().code).setPermissionType(acl.permission().code));
        }
        DescribeAclsResponseData response = new DescribeAclsResponseData().setErrorCode(ErrorCode.NONE.code()).setErrorMessage(null);
        resources.values().forEach(response.resources()::add);
        return response;
    }
}
