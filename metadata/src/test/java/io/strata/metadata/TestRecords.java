package io.strata.metadata;

import io.strata.metadata.record.BrokerRegistrationChangeRecord;
import io.strata.metadata.record.FenceBrokerRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.PartitionRecord;
import io.strata.metadata.record.RegisterBrokerRecord;
import io.strata.metadata.record.TopicRecord;
import io.strata.metadata.record.UnfenceBrokerRecord;
import io.strata.protocol.ApiMessage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Record builders and a byte round trip shared by the metadata tests. */
final class TestRecords {
    private TestRecords() {
    }

    static RegisterBrokerRecord register(int id, long epoch, String rack, boolean fenced) {
        RegisterBrokerRecord record = new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(epoch)
            .setIncarnationId(new UUID(id, epoch)).setRack(rack).setFenced(fenced);
        record.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("host" + id)
            .setPort(9092 + id).setSecurityProtocol((short) 0));
        return record;
    }

    static FenceBrokerRecord fence(int id, long epoch) {
        return new FenceBrokerRecord().setBrokerId(id).setBrokerEpoch(epoch);
    }

    static UnfenceBrokerRecord unfence(int id, long epoch) {
        return new UnfenceBrokerRecord().setBrokerId(id).setBrokerEpoch(epoch);
    }

    static BrokerRegistrationChangeRecord change(int id, long epoch, int fenced, int inControlledShutdown) {
        return new BrokerRegistrationChangeRecord().setBrokerId(id).setBrokerEpoch(epoch).setFenced((byte) fenced)
            .setInControlledShutdown((byte) inControlledShutdown);
    }

    static TopicRecord topic(String name, UUID id) {
        return new TopicRecord().setName(name).setTopicId(id);
    }

    /** A partition led by its first replica with every replica in sync, at epochs 0. */
    static PartitionRecord partition(UUID topicId, int index, int... replicas) {
        PartitionRecord record = new PartitionRecord().setTopicId(topicId).setPartitionId(index)
            .setLeader(replicas.length == 0 ? -1 : replicas[0]).setLeaderEpoch(0).setPartitionEpoch(0);
        for (int replica : replicas) {
            record.replicas().add(replica);
            record.isr().add(replica);
        }
        return record;
    }

    static PartitionChangeRecord partitionChange(UUID topicId, int index) {
        return new PartitionChangeRecord().setTopicId(topicId).setPartitionId(index);
    }

    static List<Integer> list(int... values) {
        List<Integer> list = new ArrayList<>();
        for (int value : values) {
            list.add(value);
        }
        return list;
    }

    /** Writes the record as the metadata log stores it (frame, type, highest version) and reads it back. */
    static ApiMessage throughBytes(ApiMessage record) {
        return MetadataRecords.decode(ByteBuffer.wrap(MetadataRecords.encode(record)));
    }
}
