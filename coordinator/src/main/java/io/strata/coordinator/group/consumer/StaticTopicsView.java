package io.strata.coordinator.group.consumer;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/** A {@link TopicsView} over a fixed list of topics. Immutable. */
final class StaticTopicsView implements TopicsView {
    private final long version;
    private final Map<String, Topic> byName = new TreeMap<>();
    private final Map<UUID, Topic> byId = new HashMap<>();

    StaticTopicsView(long version, Collection<Topic> topics) {
        this.version = version;
        for (Topic topic : topics) {
            byName.put(topic.name(), topic);
            byId.put(topic.id(), topic);
        }
    }

    @Override
    public long version() {
        return version;
    }

    @Override
    public Topic topic(String name) {
        return byName.get(name);
    }

    @Override
    public Topic topic(UUID id) {
        return byId.get(id);
    }

    @Override
    public Collection<String> topicNames() {
        return Collections.unmodifiableSet(byName.keySet());
    }
}
