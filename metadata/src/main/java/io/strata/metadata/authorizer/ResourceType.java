package io.strata.metadata.authorizer;

/**
 * Kafka's ACL resource types with their wire codes ({@code org.apache.kafka.common.resource.ResourceType}).
 * ANY is for filters only; UNKNOWN stands for a code this version does not know.
 */
public enum ResourceType {
    UNKNOWN(0), ANY(1), TOPIC(2), GROUP(3), CLUSTER(4), TRANSACTIONAL_ID(5), DELEGATION_TOKEN(6), USER(7);

    public final byte code;

    ResourceType(int code) {
        this.code = (byte) code;
    }

    /** The type of {@code code}, UNKNOWN for a code that names none. */
    public static ResourceType fromCode(byte code) {
        for (ResourceType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        return UNKNOWN;
    }
}
