package io.strata.chaos.nemesis;

import java.util.Objects;

/**
 * One line of {@code nemesis.log}.
 *
 * @param elapsedMs since the schedule started
 * @param wallMs wall-clock time, for lining up with the history's {@code wallMs}
 * @param nemesis the nemesis name, or {@code cluster} for the final restore
 * @param type what happened
 * @param description what was done (or why not)
 */
public record NemesisEvent(long elapsedMs, long wallMs, String nemesis, Type type, String description) {

    /** START: a fault began; HEAL: it ended; SKIP: a start declined; ERROR: a start or heal threw. */
    public enum Type { START, HEAL, SKIP, ERROR }

    public NemesisEvent {
        Objects.requireNonNull(nemesis, "nemesis");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(description, "description");
    }

    /** The event as its {@code nemesis.log} line: {@code ISO-time +elapsed TYPE nemesis: description}. */
    public String line() {
        return java.time.Instant.ofEpochMilli(wallMs) + String.format(java.util.Locale.ROOT, " +%d.%03ds ", elapsedMs / 1000, elapsedMs % 1000)
            + type + " " + nemesis + ": " + description;
    }
}
