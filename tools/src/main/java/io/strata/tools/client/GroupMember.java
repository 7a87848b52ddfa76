package io.strata.tools.client;

import java.util.List;

/**
 * One member of a group, as DescribeGroups or ConsumerGroupDescribe reports it.
 *
 * @param groupInstanceId  the static member's instance id (KIP-345), or null
 * @param assignment       the partitions the member owns, sorted; empty unless the group is stable (classic
 *                         groups) or if the classic member's assignment is not in the consumer protocol
 * @param targetAssignment the partitions the coordinator wants the member to own (consumer groups), or null
 * @param memberEpoch      the member epoch (consumer groups), or -1 for classic members
 */
public record GroupMember(String memberId, String groupInstanceId, String clientId, String host, List<TopicPartition> assignment,
                          List<TopicPartition> targetAssignment, int memberEpoch) {
    public GroupMember {
        assignment = assignment.stream().sorted().toList();
        targetAssignment = targetAssignment == null ? null : targetAssignment.stream().sorted().toList();
    }
}
