package io.strata.metadata;

import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.metadata.record.NoOpRecord;
import io.strata.metadata.record.PartitionChangeRecord;
import io.strata.metadata.record.ProducerIdsRecord;
import io.strata.metadata.record.RegisterControllerRecord;
import io.strata.metadata.record.RemoveTopicRecord;
import io.strata.metadata.record.UnregisterBrokerRecord;
import io.strata.protocol.ApiMessage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static io.strata.metadata.TestRecords.change;
import static io.strata.metadata.TestRecords.fence;
import static io.strata.metadata.TestRecords.partition;
import static io.strata.metadata.TestRecords.partitionChange;
import static io.strata.metadata.TestRecords.register;
import static io.strata.metadata.TestRecords.throughBytes;
import static io.strata.metadata.TestRecords.topic;
import static io.strata.metadata.TestRecords.unfence;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * MetadataImage.toRecords is a faithful snapshot: for images built from seeded random record
 * sequences, replaying the records (through their encoding) on the empty image gives an equal image.
 */
class MetadataImageSnapshotTest {
    private static final int SEEDS = 300;
    private static final int BATCHES_PER_SEED = 40;
    private static final String[] RACKS = {"a", "b", "c", null};
    private static final String[] TOPICS = {"orders", "payments", "__consumer_offsets", "t0", "t1", "t2"};

    @Test
    void theEmptyImageIsItsOwnSnapshot() {
        assertThat(MetadataImage.EMPTY.toRecords()).isEmpty();
        assertThat(MetadataImage.EMPTY.apply(List.of(), -1)).isEqualTo(MetadataImage.EMPTY);
    }

    @Test
    void replayingTheRecordsOfAnImageGivesAnEqualImage() {
        for (int seed = 0; seed < SEEDS; seed++) {
            Random random = new Random(seed);
            MetadataImage image = MetadataImage.EMPTY;
            for (int batch = 0; batch < BATCHES_PER_SEED; batch++) {
                List<ApiMessage> records = new ArrayList<>();
                int size = 1 + random.nextInt(4);
                MetadataImage next = image;
                for (int i = 0; i < size; i++) {
                    ApiMessage record = randomRecord(next, random, seed, batch * 10 + i);
                    records.add(record);
                    next = next.apply(List.of(record), next.offset() + 1);
                }
                MetadataImage whole = image.apply(records, image.offset() + size);
                assertThat(whole).as("seed %d batch %d: one batch or record by record", seed, batch).isEqualTo(next);
                image = whole;
                assertRoundTrip(image, seed, batch);
            }
        }
    }

    private static void assertRoundTrip(MetadataImage image, int seed, int batch) {
        List<ApiMessage> snapshot = image.toRecords();
        List<ApiMessage> decoded = new ArrayList<>();
        for (ApiMessage record : snapshot) {
            decoded.add(throughBytes(record));
        }
        MetadataImage replayed = MetadataImage.EMPTY.apply(decoded, image.offset());
        assertThat(replayed).as("seed %d batch %d", seed, batch).isEqualTo(image);
        assertThat(replayed.hashCode()).isEqualTo(image.hashCode());
        assertThat(replayed.toRecords()).as("seed %d batch %d: the snapshot of the replay", seed, batch).isEqualTo(snapshot);
    }

