package io.strata.protocol;

import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ErrorCodeTest {
    @Test
    void everyKafkaErrorHasTheSameCodeNameAndRetriability() {
        for (Errors kafka : Errors.values()) {
            ErrorCode ours = ErrorCode.valueOf(kafka.name());
            assertThat(ours.code()).as(kafka.name()).isEqualTo(kafka.code());
            assertThat(ours.isRetriable()).as(kafka.name() + " retriable")
                .isEqualTo(kafka.exception() instanceof RetriableException);
        }
        assertThat(ErrorCode.values()).hasSameSizeAs(Errors.values());
    }

    @Test
    void unknownCodesMapToUnknownServerError() {
        assertThat(ErrorCode.forCode((short) 9999)).isEqualTo(ErrorCode.UNKNOWN_SERVER_ERROR);
        assertThat(ErrorCode.forCode((short) -7)).isEqualTo(ErrorCode.UNKNOWN_SERVER_ERROR);
        assertThat(ErrorCode.forCode((short) 35)).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
    }
}
