package io.strata.metadata;

import io.strata.metadata.record.BrokerRegistrationChangeRecord;
import io.strata.metadata.record.NoOpRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.RegisterControllerRecord;
import io.strata.metadata.record.UnregisterBrokerRecord;
import io.strata.protocol.ApiMessage;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static io.strata.metadata.TestRecords.change;
import static io.strata.metadata.TestRecords.fence;
import static io.strata.metadata.TestRecords.list;
import static io.strata.metadata.TestRecords.partition;
import static io.strata.metadata.TestRecords.partitionChange;
import static io.strata.metadata.TestRecords.register;
import static io.strata.metadata.TestRecords.throughBytes;
import static io.strata.metadata.TestRecords.topic;
import static io.strata.metadata.TestRecords.unfence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How MetadataImage.apply reads the broker lifecycle, controller, NoOp and PartitionChange records. */
class MetadataImageBrokerLifecycleTest {
    private static final UUID TOPIC_ID = new UUID(7, 7);

    private static MetadataImage apply(MetadataImage image, ApiMessage... records) {
        return image.apply(List.of(records), image.offset() + records.length);
    }

    private static MetadataImage oneBroker() {
        return apply(MetadataImage.EMPTY, register(1, 10, "a", true));
    }

    @Test
    void fenceAndUnfenceRecordsSetFencedForTheRegisteredEpoch() {
        MetadataImage unfenced = apply(oneBroker(), unfence(1, 10));
        assertThat(unfenced.brokers().get(1).fenced()).isFalse();
        MetadataImage fenced = apply(unfenced, fence(1, 10));
        assertThat(fenced.brokers().get(1).fenced()).isTrue();
        assertThat(fenced.brokers().get(1).epoch()).isEqualTo(10);
    }

    @Test
    void lifecycleRecordsForAnotherEpochOrAnUnknownBrokerAreIgnored() {
        MetadataImage image = oneBroker();
        MetadataImage after = apply(image, unfence(1, 9), change(1, 11, -1, 1), new UnregisterBrokerRecord().setBrokerId(1).setBrokerEpoch(3),
            fence(2, 10), unfence(2, 10));
        assertThat(after.brokers()).isEqualTo(image.brokers());
        assertThat(after.offset()).isEqualTo(image.offset() + 5);
    }

    @Test
    void unregisterRemovesTheBroker() {
        MetadataImage image = apply(oneBroker(), register(2, 11, "b", false), new UnregisterBrokerRecord().setBrokerId(1).setBrokerEpoch(10));
        assertThat(image.brokers()).containsOnlyKeys(2);
    }

    @Test
    void registrationChangeFencesUnfencesAndMarksControlledShutdown() {
        MetadataImage image = apply(oneBroker(), change(1, 10, -1, 0));
        assertThat(image.brokers().get(1).fenced()).isFalse();
        assertThat(image.brokers().get(1).inControlledShutdown()).isFalse();
        image = apply(image, change(1, 10, 0, 1));
        assertThat(image.brokers().get(1).fenced()).as("Fenced 0: unchanged").isFalse();
        assertThat(image.brokers().get(1).inControlledShutdown()).isTrue();
        assertThat(image.brokers().get(1).usable()).isFalse();
        image = apply(image, change(1, 10, 1, 0));
        assertThat(image.brokers().get(1).fenced()).isTrue();
        assertThat(image.brokers().get(1).inControlledShutdown()).as("InControlledShutdown 0: unchanged").isTrue();
    }

    @Test
    void aNewRegistrationEndsControlledShutdown() {
        MetadataImage image = apply(oneBroker(), change(1, 10, -1, 1), register(1, 20, "a", true));
        assertThat(image.brokers().get(1).inControlledShutdown()).isFalse();
        assertThat(image.brokers().get(1).epoch()).isEqualTo(20);
    }

    @Test
    void aRegistrationChangeWithAnUndefinedValueIsABug() {
        assertThatThrownBy(() -> apply(oneBroker(), change(1, 10, 2, 0)))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("broker 1").hasMessageContaining("Fenced=2");
        assertThatThrownBy(() -> apply(oneBroker(), change(1, 10, 0, -1)))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("InControlledShutdown=-1");
    }