    private static ApiMessage randomRecord(MetadataImage image, Random random, int seed, int serial) {
        long nextOffset = image.offset() + 1;
        switch (random.nextInt(13)) {
            case 0:
                return register(random.nextInt(6), nextOffset, RACKS[random.nextInt(RACKS.length)], random.nextBoolean());
            case 1: case 2: {
                BrokerRegistration broker = randomBroker(image, random);
                if (broker == null) {
                    return new NoOpRecord();
                }
                long epoch = random.nextInt(5) == 0 ? broker.epoch() + 1 : broker.epoch();
                return switch (random.nextInt(4)) {
                    case 0 -> fence(broker.id(), epoch);
                    case 1 -> unfence(broker.id(), epoch);
                    case 2 -> change(broker.id(), epoch, random.nextInt(3) - 1, random.nextInt(2));
                    default -> random.nextInt(3) == 0 ? new UnregisterBrokerRecord().setBrokerId(broker.id()).setBrokerEpoch(epoch)
                        : change(broker.id(), epoch, 0, 1);
                };
            }
            case 3: {
                RegisterControllerRecord record = new RegisterControllerRecord().setControllerId(3000 + random.nextInt(3))
                    .setIncarnationId(new UUID(seed, serial));
                for (int i = random.nextInt(3); i > 0; i--) {
                    record.endPoints().add(new RegisterControllerRecord.ControllerEndpoint().setName("CONTROLLER" + i).setHost("c" + i)
                        .setPort(9093 + i).setSecurityProtocol((short) random.nextInt(2)));
                }
                return record;
            }
            case 4: {
                String name = TOPICS[random.nextInt(TOPICS.length)];
                return image.topic(name) == null ? topic(name, new UUID(seed + 1L, serial)) : new NoOpRecord();
            }
            case 5: case 6: {
                TopicImage topic = randomTopic(image, random);
                if (topic == null) {
                    return new NoOpRecord();
                }
                int index = random.nextInt(4);
                return topic.partition(index) == null ? partition(topic.id(), index, randomReplicas(random)) : randomChange(topic, index, random);
            }
            case 7: {
                TopicImage topic = randomTopic(image, random);
                return topic == null ? new NoOpRecord() : new RemoveTopicRecord().setTopicId(topic.id());
            }
            case 8: {
                TopicImage topic = randomTopic(image, random);
                boolean forTopic = topic != null && random.nextBoolean();
                return new ConfigRecord().setResourceType(forTopic ? ConfigResource.TOPIC : ConfigResource.BROKER)
                    .setResourceName(forTopic ? topic.name() : random.nextBoolean() ? "" : String.valueOf(random.nextInt(3)))
                    .setName("key" + random.nextInt(3)).setValue(random.nextInt(3) == 0 ? null : "v" + serial);
            }
            case 9:
                return new FeatureLevelRecord().setName("feature" + random.nextInt(3)).setFeatureLevel((short) random.nextInt(3));
            case 10:
                return new ProducerIdsRecord().setBrokerId(random.nextInt(3)).setBrokerEpoch(random.nextInt(9))
                    .setNextProducerId(random.nextInt(5000));
            case 11: {
                TopicImage topic = randomTopic(image, random);
                return new io.strata.metadata.record.ClearElrRecord().setTopicName(topic == null || random.nextBoolean() ? "" : topic.name());
            }
            default:
                return new NoOpRecord();
        }
    }

    private static PartitionChangeRecord randomChange(TopicImage topic, int index, Random random) {
        PartitionRegistration current = topic.partition(index);
        PartitionChangeRecord change = partitionChange(topic.id(), index);
        int leaderChoice = random.nextInt(3);
        if (leaderChoice == 1) {
            change.setLeader(-1);
        } else if (leaderChoice == 2 && current.replicas().length > 0) {
            change.setLeader(current.replicas()[random.nextInt(current.replicas().length)]);
        }
        if (random.nextBoolean()) {
            List<Integer> isr = new ArrayList<>();
            for (int replica : current.replicas()) {
                if (random.nextBoolean()) {
                    isr.add(replica);
                }
            }
            change.setIsr(isr);
        }
        if (random.nextInt(4) == 0) {
            change.setReplicas(TestRecords.list(randomReplicas(random)));
        }
        // Kafka's tagged fields (reassignment, KIP-966, KIP-704) must survive a snapshot as well.
        if (random.nextInt(4) == 0) {
            change.setEligibleLeaderReplicas(randomSubset(current.replicas(), random));
        }
        if (random.nextInt(4) == 0) {
            change.setLastKnownElr(randomSubset(current.replicas(), random));
        }
        if (random.nextInt(6) == 0) {
            change.setAddingReplicas(randomSubset(current.replicas(), random));
        }
        if (random.nextInt(6) == 0) {
            change.setRemovingReplicas(randomSubset(current.replicas(), random));
        }
        if (random.nextInt(5) == 0) {
            change.setLeaderRecoveryState((byte) random.nextInt(2));
        }
        return change;
    }

    private static List<Integer> randomSubset(int[] replicas, Random random) {
        List<Integer> subset = new ArrayList<>();
        for (int replica : replicas) {
            if (random.nextBoolean()) {
                subset.add(replica);
            }
        }
        return subset;
    }

    private static int[] randomReplicas(Random random) {
        List<Integer> ids = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5));
        java.util.Collections.shuffle(ids, random);
        int count = 1 + random.nextInt(3);
        int[] replicas = new int[count];
        for (int i = 0; i < count; i++) {
            replicas[i] = ids.get(i);
        }
        return replicas;
    }

    private static BrokerRegistration randomBroker(MetadataImage image, Random random) {
        List<BrokerRegistration> brokers = new ArrayList<>(image.brokers().values());
        brokers.sort(java.util.Comparator.comparingInt(BrokerRegistration::id));
        return brokers.isEmpty() ? null : brokers.get(random.nextInt(brokers.size()));
    }

    private static TopicImage randomTopic(MetadataImage image, Random random) {
        List<String> names = new ArrayList<>(image.topicsByName().keySet());
        names.sort(null);
        return names.isEmpty() ? null : image.topic(names.get(random.nextInt(names.size())));
    }
}
