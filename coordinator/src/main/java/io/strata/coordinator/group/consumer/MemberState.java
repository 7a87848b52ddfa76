package io.strata.coordinator.group.consumer;

/**
 * Where a member is in reconciling its current assignment towards its target assignment.
 * The byte values are Kafka's (stored in ConsumerGroupCurrentMemberAssignmentValue.State).
 */
public enum MemberState {
    /** The member owns exactly its target assignment at the target epoch (or waits for nothing). */
    STABLE((byte) 0),
    /** The member must revoke partitions before it may move to the next epoch. */
    UNREVOKED_PARTITIONS((byte) 1),
    /** The member is at the target epoch but waits for partitions other members still own. */
    UNRELEASED_PARTITIONS((byte) 2),
    /** A state written by a newer coordinator; the member is fenced and rebuilt on its next heartbeat. */
    UNKNOWN((byte) 127);

    final byte value;

    MemberState(byte value) {
        this.value = value;
    }

    public byte value() {
        return value;
    }

    public static MemberState fromValue(byte value) {
        for (MemberState state : values()) {
            if (state.value == value) {
                return state;
            }
        }
        return UNKNOWN;
    }
}
