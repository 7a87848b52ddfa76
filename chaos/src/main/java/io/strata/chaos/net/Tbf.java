package io.strata.chaos.net;

import java.util.List;

/**
 * A bandwidth cap on a chaos node with a token bucket filter ({@code tc tbf}; {@code tc netem}
 * is not in the target kernel). The cap applies to both directions: the node's egress on
 * {@code eth0} inside its namespace and its ingress as the egress of the veth's root end.
 * {@link #limit} runs (RATE in kbit/s, BURST in bytes, see {@link #burstBytes}):
 * <pre>
 *   ip netns exec NS tc qdisc replace dev eth0 root tbf rate RATEkbit burst BURST latency 100ms
 *   tc qdisc replace dev NS root tbf rate RATEkbit burst BURST latency 100ms
 * </pre>
 * {@link #clear} runs {@code tc qdisc del dev ... root} on both, only where {@code tc qdisc show}
 * names a tbf qdisc (the default qdisc cannot be deleted).
 *
 * <p>Stateless and thread-safe; concurrent calls for one node leave whichever ran last.
 */
public final class Tbf {
    /** How long a packet may wait for tokens before it is dropped: a bound on the queue, not a delay. */
    public static final int LATENCY_MS = 100;
    /** The smallest bucket: it must hold at least one full-size packet plus the timer granularity's worth. */
    public static final int BURST_BYTES_MIN = 16 * 1024;

    private Tbf() {
    }

    /** Caps {@code ns}'s traffic to {@code rateKbit} kbit/s each way. */
    public static void limit(NetNs ns, int rateKbit) {
        if (rateKbit < 8) {
            throw new IllegalArgumentException("rateKbit must be at least 8: rateKbit=" + rateKbit);
        }
        List<String> tbf = List.of("root", "tbf", "rate", rateKbit + "kbit", "burst", Integer.toString(burstBytes(rateKbit)),
            "latency", LATENCY_MS + "ms");
        ns.run(concat(List.of("tc", "qdisc", "replace", "dev", "eth0"), tbf));
        Commands.run(concat(List.of("tc", "qdisc", "replace", "dev", ns.rootVeth()), tbf));
    }

    /** Removes the caps of {@link #limit}. Idempotent. */
    public static void clear(NetNs ns) {
        if (ns.run(List.of("tc", "qdisc", "show", "dev", "eth0")).contains("tbf")) {
            ns.run(List.of("tc", "qdisc", "del", "dev", "eth0", "root"));
        }
        if (Commands.run(List.of("tc", "qdisc", "show", "dev", ns.rootVeth())).contains("tbf")) {
            Commands.run(List.of("tc", "qdisc", "del", "dev", ns.rootVeth(), "root"));
        }
    }

    /** A tenth of a second's worth of tokens, at least {@link #BURST_BYTES_MIN}. */
    static int burstBytes(int rateKbit) {
        long bytesPerTenthSecond = rateKbit * 1000L / 8 / 10;
        return (int) Math.max(BURST_BYTES_MIN, Math.min(Integer.MAX_VALUE, bytesPerTenthSecond));
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new java.util.ArrayList<>(first);
        all.addAll(second);
        return all;
    }
}
