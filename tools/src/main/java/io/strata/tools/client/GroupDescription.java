package io.strata.tools.client;

import java.util.List;

/**
 * One group as its coordinator describes it.
 *
 * @param type            "Classic" (DescribeGroups) or "Consumer" (KIP-848, ConsumerGroupDescribe)
 * @param state           the state's display name: "Stable", "Empty", "PreparingRebalance", ... or "Dead" for a
 *                        group that does not exist
 * @param protocolType    the classic embedded protocol ("consumer", "connect", ...), "" if none, "consumer" for consumer groups
 * @param assignor        the selected assignment strategy ("range", "uniform", ...), or "" while there is none
 * @param coordinatorId   the coordinator's node id
 * @param coordinator     the coordinator's address
 * @param groupEpoch      the group epoch of a consumer group, or -1
 * @param assignmentEpoch the target assignment epoch of a consumer group, or -1
 */
public record GroupDescription(String groupId, String type, String state, String protocolType, String assignor, int coordinatorId,
                               HostPort coordinator, int groupEpoch, int assignmentEpoch, List<GroupMember> members) {
    public static final String CLASSIC = "Classic";
    public static final String CONSUMER = "Consumer";
    public static final String DEAD = "Dead";
    public static final String EMPTY = "Empty";

    public GroupDescription {
        members = List.copyOf(members);
    }

    /** False for a group the coordinator does not know (state Dead). */
    public boolean exists() {
        return !DEAD.equals(state);
    }

    /** Whether a rebalance is under way (classic PreparingRebalance/CompletingRebalance, consumer Assigning/Reconciling). */
    public boolean isRebalancing() {
        return switch (state) {
            case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling" -> true;
            default -> false;
        };
    }
}
