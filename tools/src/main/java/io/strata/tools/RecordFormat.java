package io.strata.tools;

import io.strata.protocol.records.Header;
import io.strata.tools.client.ConsumedRecord;
import picocli.CommandLine;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.Locale;

/**
 * How {@code strata consume} prints a record, one line each. Keys, values and header values
 * are shown as UTF-8 text (invalid bytes become U+FFFD); a missing key or value prints as
 * {@code null}, as Kafka's console consumer prints it.
 */
enum RecordFormat {
    /** The value. */
    VALUE("value") {
        @Override
        String format(ConsumedRecord record) {
            return text(record.value());
        }
    },
    /** Key, a tab, the value. */
    KEY_VALUE("key-value") {
        @Override
        String format(ConsumedRecord record) {
            return text(record.key()) + "\t" + text(record.value());
        }
    },
    /**
     * One JSON object: topic, partition, offset, timestamp, timestampType, key, value (strings
     * or null) and headers (an array of {"key", "value"} objects, in record order, so repeated
     * keys survive).
     */
    JSON("json") {
        @Override
        String format(ConsumedRecord record) {
            StringBuilder json = new StringBuilder(128).append("{\"topic\":");
            Json.appendString(json, record.topic())
                .append(",\"partition\":").append(record.partition())
                .append(",\"offset\":").append(record.offset())
                .append(",\"timestamp\":").append(record.timestamp())
                .append(",\"timestampType\":");
            Json.appendString(json, record.timestampType().toString()).append(",\"key\":");
            Json.appendString(json, record.key() == null ? null : decode(record.key())).append(",\"value\":");
            Json.appendString(json, record.value() == null ? null : decode(record.value())).append(",\"headers\":[");
            Iterator<Header> headers = record.headers().iterator();
            while (headers.hasNext()) {
                Header header = headers.next();
                json.append("{\"key\":");
                Json.appendString(json, header.key()).append(",\"value\":");
                Json.appendString(json, header.value() == null ? null : decode(header.value())).append('}');
                if (headers.hasNext()) {
                    json.append(',');
                }
            }
            return json.append("]}").toString();
        }
    };

    private final String optionName;

    RecordFormat(String optionName) {
        this.optionName = optionName;
    }

    abstract String format(ConsumedRecord record);

    String optionName() {
        return optionName;
    }

    private static String text(byte[] bytes) {
        return bytes == null ? "null" : decode(bytes);
    }

    private static String decode(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static String decode(ByteBuffer buffer) {
        return StandardCharsets.UTF_8.decode(buffer.duplicate()).toString();
    }

    /** Accepts the option names ("key-value"), case-insensitively. */
    static final class Converter implements CommandLine.ITypeConverter<RecordFormat> {
        @Override
        public RecordFormat convert(String value) {
            for (RecordFormat format : values()) {
                if (format.optionName.equals(value.toLowerCase(Locale.ROOT))) {
                    return format;
                }
            }
            throw new CommandLine.TypeConversionException("expected one of " + new Candidates() + ", got '" + value + "'");
        }
    }

    /** The option names, for picocli's help and completion. */
    static final class Candidates extends ArrayList<String> {
        private static final long serialVersionUID = 1L;

        Candidates() {
            for (RecordFormat format : values()) {
                add(format.optionName);
            }
        }
    }
}
