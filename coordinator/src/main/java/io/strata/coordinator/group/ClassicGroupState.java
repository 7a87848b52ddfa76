package io.strata.coordinator.group;

/**
 * States of a classic group, with Kafka's names (as DescribeGroups and ListGroups report them).
 *
 * <pre>
 *  Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance ──leader syncs──▶ Stable
 *    ▲                  ▲   │ (no members left)                     │ member joins/leaves/expires      │
 *    └──────────────────┼───┘◀──────────────────────────────────────┴──────────────────────────────────┘
 *  Dead: deleted (DeleteGroups, or expired offsets of an empty group)
 * </pre>
 */
enum ClassicGroupState {
    EMPTY("Empty"), PREPARING_REBALANCE("PreparingRebalance"), COMPLETING_REBALANCE("CompletingRebalance"), STABLE("Stable"), DEAD("Dead");

    final String displayName;

    ClassicGroupState(String displayName) {
        this.displayName = displayName;
    }
}
