package io.strata.tools;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DateTimesTest {
    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");
    private static final long NOON_UTC = Instant.parse("2024-05-01T12:00:00Z").toEpochMilli();

    @Test
    void acceptsKafkasFormsWithAndWithoutZones() {
        assertThat(DateTimes.parseEpochMs("2024-05-01T12:00:00.000Z", PARIS)).isEqualTo(NOON_UTC);
        assertThat(DateTimes.parseEpochMs("2024-05-01T14:00:00+02:00", PARIS)).isEqualTo(NOON_UTC);
        assertThat(DateTimes.parseEpochMs("2024-05-01T14:00:00.000+0200", PARIS)).isEqualTo(NOON_UTC);
        assertThat(DateTimes.parseEpochMs("2024-05-01T14:00", PARIS)).isEqualTo(NOON_UTC); // CEST: UTC+2
        assertThat(DateTimes.parseEpochMs("2024-05-01T12:00:00.250Z", PARIS)).isEqualTo(NOON_UTC + 250);
        assertThat(DateTimes.parseEpochMs("2024-05-01", ZoneId.of("UTC"))).isEqualTo(NOON_UTC - 12 * 3600_000L);
    }

    @Test
    void rejectsAnythingElseNamingTheText() {
        assertThatThrownBy(() -> DateTimes.parseEpochMs("yesterday", PARIS))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'yesterday'");
    }
}
