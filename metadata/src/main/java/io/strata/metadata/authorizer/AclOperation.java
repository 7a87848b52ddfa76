package io.strata.metadata.authorizer;

import java.util.EnumSet;
import java.util.Set;

/**
 * Kafka's ACL operations with their wire codes ({@code org.apache.kafka.common.acl.AclOperation}).
 * ANY is for filters only. An ALLOW of ALL allows every operation, a DENY of ALL denies every
 * operation; otherwise an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, and an
 * ALLOW of ALTER_CONFIGS also allows DESCRIBE_CONFIGS ({@link #allowedBy}). A DENY never
 * implies: a DENY of READ does not deny DESCRIBE.
 */
public enum AclOperation {
    UNKNOWN(0), ANY(1), ALL(2), READ(3), WRITE(4), CREATE(5), DELETE(6), ALTER(7), DESCRIBE(8), CLUSTER_ACTION(9),
    DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11), IDEMPOTENT_WRITE(12), CREATE_TOKENS(13), DESCRIBE_TOKENS(14), TWO_PHASE_COMMIT(15);

    private static final Set<AclOperation> IMPLY_DESCRIBE = EnumSet.of(DESCRIBE, READ, WRITE, DELETE, ALTER);
    private static final Set<AclOperation> IMPLY_DESCRIBE_CONFIGS = EnumSet.of(DESCRIBE_CONFIGS, ALTER_CONFIGS);

    public final byte code;

    AclOperation(int code) {
        this.code = (byte) code;
    }

    /** The operation of {@code code}, UNKNOWN for a code that names none. */
    public static AclOperation fromCode(byte code) {
        for (AclOperation operation : values()) {
            if (operation.code == code) {
                return operation;
            }
        }
        return UNKNOWN;
    }

    /** Whether an ACL of operation {@code aclOperation} and {@code permission} applies to a request for this operation. */
    public boolean matchedBy(AclOperation aclOperation, AclPermissionType permission) {
        if (aclOperation == ALL) {
            return true;
        }
        return permission == AclPermissionType.ALLOW ? allowedBy(aclOperation) : aclOperation == this;
    }

    /** Whether an ALLOW of {@code aclOperation} (other than ALL) allows this operation. */
    boolean allowedBy(AclOperation aclOperation) {
        return switch (this) {
            case DESCRIBE -> IMPLY_DESCRIBE.contains(aclOperation);
            case DESCRIBE_CONFIGS -> IMPLY_DESCRIBE_CONFIGS.contains(aclOperation);
            default -> aclOperation == this;
        };
    }
}
