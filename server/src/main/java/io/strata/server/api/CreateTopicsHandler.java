package io.strata.server.api;

import io.strata.metadata.authorizer.AclOperation;
import io.strata.metadata.authorizer.ResourceType;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.CreateTopicsResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * CreateTopics: validated and written by the controller; validate-only writes nothing. A topic
 * needs CREATE on the cluster or on the topic, else it is answered TOPIC_AUTHORIZATION_FAILED and
 * not sent to the controller, as Kafka.
 */
final class CreateTopicsHandler implements ApiHandler {
    private final BrokerContext context;

    CreateTopicsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        CreateTopicsRequestData body = request.body(CreateTopicsRequestData.class);
        boolean clusterCreate = context.authorization().authorizeCluster(request, AclOperation.CREATE);
        List<CreateTopicsRequestData.CreatableTopic> authorized = new ArrayList<>();
        for (CreateTopicsRequestData.CreatableTopic topic : body.topics()) {
            if (clusterCreate || context.authorization().authorize(request, AclOperation.CREATE, ResourceType.TOPIC, topic.name())) {
                authorized.add(topic);
            }
        }
        if (authorized.isEmpty() && !body.topics().isEmpty()) {
            request.respond(merge(request, body, authorized, List.of()));
            return;
        }
        context.controller().createTopics(authorized, body.validateOnly()).whenComplete((results, error) -> {
            List<CreateTopicsResponseData.CreatableTopicResult> answered = new ArrayList<>();
            if (error != null) {
                for (CreateTopicsRequestData.CreatableTopic topic : authorized) {
                    answered.add(new CreateTopicsResponseData.CreatableTopicResult().setName(topic.name())
                        .setErrorCode(ControllerErrors.of(error).code()).setErrorMessage(error.getMessage())
                        .setNumPartitions(-1).setReplicationFactor((short) -1));
                }
            } else {
                answered.addAll(results);
                if (request.apiVersion() < 5) {
                    results.forEach(result -> result.configs().clear());
                }
            }
            request.respond(merge(request, body, authorized, answered));
        });
    }

    /** The controller's answers for the authorized topics and TOPIC_AUTHORIZATION_FAILED for the others, in request order. */
    private static CreateTopicsResponseData merge(Request request, CreateTopicsRequestData body, List<CreateTopicsRequestData.CreatableTopic> authorized,
                                                  List<CreateTopicsResponseData.CreatableTopicResult> answered) {
        CreateTopicsResponseData response = new CreateTopicsResponseData();
        Iterator<CreateTopicsResponseData.CreatableTopicResult> results = answered.iterator();
        for (CreateTopicsRequestData.CreatableTopic topic : body.topics()) {
            if (authorized.contains(topic) && results.hasNext()) {
                response.topics().add(results.next());
            } else {
                response.topics().add(new CreateTopicsResponseData.CreatableTopicResult().setName(topic.name())
                    .setErrorCode(ErrorCode.TOPIC_AUTHORIZATION_FAILED.code()).setErrorMessage("Authorization failed.")
                    .setNumPartitions(-1).setReplicationFactor((short) -1));
            }
        }
        return response;
    }
}
