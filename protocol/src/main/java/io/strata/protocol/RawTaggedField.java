package io.strata.protocol;

import java.util.Arrays;

/** A tagged field this code does not know, kept as bytes so that re-encoding preserves it. */
public record RawTaggedField(int tag, byte[] data) {
    @Override
    public boolean equals(Object other) {
        return other instanceof RawTaggedField that && tag == that.tag && Arrays.equals(data, that.data);
    }

    @Override
    public int hashCode() {
        return 31 * tag + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "RawTaggedField(tag=" + tag + ", " + data.length + " bytes)";
    }
}
