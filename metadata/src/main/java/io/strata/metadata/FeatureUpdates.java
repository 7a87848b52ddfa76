package io.strata.metadata;

import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Validates a set of finalized-feature changes (UpdateFeatures, KIP-584/KIP-778) against the
 * current levels and this node's supported ranges, and turns them into FeatureLevelRecords.
 * The rules and the messages are Kafka 4.4's controller's, checked feature by feature in the
 * order given; the first refusal fails the whole update (nothing is written), as in Kafka:
 *
 * <pre>
 *   level &lt; 0                               INVALID_UPDATE_VERSION  "A feature version cannot be less than 0."
 *   unknown feature, level 0                 INVALID_UPDATE_VERSION  "Feature F not found."
 *   unknown feature                          INVALID_UPDATE_VERSION  "Local controller N does not support this feature."
 *   level outside the supported range        INVALID_UPDATE_VERSION  "Local controller N only supports versions MIN-MAX"
 *   level below current with UPGRADE         INVALID_UPDATE_VERSION  "Can't downgrade the version of this feature without ..."
 *   level above current with a downgrade     INVALID_UPDATE_VERSION  "Can't downgrade to a newer version."
 *   metadata.version lowered                 INVALID_UPDATE_VERSION  "Unsupported metadata.version downgrade from A to B. ..."
 * </pre>
 *
 * Level 0 removes the feature (a FeatureLevelRecord at 0 is a deletion when applied). Kafka also
 * checks the dependencies between features (transaction.version 2 and group.version 1 need a
 * metadata.version of Kafka 4.0 or later); Strata's metadata.version can only be 4.4-IV2 (33)
 * from above, so no such dependency can be broken here. Pure; not thread-safe only in that the
 * maps passed in must not change during the call.
 */
public final class FeatureUpdates {
    public static final String METADATA_VERSION = "metadata.version";

    /** Kafka's FeatureUpdate.UpgradeType codes (UpdateFeatures v1+). */
    public static final byte UPGRADE = 1;
    public static final byte SAFE_DOWNGRADE = 2;
    public static final byte UNSAFE_DOWNGRADE = 3;

    private static final String ALL_FAILED = "The update failed for all features since the following feature had an error: ";

    /** One requested change: the new maximum level and the upgrade type code. */
    public record Update(short level, byte upgradeType) {
    }

    /** NONE with the records to write, or the error that refused the whole update. */
    public record Result(ErrorCode error, String message, List<ApiMessage> records) {
        static Result refused(ErrorCode error, String message) {
            return new Result(error, message, List.of());
        }
    }

    private FeatureUpdates() {
    }

    /**
     * @param finalized the current finalized levels (a feature not present is at level 0)
     * @param supported feature name → {min, max} this node supports
     * @param nodeId    the controller's id, for Kafka's messages
     */
    public static Result validate(Map<String, Update> updates, Map<String, Short> finalized, Map<String, short[]> supported, int nodeId) {
        List<ApiMessage> records = new ArrayList<>();
        for (Map.Entry<String, Update> entry : new LinkedHashMap<>(updates).entrySet()) {
            String name = entry.getKey();
            Update update = entry.getValue();
            if (update.upgradeType() < UPGRADE || update.upgradeType() > UNSAFE_DOWNGRADE) {
                return Result.refused(ErrorCode.INVALID_REQUEST, "Unknown upgrade type " + update.upgradeType() + " for feature " + name);
            }
            String reason = refusal(name, update, finalized.getOrDefault(name, (short) 0), supported.get(name), nodeId);
            if (reason != null) {
                return Result.refused(ErrorCode.INVALID_UPDATE_VERSION,
                    ALL_FAILED + "Invalid update version " + update.level() + " for feature " + name + ". " + reason);
            }
            if (update.level() != finalized.getOrDefault(name, (short) 0)) {
                records.add(new FeatureLevelRecord().setName(name).setFeatureLevel(update.level()));
            }
        }
        return new Result(ErrorCode.NONE, null, records);
    }

    private static String refusal(String name, Update update, short current, short[] range, int nodeId) {
        short level = update.level();
        if (level < 0) {
            return "A feature version cannot be less than 0.";
        }
        if (range == null) {
            return level == 0 ? "Feature " + name + " not found." : "Local controller " + nodeId + " does not support this feature.";
        }
        if (level < range[0] || level > range[1]) {
            return "Local controller " + nodeId + " only supports versions " + range[0] + "-" + range[1];
        }
        if (level < current && update.upgradeType() == UPGRADE) {
            return "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.";
        }
        if (level > current && update.upgradeType() != UPGRADE) {
            return "Can't downgrade to a newer version.";
        }
        if (name.equals(METADATA_VERSION) && level < current) {
            // Strata's metadata records have one format; Kafka refuses every metadata.version downgrade in 4.4 as well.
            return "Unsupported metadata.version downgrade from " + current + " to " + level + ". "
                + (update.upgradeType() == UNSAFE_DOWNGRADE ? "Unsafe metadata downgrade is not supported in this version."
                    : "Refusing to perform the requested downgrade because it might delete metadata information.");
        }
        return null;
    }
}
