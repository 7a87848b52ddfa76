package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;
import io.strata.metadata.PartitionRegistration;
import io.strata.metadata.TopicImage;

import java.util.Map;
import java.util.TreeMap;

/**
 * KIP-951 leader discovery for one response: the current leader (id and epoch) of a partition
 * as the metadata image has it, and the endpoints, on the listener the request arrived on, of
 * every leader named so, so that a client learns the new leader without a Metadata round trip.
 * A partition the image does not have, or without a leader, is named as leader -1, epoch -1;
 * a leader without an endpoint on the listener is named but not described (as Kafka's
 * {@code getPartitionLeaderEndpoint} leaves it out).
 *
 * <p>Not thread-safe: one instance per response, filled on the thread that builds it.
 */
final class LeaderHints {
    /** A partition's leader as the image has it. */
    record Leader(int id, int epoch) {
        static final Leader UNKNOWN = new Leader(-1, -1);
    }

    /** A named leader's endpoint on the request's listener. */
    record Node(int id, String host, int port, String rack) {
    }

    private final MetadataImage image;
    private final String listenerName;
    /** Created with the first named leader: most responses name none. */
    private Map<Integer, Node> nodes;

    LeaderHints(MetadataImage image, String listenerName) {
        this.image = image;
        this.listenerName = listenerName;
    }

    /** The partition's current leader; remembers its endpoint for {@link #nodes()}. */
    Leader leaderOf(String topicName, int partitionIndex) {
        TopicImage topic = topicName == null ? null : image.topic(topicName);
        PartitionRegistration partition = topic == null ? null : topic.partition(partitionIndex);
        if (partition == null || !partition.hasLeader()) {
            return Leader.UNKNOWN;
        }
        BrokerRegistration broker = image.brokers().get(partition.leader());
        BrokerRegistration.Endpoint endpoint = broker == null ? null : broker.endpoint(listenerName);
        if (endpoint != null) {
            if (nodes == null) {
                nodes = new TreeMap<>();
            }
            nodes.put(broker.id(), new Node(broker.id(), endpoint.host(), endpoint.port(), broker.rack()));
        }
        return new Leader(partition.leader(), partition.leaderEpoch());
    }

    /** The endpoints of the leaders named so far, by id. */
    Map<Integer, Node> nodes() {
        return nodes == null ? Map.of() : nodes;
    }
}
