package io.strata.tools.client;

/**
 * One group as ListGroups reports it.
 *
 * @param protocolType the embedded protocol ("consumer", "connect", ...), or "" for a group without one
 *                     (offsets committed outside group management, and KIP-848 consumer groups)
 * @param state        the state's display name ("Stable", "Empty", ...), or null before ListGroups v4
 * @param type         "classic" or "consumer" (KIP-848), or null before ListGroups v5
 * @param coordinatorId the broker that listed (and coordinates) the group
 */
public record GroupListing(String groupId, String protocolType, String state, String type, int coordinatorId) {
}
