package io.strata.chaos.net;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One network namespace per chaos node, {@code sc<run>n<node>}, joined to the bridge
 * {@link ChaosBridge#NAME} by a veth pair: the root end is named like the namespace
 * ({@code sc<run>n<node>}, at most 15 characters), the namespace end {@code eth0} with the
 * address {@code 10.77.<run>.<node>/16}; loopback is up.
 *
 * <p>{@link #create} runs, in order (first removing a leftover of a killed run by name, see
 * {@link #deleteIfExists}):
 * <pre>
 *   ip netns add sc1n2
 *   ip link add sc1n2 type veth peer name eth0 netns sc1n2
 *   ip link set sc1n2 master strata-chaos0 up
 *   ip -n sc1n2 addr add 10.77.1.2/16 dev eth0
 *   ip -n sc1n2 link set eth0 up
 *   ip -n sc1n2 link set lo up
 * </pre>
 * {@link #close} runs {@code ip link del sc1n2} (removing both veth ends at once; a namespace's
 * own teardown is asynchronous), {@code ip netns pids sc1n2} and {@code kill -9} of each process
 * left inside, and {@code ip netns del sc1n2}.
 *
 * <p>Thread-safe: immutable apart from the namespace it owns, which only {@link #close} removes.
 */
public final class NetNs implements AutoCloseable {
    /** Runs and nodes are numbered 1..254: they are octets of the node's address. */
    public static final int ID_MAX = 254;

    private final int run;
    private final int node;
    private final String name;

    private NetNs(int run, int node) {
        this.run = run;
        this.node = node;
        this.name = name(run, node);
    }

    /** The namespace (and root veth) name of {@code node} in {@code run}. */
    public static String name(int run, int node) {
        checkId("run", run);
        checkId("node", node);
        return "sc" + run + "n" + node;
    }

    /** Creates the bridge if needed and the namespace of {@code node} in {@code run}. */
    public static NetNs create(int run, int node) {
        NetNs ns = new NetNs(run, node);
        ChaosBridge.ensure();
        deleteIfExists(run, node);
        String name = ns.name;
        Commands.run(List.of("ip", "netns", "add", name));
        try {
            Commands.run(List.of("ip", "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", name));
            Commands.run(List.of("ip", "link", "set", name, "master", ChaosBridge.NAME, "up"));
            Commands.run(List.of("ip", "-n", name, "addr", "add", ns.address() + "/" + ChaosBridge.PREFIX_LENGTH, "dev", "eth0"));
            Commands.run(List.of("ip", "-n", name, "link", "set", "eth0", "up"));
            Commands.run(List.of("ip", "-n", name, "link", "set", "lo", "up"));
        } catch (RuntimeException e) {
            ns.close();
            throw e;
        }
        return ns;
    }

    /** Removes the veth and namespace of {@code node} in {@code run} left by an earlier, killed run; absent ones are fine. */
    public static void deleteIfExists(int run, int node) {
        String name = name(run, node);
        if (Commands.runAllowingFailure(List.of("ip", "link", "show", name)).exitCode() == 0) {
            Commands.run(List.of("ip", "link", "del", name));
        }
        Commands.Result pids = Commands.runAllowingFailure(List.of("ip", "netns", "pids", name));
        if (pids.exitCode() == 0) {
            // Processes of a killed run still inside the namespace are the harness's own nodes.
            for (String pid : pids.stdout().strip().split("\\s+")) {
                if (!pid.isEmpty()) {
                    Commands.runAllowingFailure(List.of("kill", "-9", pid));
                }
            }
            Commands.run(List.of("ip", "netns", "del", name));
        }
    }

    public int run() {
        return run;
    }

    public int node() {
        return node;
    }

    /** The namespace's name, {@code sc<run>n<node>}, also the name of the veth's root end. */
    public String name() {
        return name;
    }

    /** The root end of the veth pair (in the root namespace, attached to the bridge). */
    public String rootVeth() {
        return name;
    }

    /** The node's address, {@code 10.77.<run>.<node>}. */
    public String address() {
        return "10.77." + run + "." + node;
    }

    /** The command line that runs {@code command} inside this namespace: {@code ip netns exec NAME command...}. */
    public List<String> execCommand(List<String> command) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(command);
        return full;
    }

    /**
     * Starts {@code command} in this namespace through {@code ip netns exec}, which execs the
     * command in place: the returned process's pid is the command's own (signals reach it).
     */
    public Process exec(List<String> command) throws IOException {
        return new ProcessBuilder(execCommand(command)).start();
    }

    /** Runs a short administrative command in this namespace (via {@link Commands#run}); returns its stdout. */
    public String run(List<String> command) {
        return Commands.run(execCommand(command));
    }

    /** Deletes the veth pair and the namespace. Idempotent. */
    @Override
    public void close() {
        deleteIfExists(run, node);
    }

    @Override
    public String toString() {
        return name + "(" + address() + ")";
    }

    private static void checkId(String what, int value) {
        if (value < 1 || value > ID_MAX) {
            throw new IllegalArgumentException(what + " must be between 1 and " + ID_MAX + ": " + what + "=" + value);
        }
    }
}
