package io.strata.generator;

/**
 * An inclusive range of protocol versions as written in the message schemas:
 * {@code "3"}, {@code "0-7"}, {@code "12+"} (open-ended) or {@code "none"} (empty).
 */
record Versions(short lowest, short highest) {
    static final Versions NONE = new Versions((short) 1, (short) 0);
    static final Versions ALL = new Versions((short) 0, Short.MAX_VALUE);

    static Versions parse(String text, Versions ifAbsent) {
        if (text == null) {
            return ifAbsent;
        }
        String trimmed = text.trim();
        if (trimmed.equals("none")) {
            return NONE;
        }
        if (trimmed.endsWith("+")) {
            return new Versions(Short.parseShort(trimmed.substring(0, trimmed.length() - 1)), Short.MAX_VALUE);
        }
        int dash = trimmed.indexOf('-');
        if (dash >= 0) {
            return new Versions(Short.parseShort(trimmed.substring(0, dash)), Short.parseShort(trimmed.substring(dash + 1)));
        }
        short single = Short.parseShort(trimmed);
        return new Versions(single, single);
    }

    boolean isEmpty() {
        return lowest > highest;
    }

    boolean contains(short version) {
        return version >= lowest && version <= highest;
    }

    /** True if every version of {@code other} is in this range. */
    boolean containsAll(Versions other) {
        return other.isEmpty() || (other.lowest >= lowest && other.highest <= highest);
    }

    Versions intersect(Versions other) {
        short low = (short) Math.max(lowest, other.lowest);
        short high = (short) Math.min(highest, other.highest);
        return low > high ? NONE : new Versions(low, high);
    }

    /**
     * A Java boolean expression over {@code var} that is true exactly for the versions of this
     * range that lie within {@code context} (the versions the surrounding code can see).
     */
    String condition(String var, Versions context) {
        Versions effective = intersect(context);
        if (effective.isEmpty()) {
            return "false";
        }
        boolean lowBound = effective.lowest > context.lowest;
        boolean highBound = effective.highest < context.highest;
        if (!lowBound && !highBound) {
            return "true";
        }
        if (lowBound && highBound) {
            return "(" + var + " >= " + effective.lowest + " && " + var + " <= " + effective.highest + ")";
        }
        return lowBound ? "(" + var + " >= " + effective.lowest + ")" : "(" + var + " <= " + effective.highest + ")";
    }

    @Override
    public String toString() {
        if (isEmpty()) {
            return "none";
        }
        if (highest == Short.MAX_VALUE) {
            return lowest + "+";
        }
        return lowest == highest ? Short.toString(lowest) : lowest + "-" + highest;
    }
}
