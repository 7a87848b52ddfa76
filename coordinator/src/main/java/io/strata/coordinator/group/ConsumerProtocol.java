package io.strata.coordinator.group;

import io.strata.protocol.ProtocolException;
import io.strata.protocol.Reader;
import io.strata.protocol.message.ConsumerProtocolSubscription;

import java.nio.ByteBuffer;
import java.util.List;

/** Reads the consumer embedded protocol's subscription (version i16 + ConsumerProtocolSubscription). */
final class ConsumerProtocol {
    private ConsumerProtocol() {
    }

    static List<String> subscribedTopics(byte[] metadata) {
        List<String> topics = subscribedTopicsOrNull(metadata);
        return topics == null ? List.of() : topics;
    }

    /** The subscribed topics, or null if the metadata is not a consumer protocol subscription. */
    static List<String> subscribedTopicsOrNull(byte[] metadata) {
        try {
            Reader reader = new Reader(ByteBuffer.wrap(metadata));
            short version = reader.readShort();
            short readable = (short) Math.min(version, ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION);
            return new ConsumerProtocolSubscription(reader, readable).topics();
        } catch (ProtocolException | java.nio.BufferUnderflowException e) {
            return null;
        }
    }
}
