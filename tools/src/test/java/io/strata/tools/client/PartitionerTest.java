package io.strata.tools.client;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class PartitionerTest {
    @Test
    void murmur2MatchesKafkasPublishedValues() {
        // The cases of Kafka's own UtilsTest.testMurmur2.
        assertThat(Partitioner.murmur2("21".getBytes(StandardCharsets.UTF_8))).isEqualTo(-973932308);
        assertThat(Partitioner.murmur2("foobar".getBytes(StandardCharsets.UTF_8))).isEqualTo(-790332482);
        assertThat(Partitioner.murmur2("a-little-bit-long-string".getBytes(StandardCharsets.UTF_8))).isEqualTo(-985981536);
        assertThat(Partitioner.murmur2("a-little-bit-longer-string".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1486304829);
        assertThat(Partitioner.murmur2("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8".getBytes(StandardCharsets.UTF_8))).isEqualTo(-58897971);
        assertThat(Partitioner.murmur2(new byte[] {'a', 'b', 'c'})).isEqualTo(479470107);
    }

    @Test
    void murmur2MatchesKafkaForEveryLengthAndByteValue() {
        Random random = new Random(20240611L);
        for (int length = 0; length <= 64; length++) {
            for (int trial = 0; trial < 50; trial++) {
                byte[] data = new byte[length];
                random.nextBytes(data);
                assertThat(Partitioner.murmur2(data)).as("length %d trial %d", length, trial).isEqualTo(Utils.murmur2(data));
            }
        }
    }

    @Test
    void keyedPartitionMatchesKafkasDefaultPartitioner() {
        Random random = new Random(7L);
        for (int trial = 0; trial < 2000; trial++) {
            byte[] key = new byte[random.nextInt(40)];
            random.nextBytes(key);
            int partitions = 1 + random.nextInt(100);
            assertThat(Partitioner.partitionForKey(key, partitions)).isEqualTo(BuiltInPartitioner.partitionForKey(key, partitions));
            assertThat(new Partitioner(16384, random).partition(key, partitions, 10)).isEqualTo(BuiltInPartitioner.partitionForKey(key, partitions));
        }
    }

    @Test
    void toPositiveClearsTheSignBitLikeKafka() {
        for (int value : new int[] {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, -973932308}) {
            assertThat(Partitioner.toPositive(value)).isEqualTo(Utils.toPositive(value)).isNotNegative();
        }
    }

    @Test
    void unkeyedRecordsStickToOnePartitionUntilABatchWorthOfBytes() {
        Partitioner partitioner = new Partitioner(100, new Random(1L));
        List<Integer> chosen = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            chosen.add(partitioner.partition(null, 8, 30));
        }
        // 30-byte records: the partition may change only every fourth record (after 120 >= 100 bytes).
        for (int i = 0; i < chosen.size(); i++) {
            if (i % 4 != 0) {
                assertThat(chosen.get(i)).as("record %d", i).isEqualTo(chosen.get(i - 1));
            }
        }
        assertThat(chosen.stream().distinct().count()).isGreaterThan(1);
        assertThat(chosen).allMatch(partition -> partition >= 0 && partition < 8);
    }

    @Test
    void unkeyedChoiceIsRepeatableWithTheSameSeed() {
        Partitioner first = new Partitioner(64, new Random(99L));
        Partitioner second = new Partitioner(64, new Random(99L));
        for (int i = 0; i < 100; i++) {
            assertThat(first.partition(null, 5, 20)).isEqualTo(second.partition(null, 5, 20));
        }
    }

    @Test
    void aChangedPartitionCountPicksANewStickyPartition() {
        Partitioner partitioner = new Partitioner(1_000_000, new Random(3L));
        partitioner.partition(null, 50, 1);
        for (int i = 0; i < 20; i++) {
            assertThat(partitioner.partition(null, 2, 1)).isBetween(0, 1);
        }
    }
}
