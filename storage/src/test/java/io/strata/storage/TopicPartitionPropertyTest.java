package io.strata.storage;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import static org.assertj.core.api.Assertions.assertThat;

class TopicPartitionPropertyTest {

    @Property(tries = 500)
    void parseInvertsToString(@ForAll("topics") String topic, @ForAll @IntRange(min = 0) int partition) {
        TopicPartition topicPartition = new TopicPartition(topic, partition);
        assertThat(TopicPartition.parse(topicPartition.toString())).isEqualTo(topicPartition);
    }

    @Provide
    Arbitrary<String> topics() {
        return Arbitraries.strings().withChars("abcXYZ019._-").ofMinLength(1).ofMaxLength(40);
    }
}
