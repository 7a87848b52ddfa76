package io.strata.server.api;

import io.strata.metadata.authorizer.AclOperation;
import io.strata.metadata.authorizer.ResourceType;
import io.strata.metadata.ControllerApi;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.DeleteTopicsRequestData;
import io.strata.protocol.message.DeleteTopicsResponseData;
import io.strata.server.config.ServerConfig;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * DeleteTopics, by name (v1-v5 {@code TopicNames}, v6 {@code Topics} with a name) or by topic
 * id (v6), with Kafka's controller rules:
 * <ul>
 *   <li>{@code delete.topic.enable=false}: every topic fails with TOPIC_DELETION_DISABLED
 *       (INVALID_REQUEST before v3, which had no such code).</li>
 *   <li>An entry with both a name and an id, or with neither, is INVALID_REQUEST; so is a name
 *       or an id that appears twice (one answer for all its occurrences), and a name whose
 *       topic was also named by id.</li>
 *   <li>An unknown name is UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID.</li>
 * </ul>
 * Internal topics are not protected: Kafka's KRaft controller deletes them too.
 */
final class DeleteTopicsHandler implements ApiHandler {
    private static final String UNKNOWN_TOPIC_ID_MESSAGE = "This server does not host this topic ID.";
    private static final String UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition.";

    private final BrokerContext context;

    DeleteTopicsHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        DeleteTopicsRequestData body = request.body(DeleteTopicsRequestData.class);
        List<DeleteTopicsRequestData.DeleteTopicState> requested = requestedTopics(body, request.apiVersion());
        if (!context.config().getBoolean(ServerConfig.DELETE_TOPIC_ENABLE)) {
            ErrorCode error = request.apiVersion() < 3 ? ErrorCode.INVALID_REQUEST : ErrorCode.TOPIC_DELETION_DISABLED;
            DeleteTopicsResponseData response = new DeleteTopicsResponseData();
            for (DeleteTopicsRequestData.DeleteTopicState topic : requested) {
                response.responses().add(result(topic.name(), topic.topicId(), error, null));
            }
            request.respond(response);
            return;
        }
        List<DeleteTopicsResponseData.DeletableTopicResult> results = new ArrayList<>();
        Map<UUID, String> toDelete = resolve(requested, context.image(), results);
        authorize(request, requested, toDelete, results);
        if (toDelete.isEmpty()) {
            request.respond(new DeleteTopicsResponseData().setResponses(results));
            return;
        }
        List<String> names = new ArrayList<>();
        List<UUID> ids = new ArrayList<>(toDelete.keySet());
        ids.forEach(id -> names.add(null));
        context.controller().deleteTopics(names, ids).whenComplete((deleted, failure) -> {
            if (failure != null) {
                toDelete.forEach((id, name) -> results.add(result(name, id, ControllerErrors.of(failure), failure.getMessage())));
            } else {
                for (ControllerApi.DeleteResult outcome : deleted) {
                    results.add(result(toDelete.get(outcome.topicId()), outcome.topicId(), outcome.error(), outcome.message()));
                }
            }
            request.respond(new DeleteTopicsResponseData().setResponses(results));
        });
    }

    /**
     * Kafka's checks: DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED (for a topic named by
     * id without DESCRIBE, without its name); a missing topic named by a principal that may not
     * delete it is TOPIC_AUTHORIZATION_FAILED too, so its absence is not told.
     */
    private void authorize(Request request, List<DeleteTopicsRequestData.DeleteTopicState> requested, Map<UUID, String> toDelete,
                           List<DeleteTopicsResponseData.DeletableTopicResult> results) {
        var authorization = context.authorization();
        Set<String> byName = new java.util.HashSet<>();
        requested.forEach(topic -> byName.add(topic.name()));
        for (DeleteTopicsResponseData.DeletableTopicResult result : results) {
            if (result.errorCode() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.code() && result.name() != null
                && !authorization.authorize(request, AclOperation.DELETE, ResourceType.TOPIC, result.name())) {
                result.setErrorCode(ErrorCode.TOPIC_AUTHORIZATION_FAILED.code()).setErrorMessage(null);
            }
        }
        java.util.Iterator<Map.Entry<UUID, String>> entries = toDelete.entrySet().iterator();
        while (entries.hasNext()) {
            Map.Entry<UUID, String> entry = entries.next();
            if (!authorization.authorize(request, AclOperation.DELETE, ResourceType.TOPIC, entry.getValue())) {
                boolean described = authorization.authorize(request, AclOperation.DESCRIBE, ResourceType.TOPIC, entry.getValue());
                boolean named = byName.contains(entry.getValue());
                results.add(result(described || named ? entry.getValue() : null, named ? Uuids.ZERO : entry.getKey(),
                    ErrorCode.TOPIC_AUTHORIZATION_FAILED, null));
                entries.remove();
            }
        }
    }

    /** The request's topics in v6 form: versions before 6 name them in {@code TopicNames}. */
    private static List<DeleteTopicsRequestData.DeleteTopicState> requestedTopics(DeleteTopicsRequestData body, short version) {
        if (version >= 6) {
            return body.topics();
        }
        List<DeleteTopicsRequestData.DeleteTopicState> topics = new ArrayList<>();
        for (String name : body.topicNames()) {
            topics.add(new DeleteTopicsRequestData.DeleteTopicState().setName(name).setTopicId(Uuids.ZERO));
        }
        return topics;
    }

    /**
     * Validates the entries and resolves them to topic ids against {@code image}. Entries that
     * fail get their answer in {@code results}; the returned map (id → name) holds the topics
     * to delete. The controller checks again on its thread, so a topic deleted in between is
     * answered UNKNOWN_TOPIC_ID.
     */
    private static Map<UUID, String> resolve(List<DeleteTopicsRequestData.DeleteTopicState> requested, MetadataImage image,
                                             List<DeleteTopicsResponseData.DeletableTopicResult> results) {
        Set<String> names = new LinkedHashSet<>();
        Set<String> duplicateNames = new LinkedHashSet<>();
        Set<UUID> ids = new LinkedHashSet<>();
        Set<UUID> duplicateIds = new LinkedHashSet<>();
        for (DeleteTopicsRequestData.DeleteTopicState topic : requested) {
            boolean hasId = topic.topicId() != null && !Uuids.ZERO.equals(topic.topicId());
            if (topic.name() == null && !hasId) {
                results.add(result(null, Uuids.ZERO, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."));
            } else if (topic.name() != null && hasId) {
                results.add(result(topic.name(), topic.topicId(), ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id."));
            } else if (topic.name() != null) {
                addOnce(topic.name(), names, duplicateNames);
            } else {
                addOnce(topic.topicId(), ids, duplicateIds);
            }
        }
        duplicateNames.forEach(name -> results.add(result(name, Uuids.ZERO, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")));
        duplicateIds.forEach(id -> results.add(result(null, id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")));

        Map<UUID, String> toDelete = new LinkedHashMap<>();
        for (UUID id : ids) {
            TopicImage topic = image.topic(id);
            if (topic == null) {
                results.add(result(null, id, ErrorCode.UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_ID_MESSAGE));
            } else {
                toDelete.put(id, topic.name());
            }
        }
        for (String name : names) {
            TopicImage topic = image.topic(name);
            if (topic == null) {
                results.add(result(name, Uuids.ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE));
            } else if (duplicateIds.contains(topic.id()) || toDelete.containsKey(topic.id())) {
                // Kafka drops the id entry too and answers only this one.
                duplicateIds.add(topic.id());
                toDelete.remove(topic.id());
                results.add(result(name, topic.id(), ErrorCode.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied."));
            } else {
                toDelete.put(topic.id(), name);
            }
        }
        return toDelete;
    }

    private static <T> void addOnce(T value, Set<T> seen, Set<T> duplicates) {
        if (duplicates.contains(value) || !seen.add(value)) {
            duplicates.add(value);
            seen.remove(value);
        }
    }

    private static DeleteTopicsResponseData.DeletableTopicResult result(String name, UUID id, ErrorCode error, String message) {
        return new DeleteTopicsResponseData.DeletableTopicResult().setName(name).setTopicId(id == null ? Uuids.ZERO : id)
            .setErrorCode(error.code()).setErrorMessage(message);
    }
}
