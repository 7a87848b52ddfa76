package io.strata.metadata.authorizer;

/**
 * How an ACL's resource name is matched (KIP-290), with Kafka's wire codes
 * ({@code org.apache.kafka.common.resource.PatternType}). LITERAL: the exact name, or every
 * resource of the type for {@code *}; PREFIXED: every name that starts with it. ANY and MATCH are
 * for filters only: ANY selects patterns of any type by their exact name, MATCH selects the
 * patterns that would apply to the named resource.
 */
public enum PatternType {
    UNKNOWN(0), ANY(1), MATCH(2), LITERAL(3), PREFIXED(4);

    public final byte code;

    PatternType(int code) {
        this.code = (byte) code;
    }

    /** The type of {@code code}, UNKNOWN for a code that names none. */
    public static PatternType fromCode(byte code) {
        for (PatternType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        return UNKNOWN;
    }

    /** Whether an ACL (not a filter) may have this type. */
    public boolean isSpecific() {
        return this == LITERAL || this == PREFIXED;
    }
}
