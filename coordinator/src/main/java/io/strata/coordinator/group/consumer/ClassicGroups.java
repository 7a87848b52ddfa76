package io.strata.coordinator.group.consumer;

/**
 * The classic groups of the same shard, as far as consumer groups need them: a group id
 * belongs to one protocol at a time. An empty classic group (for example one that only holds
 * committed offsets) gives its id up to a consumer group; a classic group with members does not.
 */
public interface ClassicGroups {
    /** Null if there is no classic group {@code groupId}; else whether it has no members. */
    Boolean isEmpty(String groupId);

    /** Forgets the (empty) classic group {@code groupId}; its committed offsets stay. */
    void remove(String groupId);

    ClassicGroups NONE = new ClassicGroups() {
        @Override
        public Boolean isEmpty(String groupId) {
            return null;
        }

        @Override
        public void remove(String groupId) {
        }
    };
}
