package io.strata.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopicPartitionTest {

    @Test
    void directoryNameIsTopicDashPartition() {
        assertThat(new TopicPartition("orders", 3)).hasToString("orders-3");
        assertThat(TopicPartition.parse("orders-3")).isEqualTo(new TopicPartition("orders", 3));
    }

    @Test
    void parseSplitsOnTheLastDash() {
        assertThat(TopicPartition.parse("my-topic-12")).isEqualTo(new TopicPartition("my-topic", 12));
        assertThat(TopicPartition.parse("__consumer_offsets-49")).isEqualTo(new TopicPartition("__consumer_offsets", 49));
        assertThat(TopicPartition.parse("a--1")).isEqualTo(new TopicPartition("a-", 1));
        assertThat(TopicPartition.parse("t-2147483647").partition()).isEqualTo(Integer.MAX_VALUE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "orders", "-1", "orders-", "orders-x", "orders-01", "orders-+1", "orders-2147483648",
        "orders-3.abc-delete", "orders-99999999999"})
    void malformedDirectoryNamesAreRejected(String dirName) {
        assertThatThrownBy(() -> TopicPartition.parse(dirName)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(dirName);
    }

    @Test
    void emptyTopicAndNegativePartitionAreRejected() {
        assertThatThrownBy(() -> new TopicPartition("", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TopicPartition("t", -1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("partition=-1");
    }
}
