package io.strata.server.api;

import io.strata.coordinator.group.consumer.TopicsView;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicImage;

import java.util.Collection;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The cluster's topics as the group coordinator sees them: a view over the current metadata
 * image. The version moves when the image's topic map changes (the image copies that map only
 * when a topic or partition record changes), so consumer groups re-check subscriptions only
 * after a topic change, not after every metadata record. Thread-safe.
 */
public final class ImageTopicsView implements Supplier<TopicsView> {
    private final Supplier<MetadataImage> images;
    private View last;

    public ImageTopicsView(Supplier<MetadataImage> images) {
        this.images = images;
    }

    @Override
    public synchronized TopicsView get() {
        MetadataImage image = images.get();
        if (last == null || last.byName != image.topicsByName()) {
            last = new View(image.topicsByName(), image.topicsById(), last == null ? 1 : last.version + 1);
        }
        return last;
    }

    private record View(Map<String, TopicImage> byName, Map<UUID, TopicImage> byId, long version) implements TopicsView {
        @Override
        public Topic topic(String name) {
            TopicImage topic = byName.get(name);
            return topic == null ? null : new Topic(topic.id(), topic.name(), topic.partitionCount());
        }

        @Override
        public Topic topic(UUID id) {
            TopicImage topic = byId.get(id);
            return topic == null ? null : new Topic(topic.id(), topic.name(), topic.partitionCount());
        }

        @Override
        public Collection<String> topicNames() {
            return byName.keySet();
        }
    }
}
