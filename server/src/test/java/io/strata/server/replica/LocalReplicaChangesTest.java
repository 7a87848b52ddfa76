package io.strata.server.replica;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RemoveTopicRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.protocol.ApiMessage;
import io.strata.storage.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The per-partition classification of an image change for one node. */
class LocalReplicaChangesTest {
    private static final int NODE = 1;
    private static final UUID ID = UUID.randomUUID();
    private static final TopicPartition TP = new TopicPartition("t", 0);

    private static MetadataImage created(int leader, List<Integer> replicas) {
        PartitionRecord partition = new PartitionRecord().setTopicId(ID).setPartitionId(0).setLeader(leader).setLeaderEpoch(0).setPartitionEpoch(0);
        partition.replicas().addAll(replicas);
        partition.isr().addAll(replicas);
        return MetadataImage.EMPTY.apply(List.<ApiMessage>of(new TopicRecord().setName("t").setTopicId(ID), partition), 1);
    }

    private static MetadataImage change(MetadataImage image, PartitionChangeRecord change) {
        return image.apply(List.of(change.setTopicId(ID).setPartitionId(0)), image.offset() + 1);
    }

    private static LocalReplicaChanges.Kind onlyKind(LocalReplicaChanges changes) {
        List<LocalReplicaChanges.Change> all = new java.util.ArrayList<>(changes.leaders());
        all.addAll(changes.followers());
        assertThat(all).hasSize(1);
        return all.get(0).kind();
    }

    @Test
    void classifiesEachKindOfChange() {
        MetadataImage led = created(NODE, List.of(1, 2));
        LocalReplicaChanges fresh = LocalReplicaChanges.of(MetadataImage.EMPTY, led, NODE);
        assertThat(fresh.leaders()).extracting(LocalReplicaChanges.Change::topicPartition).containsExactly(TP);
        assertThat(onlyKind(fresh)).isEqualTo(LocalReplicaChanges.Kind.NEW);

        MetadataImage shrunk = change(led, new PartitionChangeRecord().setIsr(List.of(1)));
        assertThat(onlyKind(LocalReplicaChanges.of(led, shrunk, NODE))).isEqualTo(LocalReplicaChanges.Kind.ISR_ONLY);

        MetadataImage reelected = change(shrunk, new PartitionChangeRecord().setLeader(NODE));
        assertThat(onlyKind(LocalReplicaChanges.of(shrunk, reelected, NODE))).isEqualTo(LocalReplicaChanges.Kind.NEW_LEADER_EPOCH);

        MetadataImage moved = change(reelected, new PartitionChangeRecord().setLeader(2));
        LocalReplicaChanges movedAway = LocalReplicaChanges.of(reelected, moved, NODE);
        assertThat(movedAway.followers()).hasSize(1);
        assertThat(onlyKind(movedAway)).isEqualTo(LocalReplicaChanges.Kind.BECAME_FOLLOWER);
        assertThat(onlyKind(LocalReplicaChanges.of(moved, change(moved, new PartitionChangeRecord().setLeader(NODE)), NODE)))
            .isEqualTo(LocalReplicaChanges.Kind.BECAME_LEADER);
        assertThat(onlyKind(LocalReplicaChanges.of(moved, change(moved, new PartitionChangeRecord().setLeader(2)), NODE)))
            .as("followers see a new leader epoch").isEqualTo(LocalReplicaChanges.Kind.NEW_LEADER_EPOCH);

        LocalReplicaChanges away = LocalReplicaChanges.of(moved, change(moved, new PartitionChangeRecord().setReplicas(List.of(2))
            .setIsr(List.of(2))), NODE);
        assertThat(away.reassignedAway()).containsExactly(TP);
        assertThat(away.leaders()).isEmpty();
        assertThat(away.followers()).isEmpty();

        LocalReplicaChanges deleted = LocalReplicaChanges.of(moved, moved.apply(List.of(new RemoveTopicRecord().setTopicId(ID)),
            moved.offset() + 1), NODE);
        assertThat(deleted.deleted()).containsExactly(TP);
    }

    @Test
    void anUntouchedTopicAndAPartitionElsewhereAreNoChange() {
        MetadataImage image = created(2, List.of(2, 3));
        assertThat(LocalReplicaChanges.of(MetadataImage.EMPTY, image, NODE).isEmpty()).isTrue();
        assertThat(LocalReplicaChanges.of(image, image.withOffset(image.offset() + 1), NODE).isEmpty()).isTrue();
    }
}
