package io.strata.tools.client;

import io.strata.protocol.ErrorCode;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class KafkaErrorsTest {
    @Test
    void defaultMessagesAreKafkasOwn() {
        assertThat(KafkaErrors.defaultMessages()).isNotEmpty();
        for (Map.Entry<ErrorCode, String> entry : KafkaErrors.defaultMessages().entrySet()) {
            Errors kafka = Errors.forCode(entry.getKey().code());
            assertThat(kafka.name()).isEqualTo(entry.getKey().name());
            assertThat(entry.getValue()).as(kafka.name()).isEqualTo(kafka.message());
        }
    }

    @Test
    void describePrefersTheBrokersMessage() {
        assertThat(KafkaErrors.describe(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'a' already exists."))
            .isEqualTo("TOPIC_ALREADY_EXISTS: Topic 'a' already exists.");
        assertThat(KafkaErrors.describe(ErrorCode.TOPIC_ALREADY_EXISTS, null))
            .isEqualTo("TOPIC_ALREADY_EXISTS: Topic with this name already exists.");
        assertThat(KafkaErrors.describe(ErrorCode.TOPIC_ALREADY_EXISTS, " "))
            .isEqualTo("TOPIC_ALREADY_EXISTS: Topic with this name already exists.");
    }

    @Test
    void codesWithoutADefaultAreNamedAlone() {
        assertThat(KafkaErrors.describe(ErrorCode.REBALANCE_IN_PROGRESS, null)).isEqualTo("REBALANCE_IN_PROGRESS");
    }
}
