package io.strata.chaos.net;

import java.util.List;

/**
 * The Linux bridge {@code strata-chaos0} in the root namespace that every node namespace's veth
 * is attached to, with the address {@link #ADDRESS}/16, so the test JVM in the root namespace
 * reaches every node at 10.77.RUN.NODE and the nodes reach each other through it.
 *
 * <p>Commands, in order:
 * <pre>
 *   ensure():        ip link add strata-chaos0 type bridge          (only if `ip link show strata-chaos0` fails)
 *                    ip addr replace 10.77.0.1/16 dev strata-chaos0
 *                    ip link set strata-chaos0 up
 *   deleteIfUnused(): ip -o link show master strata-chaos0           (no ports left?)
 *                    ip link del strata-chaos0
 * </pre>
 * The bridge is the only object the harness creates in the root namespace besides the root ends
 * of its veths; nothing else there is touched.
 *
 * <p>Stateless; callers serialise creation and deletion (one cluster per JVM at a time).
 */
public final class ChaosBridge {
    /** The bridge's name. */
    public static final String NAME = "strata-chaos0";
    /** The bridge's own address, the root namespace's address on the chaos network. */
    public static final String ADDRESS = "10.77.0.1";
    /** The chaos network's prefix length: 10.77.0.0/16 holds every run's nodes. */
    public static final int PREFIX_LENGTH = 16;

    private ChaosBridge() {
    }

    /** Creates the bridge if it does not exist, and makes sure it has its address and is up. */
    public static synchronized void ensure() {
        if (Commands.runAllowingFailure(List.of("ip", "link", "show", NAME)).exitCode() != 0) {
            Commands.run(List.of("ip", "link", "add", NAME, "type", "bridge"));
        }
        Commands.run(List.of("ip", "addr", "replace", ADDRESS + "/" + PREFIX_LENGTH, "dev", NAME));
        Commands.run(List.of("ip", "link", "set", NAME, "up"));
    }

    /** Deletes the bridge when no veth is attached to it any more; a missing bridge is fine. */
    public static synchronized void deleteIfUnused() {
        Commands.Result ports = Commands.runAllowingFailure(List.of("ip", "-o", "link", "show", "master", NAME));
        if (ports.exitCode() != 0 || !ports.stdout().isBlank()) {
            return;
        }
        Commands.runAllowingFailure(List.of("ip", "link", "del", NAME));
    }
}
