package io.strata.server.api;

import io.strata.protocol.message.ApiMessageType;

import java.util.EnumMap;
import java.util.Map;

/** The handler of each API; the dispatch table the broker is built with. */
public final class ApiHandlers {
    private ApiHandlers() {
    }

    public static Map<ApiMessageType, ApiHandler> create(BrokerContext context) {
        Map<ApiMessageType, ApiHandler> handlers = new EnumMap<>(ApiMessageType.class);
        handlers.put(ApiMessageType.API_VERSIONS, new ApiVersionsHandler(context));
        handlers.put(ApiMessageType.METADATA, new MetadataHandler(context));
        handlers.put(ApiMessageType.PRODUCE, new ProduceHandler(context));
        handlers.put(ApiMessageType.FETCH, new FetchHandler(context));
        handlers.put(ApiMessageType.LIST_OFFSETS, new ListOffsetsHandler(context));
        handlers.put(ApiMessageType.CREATE_TOPICS, new CreateTopicsHandler(context));
        handlers.put(ApiMessageType.INIT_PRODUCER_ID, new InitProducerIdHandler(context));
        return handlers;
    }
}
