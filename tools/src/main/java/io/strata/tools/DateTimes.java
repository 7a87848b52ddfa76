package io.strata.tools;

import picocli.CommandLine;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;

/**
 * Date-times the CLI accepts, as Kafka's tools accept them (ISO 8601, {@code YYYY-MM-DDTHH:mm:SS.sss}
 * with an optional zone): {@code 2024-05-01T12:00:00Z}, {@code 2024-05-01T14:00:00.000+02:00},
 * {@code 2024-05-01T14:00:00+0200}, or without a zone {@code 2024-05-01T12:00:00} and
 * {@code 2024-05-01}, read in the given (the system's) time zone. Seconds and fractions are optional.
 */
final class DateTimes {
    /** ISO local date-time followed by an offset without a colon, "+0200", which Kafka also accepts. */
    private static final DateTimeFormatter COMPACT_OFFSET = new DateTimeFormatterBuilder()
        .append(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
        .appendOffset("+HHMM", "Z")
        .toFormatter();

    private DateTimes() {
    }

    /**
     * Epoch milliseconds of {@code text}; without a zone the time is read in {@code zone}.
     *
     * @throws IllegalArgumentException naming the text if it is none of the accepted forms
     */
    static long parseEpochMs(String text, ZoneId zone) {
        String trimmed = text.trim();
        try {
            return OffsetDateTime.parse(trimmed).toInstant().toEpochMilli();
        } catch (DateTimeParseException notOffset) {
            // Try the next form.
        }
        try {
            return OffsetDateTime.parse(trimmed, COMPACT_OFFSET).toInstant().toEpochMilli();
        } catch (DateTimeParseException notCompactOffset) {
            // Try the next form.
        }
        try {
            return LocalDateTime.parse(trimmed).atZone(zone).toInstant().toEpochMilli();
        } catch (DateTimeParseException notLocal) {
            // Try the next form.
        }
        try {
            return LocalDate.parse(trimmed).atStartOfDay(zone).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("expected an ISO 8601 date-time such as 2024-05-01T12:00:00.000Z or "
                + "2024-05-01T14:00:00+02:00, got '" + text + "'", e);
        }
    }

    /** Picocli converter to epoch milliseconds in the system's time zone. */
    static final class Converter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return parseEpochMs(value, ZoneId.systemDefault());
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
