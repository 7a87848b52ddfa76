package io.strata.protocol;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.UUID;

/** Kafka's view of UUIDs: the all-zero sentinel and the URL-safe base64 text form. */
public final class Uuids {
    /** "No UUID": schemas use it where other types would use null. */
    public static final UUID ZERO = new UUID(0L, 0L);
    /** Reserved by Kafka for metadata topic ids. */
    public static final UUID METADATA_TOPIC_ID = new UUID(0L, 1L);

    private Uuids() {
    }

    /** Kafka's textual form: 22 characters of URL-safe base64 without padding. */
    public static String toBase64(UUID uuid) {
        ByteBuffer buffer = ByteBuffer.allocate(16);
        buffer.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(buffer.array());
    }

    public static UUID fromBase64(String text) {
        byte[] bytes = Base64.getUrlDecoder().decode(text);
        if (bytes.length != 16) {
            throw new IllegalArgumentException("a UUID is 16 bytes, got " + bytes.length + ": " + text);
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        return new UUID(buffer.getLong(), buffer.getLong());
    }

    /** A random UUID that is neither ZERO nor one of Kafka's reserved ids, and whose text form does not start with '-'. */
    public static UUID randomTopicId() {
        while (true) {
            UUID candidate = UUID.randomUUID();
            if (!candidate.equals(ZERO) && !candidate.equals(METADATA_TOPIC_ID) && !toBase64(candidate).startsWith("-")) {
                return candidate;
            }
        }
    }
}