    @Test
    void registerControllerFillsTheControllersMapAndALaterOneReplacesIt() {
        RegisterControllerRecord first = new RegisterControllerRecord().setControllerId(3000).setIncarnationId(new UUID(1, 1));
        first.endPoints().add(new RegisterControllerRecord.ControllerEndpoint().setName("CONTROLLER").setHost("c0").setPort(9093)
            .setSecurityProtocol((short) 0));
        RegisterControllerRecord second = new RegisterControllerRecord().setControllerId(3000).setIncarnationId(new UUID(2, 2));
        MetadataImage image = apply(MetadataImage.EMPTY, first);
        assertThat(image.controllers()).containsOnlyKeys(3000);
        assertThat(image.controllers().get(3000).endpoints())
            .containsExactly(new BrokerRegistration.Endpoint("CONTROLLER", "c0", 9093, (short) 0));
        image = apply(image, second);
        assertThat(image.controllers().get(3000)).isEqualTo(new ControllerRegistration(3000, new UUID(2, 2), List.of()));
    }

    @Test
    void noOpMovesOnlyTheOffset() {
        MetadataImage image = oneBroker();
        MetadataImage after = image.apply(List.of(new NoOpRecord()), 41);
        assertThat(after.offset()).isEqualTo(41);
        assertThat(after.brokers()).isSameAs(image.brokers());
        assertThat(after.topicsByName()).isSameAs(image.topicsByName());
    }

    private static MetadataImage withPartition() {
        return apply(MetadataImage.EMPTY, topic("t", TOPIC_ID), partition(TOPIC_ID, 0, 1, 2, 3));
    }

    @Test
    void partitionChangeLeaderMinusOneTakesThePartitionOfflineAndBumpsBothEpochs() {
        PartitionRegistration partition = apply(withPartition(), partitionChange(TOPIC_ID, 0).setLeader(-1)).topic("t").partition(0);
        assertThat(partition.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(partition.hasLeader()).isFalse();
        assertThat(partition.leaderEpoch()).isEqualTo(1);
        assertThat(partition.partitionEpoch()).isEqualTo(1);
        assertThat(partition.isr()).containsExactly(1, 2, 3);
    }

    @Test
    void partitionChangeWithANewLeaderAndIsrBumpsTheLeaderEpoch() {
        PartitionRegistration partition = apply(withPartition(), partitionChange(TOPIC_ID, 0).setLeader(2).setIsr(list(2, 3)))
            .topic("t").partition(0);
        assertThat(partition.leader()).isEqualTo(2);
        assertThat(partition.isr()).containsExactly(2, 3);
        assertThat(partition.replicas()).containsExactly(1, 2, 3);
        assertThat(partition.leaderEpoch()).isEqualTo(1);
        assertThat(partition.partitionEpoch()).isEqualTo(1);
    }

    @Test
    void partitionChangeOfTheIsrOnlyKeepsLeaderAndLeaderEpoch() {
        PartitionRegistration partition = apply(withPartition(), partitionChange(TOPIC_ID, 0).setIsr(list(1, 3))).topic("t").partition(0);
        assertThat(partition.leader()).isEqualTo(1);
        assertThat(partition.isr()).containsExactly(1, 3);
        assertThat(partition.leaderEpoch()).isEqualTo(0);
        assertThat(partition.partitionEpoch()).isEqualTo(1);
    }

    @Test
    void partitionChangeWithEveryFieldAtItsDefaultChangesOnlyThePartitionEpoch() {
        PartitionChangeRecord change = partitionChange(TOPIC_ID, 0);
        assertThat(change.leader()).isEqualTo(-2);
        assertThat(change.isr()).isNull();
        assertThat(change.replicas()).isNull();
        PartitionRegistration partition = apply(withPartition(), (ApiMessage) throughBytes(change)).topic("t").partition(0);
        assertThat(partition).isEqualTo(new PartitionRegistration(new int[] {1, 2, 3}, new int[] {1, 2, 3}, 1, 0, 1));
    }

    @Test
    void newRecordsSurviveTheirEncoding() {
        List<ApiMessage> records = List.of(fence(1, 10), unfence(1, 10), new UnregisterBrokerRecord().setBrokerId(1).setBrokerEpoch(10),
            change(1, 10, -1, 1), change(1, 10, 0, 0), new NoOpRecord(),
            new RegisterControllerRecord().setControllerId(1).setIncarnationId(new UUID(3, 4)));
        for (ApiMessage record : records) {
            assertThat(throughBytes(record)).isEqualTo(record);
        }
        BrokerRegistrationChangeRecord unchanged = (BrokerRegistrationChangeRecord) throughBytes(change(1, 10, 0, 0));
        assertThat(unchanged.fenced()).isZero();
        assertThat(unchanged.inControlledShutdown()).isZero();
    }
}
