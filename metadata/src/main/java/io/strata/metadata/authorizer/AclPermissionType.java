package io.strata.metadata.authorizer;

/** ALLOW or DENY, with Kafka's wire codes ({@code org.apache.kafka.common.acl.AclPermissionType}); ANY is for filters only. */
public enum AclPermissionType {
    UNKNOWN(0), ANY(1), DENY(2), ALLOW(3);

    public final byte code;

    AclPermissionType(int code) {
        this.code = (byte) code;
    }

    /** The type of {@code code}, UNKNOWN for a code that names none. */
    public static AclPermissionType fromCode(byte code) {
        for (AclPermissionType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        return UNKNOWN;
    }
}
