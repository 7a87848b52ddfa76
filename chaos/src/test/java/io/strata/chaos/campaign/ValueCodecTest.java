package io.strata.chaos.campaign;

import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

class ValueCodecTest {

    @Test
    void readsDecimalStringsAndEightByteLongs() {
        try (StringSerializer strings = new StringSerializer(); LongSerializer longs = new LongSerializer()) {
            for (long value : new long[] {0, 7, 12_345_678, 99_999_999, Long.MAX_VALUE, -3}) {
                assertThat(ValueCodec.decode(strings.serialize("t", Long.toString(value)))).hasValue(value);
                assertThat(ValueCodec.decode(longs.serialize("t", value))).hasValue(value);
            }
        }
    }

    @Test
    void refusesWhatIsNeither() {
        assertThat(ValueCodec.decode(null)).isEqualTo(OptionalLong.empty());
        assertThat(ValueCodec.decode(new byte[0])).isEmpty();
        assertThat(ValueCodec.decode("-".getBytes(StandardCharsets.US_ASCII))).isEmpty();
        assertThat(ValueCodec.decode("12a".getBytes(StandardCharsets.US_ASCII))).isEmpty();
        assertThat(ValueCodec.decode(new byte[] {1, 2, 3})).isEmpty();
        assertThat(ValueCodec.decode("12345678901234567890".getBytes(StandardCharsets.US_ASCII))).isEmpty();
    }
}
