package io.strata.server.api;

import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.message.ApiMessageType;
import io.strata.server.network.Request;
import io.strata.server.network.RequestDispatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumMap;
import java.util.Map;

/**
 * Routes each request to the handler of its API: one handler per API (or small family),
 * looked up in a table, never a switch over every API in one class.
 *
 * <p>Version rules, as Kafka applies them: an ApiVersions request of a version we do not
 * advertise gets an UNSUPPORTED_VERSION answer in version 0 listing our ranges; any other
 * request of an unadvertised version, or whose body does not parse, closes the connection.
 */
public final class ApiDispatcher implements RequestDispatcher {
    private static final Logger LOG = LoggerFactory.getLogger(ApiDispatcher.class);

    private final ApiVersionsTable table;
    private final Map<ApiMessageType, ApiHandler> handlers;
    private final io.strata.server.security.Authorization authorization;

    public ApiDispatcher(ApiVersionsTable table, Map<ApiMessageType, ApiHandler> handlers) {
        this(table, handlers, io.strata.server.security.Authorization.NONE);
    }

    /** A dispatcher that hands a request to its handler only if {@code authorization} {@link io.strata.server.security.Authorization#admits admits} it. */
    public ApiDispatcher(ApiVersionsTable table, Map<ApiMessageType, ApiHandler> handlers, io.strata.server.security.Authorization authorization) {
        for (ApiMessageType api : table.ranges().keySet()) {
            if (!handlers.containsKey(api)) {
                throw new IllegalArgumentException("API " + api.apiName + " is advertised but has no handler");
            }
        }
        this.table = table;
        this.handlers = new EnumMap<>(handlers);
        this.authorization = authorization;
    }

    @Override
    public void dispatch(Request request) {
        ApiMessageType api = request.header().api();
        short version = request.apiVersion();
        if (!table.isAdvertised(api, version)) {
            if (api == ApiMessageType.API_VERSIONS) {
                request.respond(table.unsupportedApiVersionsResponse(), (short) 0);
            } else {
                request.closeConnection("unsupported version " + version + " of " + api.apiName);
            }
            return;
        }
        try {
            request.parseBody();
        } catch (ProtocolException e) {
            LOG.info("Malformed {} request: {}", request, e.getMessage());
            request.closeConnection("malformed request body: " + e.getMessage());
            return;
        }
        if (!authorization.admits(request)) {
            // Fail closed: this API's own checks are not implemented yet, so only super users are served (docs/acl-plan.md).
            LOG.warn("Refusing {} from {}: its authorization is not implemented, only super users may use it", request, request.principal());
            request.closeConnection("authorization of " + api.apiName + " is not implemented for " + request.principal());
            return;
        }
        handlers.get(api).handle(request);
    }
}
