package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.MetadataImage;

import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The brokers a client is told about, as Kafka's KRaft metadata cache answers: every registered,
 * unfenced broker of the image (a broker without an endpoint on the request's listener is left
 * out of listings), and as "controller id" a random alive broker, because clients cannot reach
 * the KRaft controllers and send controller-bound requests to any broker (KIP-590).
 */
final class AliveBrokers {
    private AliveBrokers() {
    }

    /** Kafka's {@code getRandomAliveBrokerId}: a uniformly chosen unfenced broker, or -1 when there is none. */
    static int randomAliveBrokerId(MetadataImage image, RandomGenerator random) {
        List<Integer> alive = new ArrayList<>();
        for (BrokerRegistration broker : image.brokers().values()) {
            if (!broker.fenced()) {
                alive.add(broker.id());
            }
        }
        if (alive.isEmpty()) {
            return -1;
        }
        alive.sort(Integer::compare); // the image's map has no order; a seeded generator then picks reproducibly
        return alive.get(random.nextInt(alive.size()));
    }
}
