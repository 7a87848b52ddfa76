package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.server.network.Request;

/** CreateTopics: validated and written by the controller; validate-only writes nothing. */
final class CreateTopicsHandler implements ApiHandler {
    private final BrokerContext context;

    CreateTopicsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        CreateTopicsRequestData body = request.body(CreateTopicsRequestData.class);
        context.controller().createTopics(body.topics(), body.validateOnly()).whenComplete((results, error) -> {
            CreateTopicsResponseData response = new CreateTopicsResponseData();
            if (error != null) {
                for (CreateTopicsRequestData.CreatableTopic topic : body.topics()) {
                    response.topics().add(new CreateTopicsResponseData.CreatableTopicResult().setName(topic.name())
                        .setErrorCode(ControllerErrors.of(error).code()).setErrorMessage(error.getMessage())
                        .setNumPartitions(-1).setReplicationFactor((short) -1));
                }
            } else {
                response.setTopics(results);
                if (request.apiVersion() < 5) {
                    results.forEach(result -> result.configs().clear());
                }
            }
            request.respond(response);
        });
    }
}
