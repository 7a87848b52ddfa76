package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.CreatePartitionsRequestData;
import io.strata.protocol.message.CreatePartitionsResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * CreatePartitions: raises topics' partition counts through the controller, which validates
 * the new count and any manual assignment; validate-only writes nothing. As in Kafka, a topic
 * named more than once is answered once with INVALID_REQUEST and not changed at all.
 */
final class CreatePartitionsHandler implements ApiHandler {
    private final BrokerContext context;

    CreatePartitionsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        CreatePartitionsRequestData body = request.body(CreatePartitionsRequestData.class);
        Map<String, Integer> occurrences = new HashMap<>();
        for (CreatePartitionsRequestData.CreatePartitionsTopic topic : body.topics()) {
            occurrences.merge(topic.name(), 1, Integer::sum);
        }
        CreatePartitionsResponseData response = new CreatePartitionsResponseData();
        Set<String> duplicates = new LinkedHashSet<>();
        List<CreatePartitionsRequestData.CreatePartitionsTopic> unique = new ArrayList<>();
        for (CreatePartitionsRequestData.CreatePartitionsTopic topic : body.topics()) {
            if (occurrences.get(topic.name()) > 1) {
                duplicates.add(topic.name());
            } else {
                unique.add(topic);
            }
        }
        for (String name : duplicates) {
            response.results().add(new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(name)
                .setErrorCode(ErrorCode.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name."));
        }
        if (unique.isEmpty()) {
            request.respond(response);
            return;
        }
        context.controller().createPartitions(unique, body.validateOnly()).whenComplete((results, failure) -> {
            if (failure != null) {
                for (CreatePartitionsRequestData.CreatePartitionsTopic topic : unique) {
                    response.results().add(new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(topic.name())
                        .setErrorCode(ControllerErrors.of(failure).code()).setErrorMessage(failure.getMessage()));
                }
            } else {
                response.results().addAll(results);
            }
            request.respond(response);
        });
    }
}
