package io.strata.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.strata.protocol.records.Header;
import io.strata.protocol.records.TimestampType;
import io.strata.tools.client.ConsumedRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class RecordFormatTest {
    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static ConsumedRecord record(byte[] key, byte[] value, List<Header> headers) {
        return new ConsumedRecord("orders", 2, 41L, 1_700_000_000_123L, TimestampType.CREATE_TIME, key, value, headers);
    }

    @Test
    void valueAndKeyValuePrintNullsAsKafkaDoes() {
        assertThat(RecordFormat.VALUE.format(record(utf8("k"), utf8("v"), List.of()))).isEqualTo("v");
        assertThat(RecordFormat.VALUE.format(record(null, null, List.of()))).isEqualTo("null");
        assertThat(RecordFormat.KEY_VALUE.format(record(utf8("k"), utf8("v"), List.of()))).isEqualTo("k\tv");
        assertThat(RecordFormat.KEY_VALUE.format(record(null, utf8(""), List.of()))).isEqualTo("null\t");
    }

    @Test
    void jsonCarriesEveryFieldAndParses() throws Exception {
        String line = RecordFormat.JSON.format(record(utf8("ключ"), utf8("a \"quoted\"\nvalue\u0001\\"),
            List.of(Header.of("h", utf8("1")), Header.of("h", null))));

        assertThat(line).doesNotContain("\n");
        JsonNode json = new ObjectMapper().readTree(line);
        assertThat(json.get("topic").asText()).isEqualTo("orders");
        assertThat(json.get("partition").asInt()).isEqualTo(2);
        assertThat(json.get("offset").asLong()).isEqualTo(41L);
        assertThat(json.get("timestamp").asLong()).isEqualTo(1_700_000_000_123L);
        assertThat(json.get("timestampType").asText()).isEqualTo("CreateTime");
        assertThat(json.get("key").asText()).isEqualTo("ключ");
        assertThat(json.get("value").asText()).isEqualTo("a \"quoted\"\nvalue\u0001\\");
        assertThat(json.get("headers").size()).isEqualTo(2);
        assertThat(json.get("headers").get(0).get("key").asText()).isEqualTo("h");
        assertThat(json.get("headers").get(0).get("value").asText()).isEqualTo("1");
        assertThat(json.get("headers").get(1).get("value").isNull()).isTrue();
    }

    @Test
    void jsonOfNullKeyAndValue() {
        assertThat(RecordFormat.JSON.format(record(null, null, List.of()))).isEqualTo(
            "{\"topic\":\"orders\",\"partition\":2,\"offset\":41,\"timestamp\":1700000000123,\"timestampType\":\"CreateTime\","
                + "\"key\":null,\"value\":null,\"headers\":[]}");
    }

    @Test
    void invalidUtf8BecomesReplacementCharacters() {
        assertThat(RecordFormat.VALUE.format(record(null, new byte[] {'a', (byte) 0xff, 'b'}, List.of()))).isEqualTo("a\uFFFDb");
    }
}
