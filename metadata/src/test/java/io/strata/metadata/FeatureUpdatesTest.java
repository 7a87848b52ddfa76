package io.strata.metadata;

import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.protocol.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Kafka 4.4's controller rules for UpdateFeatures, with the messages its controller gives (recorded against Kafka 4.4.0). */
class FeatureUpdatesTest {
    private static final Map<String, short[]> SUPPORTED = Map.of("metadata.version", new short[] {7, 33},
        "transaction.version", new short[] {0, 2}, "group.version", new short[] {0, 1}, "kraft.version", new short[] {0, 0});
    private static final Map<String, Short> FINALIZED = Map.of("metadata.version", (short) 33, "transaction.version", (short) 1,
        "group.version", (short) 1);
    private static final String PREFIX = "The update failed for all features since the following feature had an error: ";

    private static FeatureUpdates.Result validate(String name, int level, byte type) {
        return FeatureUpdates.validate(Map.of(name, new FeatureUpdates.Update((short) level, type)), FINALIZED, SUPPORTED, 1);
    }

    private static void assertRefused(FeatureUpdates.Result result, String message) {
        assertThat(result.error()).isEqualTo(ErrorCode.INVALID_UPDATE_VERSION);
        assertThat(result.message()).isEqualTo(PREFIX + message);
        assertThat(result.records()).isEmpty();
    }

    @Test
    void anUpgradeWithinTheSupportedRangeBecomesOneFeatureLevelRecord() {
        FeatureUpdates.Result result = validate("transaction.version", 2, FeatureUpdates.UPGRADE);
        assertThat(result.error()).isEqualTo(ErrorCode.NONE);
        assertThat(result.records()).containsExactly(new FeatureLevelRecord().setName("transaction.version").setFeatureLevel((short) 2));
        assertThat(validate("transaction.version", 1, FeatureUpdates.UPGRADE).records()).as("unchanged level: nothing to write").isEmpty();
    }

    @Test
    void levelsOutsideWhatTheControllerSupportsAreRefused() {
        assertRefused(validate("transaction.version", 3, FeatureUpdates.UPGRADE),
            "Invalid update version 3 for feature transaction.version. Local controller 1 only supports versions 0-2");
        assertRefused(validate("transaction.version", -1, FeatureUpdates.UPGRADE),
            "Invalid update version -1 for feature transaction.version. A feature version cannot be less than 0.");
        assertRefused(validate("foo.version", 1, FeatureUpdates.UPGRADE),
            "Invalid update version 1 for feature foo.version. Local controller 1 does not support this feature.");
        assertRefused(validate("foo.version", 0, FeatureUpdates.SAFE_DOWNGRADE), "Invalid update version 0 for feature foo.version. Feature foo.version not found.");
        assertRefused(validate("kraft.version", 1, FeatureUpdates.UPGRADE),
            "Invalid update version 1 for feature kraft.version. Local controller 1 only supports versions 0-0");
    }

    @Test
    void theUpgradeTypeMustMatchTheDirection() {
        assertRefused(validate("group.version", 0, FeatureUpdates.UPGRADE), "Invalid update version 0 for feature group.version. Can't downgrade "
            + "the version of this feature without setting the upgrade type to either safe or unsafe downgrade.");
        assertRefused(validate("transaction.version", 2, FeatureUpdates.SAFE_DOWNGRADE),
            "Invalid update version 2 for feature transaction.version. Can't downgrade to a newer version.");
        assertThat(validate("transaction.version", 0, FeatureUpdates.SAFE_DOWNGRADE).records())
            .containsExactly(new FeatureLevelRecord().setName("transaction.version").setFeatureLevel((short) 0));
        assertThat(validate("group.version", 0, FeatureUpdates.UNSAFE_DOWNGRADE).error()).isEqualTo(ErrorCode.NONE);
        assertThat(validate("group.version", 0, (byte) 4).error()).isEqualTo(ErrorCode.INVALID_REQUEST);
    }

    @Test
    void metadataVersionIsNeverLowered() {
        assertRefused(validate("metadata.version", 30, FeatureUpdates.SAFE_DOWNGRADE), "Invalid update version 30 for feature metadata.version. "
            + "Unsupported metadata.version downgrade from 33 to 30. Refusing to perform the requested downgrade because it might delete metadata information.");
        assertRefused(validate("metadata.version", 30, FeatureUpdates.UNSAFE_DOWNGRADE), "Invalid update version 30 for feature metadata.version. "
            + "Unsupported metadata.version downgrade from 33 to 30. Unsafe metadata downgrade is not supported in this version.");
    }

    @Test
    void oneRefusalFailsTheWholeUpdate() {
        Map<String, FeatureUpdates.Update> updates = new LinkedHashMap<>();
        updates.put("transaction.version", new FeatureUpdates.Update((short) 2, FeatureUpdates.UPGRADE));
        updates.put("foo.version", new FeatureUpdates.Update((short) 2, FeatureUpdates.UPGRADE));
        assertRefused(FeatureUpdates.validate(updates, FINALIZED, SUPPORTED, 1),
            "Invalid update version 2 for feature foo.version. Local controller 1 does not support this feature.");
    }
}
